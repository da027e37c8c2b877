//go:build unix

package sockos

import (
	"errors"
	"syscall"
)

// QueueFull reports a dial error that means a server listens but its
// backlog is full.
func QueueFull(err error) bool { return errors.Is(err, syscall.EAGAIN) }
