//go:build unix

package service

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// tryLockFile takes an exclusive lock on f without waiting: false, nil
// when another process holds it.
func tryLockFile(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// detachedProcess puts a child in a session of its own, so that a
// terminal's hangup never reaches it.
func detachedProcess() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// terminate asks process pid to stop; one already gone is not an error.
func terminate(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
