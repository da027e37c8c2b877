//go:build unix

package discovery_test

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// TestLoaderReadsWithoutStat holds the Loader's own reader, which opens a
// file without a stat first, to what it reports with a stat first (as it
// does for a ReadFile of the caller's): the same Facts for files that are
// missing, not regular, too large or fine, and OnRead sees every file
// read.
func TestLoaderReadsWithoutStat(t *testing.T) {
	dir := t.TempDir()
	w := func(rel, s string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w("pyproject.toml", "[project]\nname = \"c\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
	w("agents/a.md", "---\nname: a\ndescription: A\n---\n@c:context/x.md\n")
	w("agents/big.md", "---\nname: big\ndescription: "+strings.Repeat("b", 200)+"\n---\n")
	w("context/x.md", "see @c:agents/a.md\n")
	fifo := filepath.Join(dir, "agents", "fifo.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	sock := filepath.Join(dir, "agents", "sock.md")
	if l, err := net.Listen("unix", sock); err == nil {
		defer l.Close()
	}
	if err := os.Symlink(os.DevNull, filepath.Join(dir, "agents", "null.md")); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		filepath.Join(dir, "pyproject.toml"), filepath.Join(dir, "agents", "a.md"), filepath.Join(dir, "agents", "big.md"),
		filepath.Join(dir, "context", "x.md"), fifo, sock, filepath.Join(dir, "agents", "null.md"),
		filepath.Join(dir, "agents", "missing.md"), filepath.Join(dir, "context"),
	}
	const limit = 100
	seen := map[string]int{}
	own := &discovery.Loader{MaxFileSize: limit, OnRead: func(p string, src []byte) { seen[p] += len(src) }}
	theirs := &discovery.Loader{MaxFileSize: limit, ReadFile: func(p string) ([]byte, error) { return syntax.ReadFile(p, limit) }}
	for _, p := range paths {
		k := discovery.KindAgent
		switch {
		case strings.HasSuffix(p, ".toml"):
			k = ""
		case strings.Contains(p, "context"):
			k = discovery.KindContext
		}
		got, want := discovery.AnalyzeWith(own, p, k), discovery.AnalyzeWith(theirs, p, k)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: without a stat\n%+v\nwith one\n%+v", p, got, want)
		}
	}
	for _, rel := range []string{"pyproject.toml", "agents/a.md", "context/x.md"} {
		if seen[filepath.Join(dir, rel)] == 0 {
			t.Errorf("OnRead did not see %s", rel)
		}
	}
	if len(seen) != 3 {
		t.Errorf("OnRead saw %d files, want 3: %v", len(seen), seen)
	}
}
