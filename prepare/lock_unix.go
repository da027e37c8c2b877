//go:build unix

package prepare

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes an flock(2) lock on f without blocking, and reports whether
// it did; false with a nil error means another open file holds it.
func tryLock(f *os.File, shared bool) (bool, error) {
	how := unix.LOCK_EX
	if shared {
		how = unix.LOCK_SH
	}
	err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK), errors.Is(err, unix.EINTR):
		return false, nil
	}
	return false, err
}

// unlockFile releases the lock on f; closing f would too.
func unlockFile(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
