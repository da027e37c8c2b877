//go:build !linux && !darwin

package main

import (
	"errors"
	"syscall"
)

// processAlive reports whether pid names a process (a zombie counts as
// one here).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// daemonProcess reports false: without a way to read another process's
// program, a pid file alone is not trusted enough to signal.
func daemonProcess(int) bool { return false }
