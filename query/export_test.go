package query

import (
	"bufio"
	"net"
)

// SetPeerUID replaces how s learns the uid of a connecting process; call it
// before Listen.
func SetPeerUID(s *Server, peerUID func(*net.UnixConn) (int, error)) {
	s.peerUID = peerUID
}

// ReadLine reads one line of at most max bytes, as both ends do.
func ReadLine(r *bufio.Reader, max int) ([]byte, error) {
	return readLine(r, max)
}

// MaxSocketPath is the longest socket path Listen and Dial accept.
const MaxSocketPath = maxSocketPath
