//go:build unix

package lint

import (
	"errors"
	"os"
	"syscall"
)

// openToFix opens the regular file at path, a real path, to read and
// write it: never through a symbolic link put in its place, never
// blocking on a FIFO, never making a terminal the process's own.
func openToFix(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

// isReadOnlyFS reports whether err says the file system is read-only.
func isReadOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }

// isLoop reports whether err says the path's last part is a symbolic
// link (which openToFix does not follow).
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
