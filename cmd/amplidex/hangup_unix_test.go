//go:build unix

package main

import "syscall"

// hangUp sends SIGHUP to the process pid.
func hangUp(pid int) error { return syscall.Kill(pid, syscall.SIGHUP) }
