//go:build !linux && !darwin

package service

import "os"

// ProcessAlive reports whether pid names a process, as far as this
// platform can tell without signals: whether it can be found.
func ProcessAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// DaemonProcess reports false: without a way to read another process's
// program, a pid file alone is not trusted enough to signal.
func DaemonProcess(int) bool { return false }
