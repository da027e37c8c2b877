//go:build windows

package query

import (
	"net"
	"os"
)

// peerUID reports the process's own id: Windows gives no credentials of
// an AF_UNIX peer, and only the user (and administrators) can reach the
// socket, which lives in a directory of the user's profile.
func peerUID(*net.UnixConn) (int, error) { return os.Geteuid(), nil }
