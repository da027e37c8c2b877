//go:build unix

package service

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// closeOnExec keeps a handed-over descriptor from leaking into what this
// process starts.
func closeOnExec(fd int) { syscall.CloseOnExec(fd) }

// fdOpen reports whether fd is an open descriptor of this process.
func fdOpen(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}
