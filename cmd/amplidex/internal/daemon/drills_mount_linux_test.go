package daemon_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of the given size on dir, skipping the test
// when the process may not mount, and unmounts it in the test's cleanup.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := tryTmpfs(t, dir, size); err != nil {
		t.Skipf("cannot mount a tmpfs on %s (needs root and a kernel that allows it): %v", dir, err)
	}
}

// tryTmpfs mounts a tmpfs of the given size on dir, or says why it
// cannot; the test's cleanup unmounts it.
func tryTmpfs(t *testing.T, dir, size string) error {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		return err
	}
	t.Cleanup(func() { unmount(t, dir) })
	return nil
}

// bindReadOnly mounts src on dst read-only, or reports why it cannot. The
// test's cleanup unmounts it.
func bindReadOnly(t *testing.T, src, dst string) error {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s on %s: %w", src, dst, err)
	}
	t.Cleanup(func() { unmount(t, dst) })
	if err := syscall.Mount("", dst, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("remount %s read-only: %w", dst, err)
	}
	probe := filepath.Join(dst, ".probe")
	err := os.WriteFile(probe, nil, 0o644)
	if err == nil {
		os.Remove(probe)
		return fmt.Errorf("%s is writable after a read-only remount", dst)
	}
	if !errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("write probe in %s: %v, want EROFS", dst, err)
	}
	return nil
}

// unmount unmounts dir, lazily when it is still busy.
func unmount(t *testing.T, dir string) {
	if err := syscall.Unmount(dir, 0); err != nil {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	}
}
