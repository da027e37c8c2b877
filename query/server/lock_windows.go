//go:build windows

package server

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive LockFileEx lock on the first byte of name,
// creating it. The lock lasts until the returned file is closed or the
// process ends; the file is never read or written, so the locked byte
// blocks nothing else.
func lockFile(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	flags := uint32(windows.LOCKFILE_EXCLUSIVE_LOCK | windows.LOCKFILE_FAIL_IMMEDIATELY)
	if err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, new(windows.Overlapped)); err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
			return nil, fmt.Errorf("lock %s: held by another server: %w", name, ErrInUse)
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return f, nil
}

// refused reports a dial error that means no server listens on the socket
// (Winsock's WSAECONNREFUSED for an AF_UNIX socket file left behind).
func refused(err error) bool {
	return errors.Is(err, windows.WSAECONNREFUSED) || errors.Is(err, syscall.ECONNREFUSED)
}
