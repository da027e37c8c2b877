//go:build windows

package sockos

import (
	"net"
	"os"
)

// PeerUID reports the process's own id: Windows gives no credentials of
// an AF_UNIX peer, and only the user (and SYSTEM) can reach the socket,
// whose directory's access list lets in no one else (see MakePrivate).
func PeerUID(*net.UnixConn) (int, error) { return os.Geteuid(), nil }

// PeerPID reports that the peer's process is not known: Windows gives no
// credentials of an AF_UNIX peer.
func PeerPID(*net.UnixConn) int { return 0 }
