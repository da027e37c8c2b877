package discovery

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// IsTransient reports an error that says nothing about what the file
// system holds: the process or the system ran out of descriptors, memory
// or buffers, a call was interrupted, or the device failed for now. What
// such a read would have found is not known; what was known before it
// stands until a later read succeeds.
func IsTransient(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EAGAIN,
		syscall.EINTR, syscall.EIO, syscall.ENOBUFS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// listingFailed reports an error of a directory listing that leaves what
// the directory holds unknown: every error but the directory's absence.
// A directory that cannot be listed is not an empty one.
func listingFailed(err error) bool {
	return err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR)
}

// readDir lists dir with the Loader's ReadDir, os.ReadDir when nil.
func (l *Loader) readDir(dir string) ([]os.DirEntry, error) {
	if l.ReadDir != nil {
		return l.ReadDir(dir)
	}
	return os.ReadDir(dir)
}
