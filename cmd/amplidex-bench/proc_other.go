//go:build !unix

package main

import "syscall"

// ownGroup leaves a child in the bench's process group: this system has
// no process groups to give it.
func ownGroup() *syscall.SysProcAttr { return nil }
