//go:build windows

package query

import (
	"net"
	"os"
)

// peerUID reports the process's own id: Windows gives no credentials of
// an AF_UNIX peer, and only the user (and SYSTEM) can reach the socket,
// whose directory's access list lets in no one else (see makePrivate).
func peerUID(*net.UnixConn) (int, error) { return os.Geteuid(), nil }

// peerPID reports that the peer's process is not known: Windows gives no
// credentials of an AF_UNIX peer.
func peerPID(*net.UnixConn) int { return 0 }
