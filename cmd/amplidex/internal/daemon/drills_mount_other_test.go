//go:build !linux

package daemon_test

import (
	"errors"
	"testing"
)

// errNoMount is what the mount helpers say where mount(2) is Linux's.
var errNoMount = errors.New("mounting file systems is done on Linux only")

// mountTmpfs skips the test: see drills_mount_linux_test.go.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Skipf("cannot mount a tmpfs on %s: %v", dir, errNoMount)
}

// tryTmpfs reports errNoMount.
func tryTmpfs(t *testing.T, dir, size string) error { return errNoMount }

// bindReadOnly reports errNoMount.
func bindReadOnly(t *testing.T, src, dst string) error { return errNoMount }

// unmount does nothing.
func unmount(t *testing.T, dir string) {}
