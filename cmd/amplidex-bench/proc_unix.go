//go:build unix

package main

import "syscall"

// ownGroup puts a child in a process group of its own, so that a
// terminal's Ctrl-C reaches the bench, which stops its children itself.
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
