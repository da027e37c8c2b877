//go:build unix

package server

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive advisory lock on name, creating it. The lock
// lasts until the returned file is closed or the process ends.
func lockFile(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: held by another server: %w", name, ErrInUse)
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return f, nil
}

// refused reports a dial error that means no server listens on the socket.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
