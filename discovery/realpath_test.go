package discovery_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/discovery"
)

// TestRealParentsRemember: a directory's real path is its parent's,
// resolved the first time and remembered after (a parent turned into a
// link later still answers as it was), and a directory whose parent does
// not resolve is resolved whole.
func TestRealParentsRemember(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"real/root/a", "real/root/b", "moved/root/b"} {
		if err := os.MkdirAll(filepath.Join(base, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "real"), filepath.Join(base, "alias")); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	resolvedBase, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	var r discovery.RealParents
	root := filepath.Join(base, "alias", "root")
	if got, err := r.Below(filepath.Join(root, "a")); err != nil || got != filepath.Join(resolvedBase, "real", "root", "a") {
		t.Fatalf("Below(alias/root/a) = %q, %v", got, err)
	}
	// The link now points elsewhere: the remembered parent answers.
	if err := os.Remove(filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "moved"), filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Below(filepath.Join(root, "b")); err != nil || got != filepath.Join(resolvedBase, "real", "root", "b") {
		t.Errorf("Below(alias/root/b) = %q, %v; want the remembered parent's", got, err)
	}
	if _, err := r.Below(filepath.Join(base, "missing", "x")); err == nil {
		t.Error("a directory below a parent that does not resolve resolved")
	}
}
