package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadOnlyIndex starts the daemon on a sound index it cannot write:
// it serves it, registers a project and sees live changes, warns once,
// and moves nothing aside.
func TestReadOnlyIndex(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	d := e.start()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	makeReadOnly(t, e.paths.Index)

	d = e.start()
	c := e.client()
	if e.resolve(c, "a") == nil {
		t.Fatal("collection a does not resolve from a read-only index")
	}
	e.collection(filepath.Join(e.userRoot(), "b"), "b", "1.0.0")
	if e.resolve(c, "b") == nil {
		t.Fatal("a collection added while the index is read-only does not resolve")
	}
	var readOnly, failed int
	for _, w := range d.Status().Warnings {
		if strings.Contains(w, "opened read-only") {
			readOnly++
		}
		if strings.Contains(w, "write failed") {
			failed++
		}
	}
	if readOnly != 1 || failed != 0 {
		t.Errorf("warnings %q: want one about the read-only index and none about failed writes", d.Status().Warnings)
	}
	if kept, _ := filepath.Glob(e.paths.Index + ".corrupt-*"); len(kept) != 0 {
		t.Errorf("a sound read-only index was moved aside: %v", kept)
	}
}

// makeReadOnly makes the file at path read-only: its mode for a user, a
// read-only bind mount over it for root, who may write any file.
func makeReadOnly(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(path, 0o444); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := syscall.Mount(path, path, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("running as root and cannot bind-mount %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(path, 0); err != nil {
			syscall.Unmount(path, syscall.MNT_DETACH)
		}
	})
	if err := syscall.Mount("", path, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("running as root and cannot make the bind mount of %s read-only: %v", path, err)
	}
}
