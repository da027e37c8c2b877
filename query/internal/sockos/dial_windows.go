//go:build windows

package sockos

import (
	"errors"

	"golang.org/x/sys/windows"
)

// QueueFull reports a dial error that means a server listens but its
// backlog is full.
func QueueFull(err error) bool { return errors.Is(err, windows.WSAEWOULDBLOCK) }
