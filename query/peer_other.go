//go:build !linux && !darwin && !windows

package query

import (
	"errors"
	"net"
)

// peerUID reports that this system gives no peer credentials, so every
// connection is refused.
func peerUID(*net.UnixConn) (int, error) {
	return -1, errors.New("peer credentials are not supported on this system")
}

// peerPID reports that the peer's process is not known.
func peerPID(*net.UnixConn) int { return 0 }
