//go:build !linux && !darwin && !windows

package sockos

import (
	"errors"
	"net"
)

// PeerUID reports that this system gives no peer credentials, so every
// connection is refused.
func PeerUID(*net.UnixConn) (int, error) {
	return -1, errors.New("peer credentials are not supported on this system")
}

// PeerPID reports that the peer's process is not known.
func PeerPID(*net.UnixConn) int { return 0 }
