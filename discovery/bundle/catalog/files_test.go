package catalog_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// TestOvertakenReadNotKept: a file read while a Forget of it is made is
// answered with what was read, but not kept: the next Parse reads again.
func TestOvertakenReadNotKept(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "b.yaml")
	write(t, p, "bundle: {name: old}\n")
	f := catalog.NewFiles(0)
	reading, release := make(chan struct{}), make(chan struct{})
	catalog.SetRead(f, func(path string, limit int64) ([]byte, error) {
		b, err := syntax.ReadFile(path, limit)
		if reading != nil {
			close(reading)
			<-release
			reading = nil
		}
		return b, err
	})
	done := make(chan *bundle.File)
	go func() {
		bf, _ := f.Parse(p, bundle.KindBundle)
		done <- bf
	}()
	<-reading
	write(t, p, "bundle: {name: new}\n")
	f.Forget([]string{p}, nil)
	close(release)
	if bf := <-done; bf.Bundle.Name != "old" {
		t.Fatalf("the overtaken read answered %q", bf.Bundle.Name)
	}
	if bf, _ := f.Parse(p, bundle.KindBundle); bf.Bundle.Name != "new" {
		t.Errorf("after the Forget, Parse answers %q: the overtaken read was kept", bf.Bundle.Name)
	}
}

// TestForgetDirectory: a directory's Forget drops what is known below it
// (a directory removed is reported by its own path alone), and the
// listing of the directory that held it.
func TestForgetDirectory(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	p := filepath.Join(sub, "x.md")
	write(t, p, "x")
	f := catalog.NewFiles(0)
	if f.Stat(p) != compose.RegularFile {
		t.Fatal("no file")
	}
	if names, _ := f.List(dir); len(names) != 1 {
		t.Fatalf("List = %v", names)
	}
	if err := os.RemoveAll(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	affected := f.Forget([]string{filepath.Join(dir, "a")}, nil)
	for _, want := range []string{dir, filepath.Join(dir, "a"), sub, p} {
		found := false
		for _, a := range affected {
			found = found || a == want
		}
		if !found {
			t.Errorf("Forget's affected paths %v lack %s", affected, want)
		}
	}
	if f.Stat(p) != compose.Missing {
		t.Error("the file below the removed directory is still known")
	}
	if names, _ := f.List(dir); len(names) != 0 {
		t.Errorf("List = %v after the removal", names)
	}
}

// TestStale: Stale names the paths whose stat moved, and only those.
func TestStale(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	write(t, a, "a")
	write(t, b, "b")
	f := catalog.NewFiles(0)
	for _, p := range []string{a, b, c} {
		f.Stat(p)
	}
	write(t, b, "bigger")
	write(t, c, "made")
	got := f.Stale([]string{a, b, c, filepath.Join(dir, "unknown")})
	if len(got) != 2 || got[0] != b || got[1] != c {
		t.Errorf("Stale = %v, want [%s %s]", got, b, c)
	}
}
