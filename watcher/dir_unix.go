//go:build unix

package watcher

import (
	"io/fs"
	"os"
	"syscall"
)

// openDir opens the directory dir for listing. It refuses anything but a
// directory (O_DIRECTORY), so a FIFO put in a directory's place never
// blocks it, and it keeps the descriptor out of the runtime's poller: os.Open
// would try to register it there, a wasted system call for every directory
// of a walk.
func openDir(dir string) (*os.File, error) {
	for {
		fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
		return os.NewFile(uintptr(fd), dir), nil
	}
}
