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

// statter asks the file system what paths are, for one load, with the
// Loader's Stat (os.Stat when nil), and keeps the first stat that failed
// for a reason that says nothing of the path (IsTransient): what the
// load found is then not all the directory holds (Collection.Degraded).
// Any other failure (the path is absent, a loop, no permission) answers
// that the path is neither a file nor a directory, as a read that fails
// so says the file cannot be read.
type statter struct {
	stat   func(string) (fs.FileInfo, error)
	failed string
}

func (s *statter) info(p string) (fs.FileInfo, error) {
	stat := os.Stat
	if s.stat != nil {
		stat = s.stat
	}
	fi, err := stat(p)
	if err != nil && IsTransient(err) && s.failed == "" {
		s.failed = "cannot stat " + p + ": " + errText(err)
	}
	return fi, err
}

// isDir follows symbolic links.
func (s *statter) isDir(p string) bool {
	fi, err := s.info(p)
	return err == nil && fi.IsDir()
}

// isFile follows symbolic links.
func (s *statter) isFile(p string) bool {
	fi, err := s.info(p)
	return err == nil && fi.Mode().IsRegular()
}
