//go:build !linux && !darwin

package main

import "os"

// processAlive reports whether pid names a process, as far as this
// platform can tell without signals: whether it can be found.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// daemonProcess reports false: without a way to read another process's
// program, a pid file alone is not trusted enough to signal.
func daemonProcess(int) bool { return false }
