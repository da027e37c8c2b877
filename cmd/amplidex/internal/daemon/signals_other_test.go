//go:build !unix

package daemon_test

import "syscall"

// sigStop and sigCont have no counterpart here: sending them fails, and
// the drill that stops a daemon fails saying so.
const (
	sigStop = syscall.Signal(-1)
	sigCont = syscall.Signal(-1)
)
