//go:build unix

package prepare

import (
	"errors"

	"golang.org/x/sys/unix"
)

// processAlive reports whether a process with id pid exists on this
// machine (in this PID namespace), whoever owns it.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
