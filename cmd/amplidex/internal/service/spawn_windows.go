//go:build windows

package service

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// tryLockFile takes an exclusive lock on f without waiting: false, nil
// when another process holds it.
func tryLockFile(f *os.File) (bool, error) {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

// detachedProcess starts a child without a console and in a process group
// of its own, so that closing the terminal does not end it.
func detachedProcess() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS}
}

// terminate ends process pid: Windows has no SIGTERM to ask with, so the
// socket's shutdown method is the polite way, and this the last resort.
func terminate(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	defer p.Release()
	return p.Kill()
}
