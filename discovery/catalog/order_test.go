package catalog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
)

// TestOlderLoadNeverWins reads one directory twice at once: the read that
// started first is held back until the second has been applied, and must
// not replace it.
func TestOlderLoadNeverWins(t *testing.T) {
	deadline(t, 2*time.Minute)
	home := t.TempDir()
	dir := filepath.Join(home, ".amplifier", "collections", "one")
	py := filepath.Join(dir, "pyproject.toml")
	write := func(version string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(py, []byte(fmt.Sprintf("[project]\nname = \"one\"\nversion = %q\ndescription = \"d\"\n", version)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1.0.0")
	var (
		mu      sync.Mutex
		hold    = false
		held    = make(chan struct{})
		release = make(chan struct{})
	)
	loader := &discovery.Loader{ReadFile: func(p string) ([]byte, error) {
		b, err := os.ReadFile(p)
		mu.Lock()
		h := hold && p == py
		hold = false
		mu.Unlock()
		if h {
			close(held)
			<-release
		}
		return b, err
	}}
	cat := catalog.New(catalog.Options{Home: home, Loader: loader})
	cat.AddProject("")
	write("2.0.0")
	mu.Lock()
	hold = true
	mu.Unlock()
	root := filepath.Dir(dir)
	done := make(chan struct{})
	go func() {
		defer close(done)
		cat.Update(catalog.Change{Root: root, Dir: dir}) // reads 2.0.0, then waits
	}()
	<-held
	write("3.0.0")
	st, _ := cat.Update(catalog.Change{Root: root, Dir: dir})
	v, _ := st.View("")
	if got := v.Set.Lookup("one").Version; got != "3.0.0" {
		t.Fatalf("after the second read: version %s, want 3.0.0", got)
	}
	close(release)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the first Update never returned")
	}
	v, _ = cat.State().View("")
	if got := v.Set.Lookup("one").Version; got != "3.0.0" {
		t.Fatalf("after the older read applied: version %s, want 3.0.0 (the older read won)", got)
	}
}

// TestDelta checks what a change reports: the directories whose
// diagnostics may have changed, in the views that hold them, and the
// files that went.
func TestDelta(t *testing.T) {
	home := t.TempDir()
	proj := t.TempDir()
	user := filepath.Join(home, ".amplifier", "collections")
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	py := func(name string) string {
		return fmt.Sprintf("[project]\nname = %q\nversion = \"1.0.0\"\ndescription = \"d\"\n", name)
	}
	write(filepath.Join(user, "base", "pyproject.toml"), py("base"))
	write(filepath.Join(user, "base", "context", "a.md"), "A\n")
	write(filepath.Join(user, "user", "pyproject.toml"), py("user"))
	write(filepath.Join(user, "user", "context", "u.md"), "See @base:context/a.md\n")
	write(filepath.Join(user, "other", "pyproject.toml"), py("other"))
	cat := catalog.New(catalog.Options{Home: home})
	cat.AddProject("")
	cat.AddProject(proj)

	if err := os.Remove(filepath.Join(user, "base", "context", "a.md")); err != nil {
		t.Fatal(err)
	}
	_, d := cat.Update(catalog.Change{Root: user, Dir: filepath.Join(user, "base")})
	want := []string{filepath.Join(user, "base"), filepath.Join(user, "user")}
	for _, project := range []string{"", proj} {
		if got := d.Views[project].Dirs; !slices.Equal(got, want) {
			t.Errorf("project %q: dirs %v, want %v (other is untouched)", project, got, want)
		}
	}
	if want := []string{filepath.Join(user, "base", "context", "a.md")}; !slices.Equal(d.Gone, want) {
		t.Errorf("gone %v, want %v", d.Gone, want)
	}
	v, _ := cat.State().View(proj)
	var codes []string
	for _, dg := range v.Diagnostics() {
		codes = append(codes, dg.Code)
	}
	if !slices.Equal(codes, []string{diag.CodeMentionUnresolved}) {
		t.Errorf("diagnostics %v, want one unresolved mention", codes)
	}
}
