package discovery_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/amplidex/amplidex/discovery"
)

// TestStatFailureDegrades: a stat that fails for a reason that says
// nothing of the path (EIO, ENOMEM) while a collection's layout is told
// or before a file is read leaves the load incomplete (Degraded, naming
// the path), never a collection of another layout or no collection at
// all; a stat that says the path is not there or cannot be reached
// (EACCES) is an answer, as a read's is.
func TestStatFailureDegrades(t *testing.T) {
	root := t.TempDir()
	write := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	py := "[project]\nname = \"nested\"\nversion = \"1.0.0\"\ndescription = \"d\"\n"
	nested := filepath.Join(root, "nested")
	write(filepath.Join(nested, "pyproject.toml"), py)
	write(filepath.Join(nested, "nested", "__init__.py"), "")
	write(filepath.Join(nested, "nested", "agents", "a.md"), "---\nmeta:\n  name: a\n  description: d\n---\n")
	linked := filepath.Join(root, "linked")
	write(filepath.Join(root, "elsewhere", "pyproject.toml"), "[project]\nname = \"linked\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
	if err := os.MkdirAll(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere", "pyproject.toml"), filepath.Join(linked, "pyproject.toml")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	r := discovery.Root{Kind: discovery.RootUser, Path: root}

	for _, tc := range []struct {
		name     string
		dir      string
		failing  string
		errno    syscall.Errno
		degraded bool
		layout   discovery.Layout // when not degraded
	}{
		{"no fault", nested, "", 0, false, discovery.LayoutNested},
		{"the package's resource directory, EIO", nested, filepath.Join(nested, "nested", "agents"), syscall.EIO, true, ""},
		{"the package's marker, ENOMEM", nested, filepath.Join(nested, "nested", "__init__.py"), syscall.ENOMEM, true, ""},
		{"the package's marker, EACCES", nested, filepath.Join(nested, "nested", "__init__.py"), syscall.EACCES, false, discovery.LayoutNone},
		{"a document before it is read, EIO", nested, filepath.Join(nested, "nested", "agents", "a.md"), syscall.EIO, true, ""},
		{"linked metadata, EIO", linked, filepath.Join(linked, "pyproject.toml"), syscall.EIO, true, ""},
		{"linked metadata, no fault", linked, "", 0, false, discovery.LayoutNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stat := func(p string) (fs.FileInfo, error) {
				if p == tc.failing {
					return nil, &fs.PathError{Op: "stat", Path: p, Err: tc.errno}
				}
				return os.Stat(p)
			}
			c := (&discovery.Loader{Stat: stat, ReadFile: func(p string) ([]byte, error) { return os.ReadFile(p) }}).LoadCandidate(r, tc.dir)
			if c == nil {
				t.Fatal("no collection")
			}
			switch {
			case tc.degraded && (c.Degraded == "" || !strings.Contains(c.Degraded, tc.failing)):
				t.Errorf("Degraded = %q, want it to name %s", c.Degraded, tc.failing)
			case !tc.degraded && c.Degraded != "":
				t.Errorf("Degraded = %q, want a complete load", c.Degraded)
			case !tc.degraded && c.Layout != tc.layout:
				t.Errorf("layout %q, want %q", c.Layout, tc.layout)
			}
		})
	}

	// A candidate that cannot be listed, and whose stat fails too, may be
	// a directory: a degraded collection, not none.
	fail := func(string) ([]os.DirEntry, error) {
		return nil, &fs.PathError{Op: "open", Path: nested, Err: syscall.EMFILE}
	}
	statFails := func(p string) (fs.FileInfo, error) { return nil, &fs.PathError{Op: "stat", Path: p, Err: syscall.EIO} }
	if c := (&discovery.Loader{ReadDir: fail, Stat: statFails}).LoadCandidate(r, nested); c == nil || c.Degraded == "" {
		t.Errorf("a candidate neither listed nor stat'ed: %+v, want a degraded collection", c)
	}
	if c := (&discovery.Loader{ReadDir: fail}).LoadCandidate(r, filepath.Join(root, "nowhere")); c != nil {
		t.Errorf("a candidate that is not there: %+v, want none", c)
	}
}
