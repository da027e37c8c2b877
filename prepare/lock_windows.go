//go:build windows

package prepare

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// tryLock takes a LockFileEx lock on the first byte of f without blocking,
// and reports whether it did; false with a nil error means another handle
// holds it. Lock files are never read or written, so locking a byte of
// them blocks nothing else.
func tryLock(f *os.File, shared bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if !shared {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, new(windows.Overlapped))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return false, nil
	}
	return false, err
}

// unlockFile releases the lock on f. Windows releases the locks of a closed
// handle only "when resources allow", so they are released here first.
func unlockFile(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}
