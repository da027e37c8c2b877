//go:build unix

package main

import "syscall"

// closeOnExec keeps a handed-over descriptor from leaking into what this
// process starts.
func closeOnExec(fd int) { syscall.CloseOnExec(fd) }
