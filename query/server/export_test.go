package server

import (
	"io/fs"
	"net"
)

// SetPeerUID replaces how s learns the uid of a connecting process; call it
// before Listen.
func SetPeerUID(s *Server, peerUID func(*net.UnixConn) (int, error)) {
	s.trust.PeerUID = peerUID
}

// SetPeerPID replaces how s learns the process at the other end of a
// connection; call it before Listen.
func SetPeerPID(s *Server, peerPID func(*net.UnixConn) int) { s.trust.PeerPID = peerPID }

// Hooks replace what a Server learns from the system, so that tests can
// play another user. Zero fields keep the system's answers.
type Hooks struct {
	// TempDir holds the fallback socket directories instead of /tmp.
	TempDir string
	// Owner returns the uid owning the file at path.
	Owner func(path string, fi fs.FileInfo) int
}

// SetHooks applies h to s; call it before Listen.
func SetHooks(s *Server, h Hooks) {
	if h.TempDir != "" {
		s.trust.Tmp = h.TempDir
	}
	if h.Owner != nil {
		s.trust.Owner = h.Owner
	}
}

// BytesInFlight returns the bytes of requests s holds now and the most it
// ever held at once.
func BytesInFlight(s *Server) (used, peak int64) {
	return s.budget.Usage()
}

// AnswerBytesInFlight returns the bytes of answers marshalled whole that s
// holds now, and the most it ever held at once.
func AnswerBytesInFlight(s *Server) (used, peak int64) {
	return s.answers.Usage()
}

// Load returns the connections s counts as open and the requests it
// counts as being answered.
func Load(s *Server) (conns, requests int) { return s.load.usage() }
