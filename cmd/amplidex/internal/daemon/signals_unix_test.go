//go:build unix

package daemon_test

import "syscall"

// sigStop and sigCont stop and resume a child daemon.
const (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)
