package query

import (
	"bufio"
	"context"
	"io/fs"
	"net"

	"github.com/amplidex/amplidex/query/internal/sockos"
)

// SetPeerUID replaces how s learns the uid of a connecting process; call it
// before Listen.
func SetPeerUID(s *Server, peerUID func(*net.UnixConn) (int, error)) {
	s.trust.peerUID = peerUID
}

// Hooks replace what a Server or a Client learns from the system, so that
// tests can play another user. Zero fields keep the system's answers.
type Hooks struct {
	// TempDir holds the fallback socket directories instead of /tmp.
	TempDir string
	// Owner returns the uid owning the file at path.
	Owner func(path string, fi fs.FileInfo) int
	// PeerUID returns the uid at the other end of a connection.
	PeerUID func(*net.UnixConn) (int, error)
	// MaxResponse replaces MaxResponseSize for a Client.
	MaxResponse int
}

func (h Hooks) apply(t *trust) {
	if h.TempDir != "" {
		t.tmp = h.TempDir
	}
	if h.Owner != nil {
		t.owner = h.Owner
	}
	if h.PeerUID != nil {
		t.peerUID = h.PeerUID
	}
}

// SetHooks applies h to s; call it before Listen.
func SetHooks(s *Server, h Hooks) {
	h.apply(&s.trust)
}

// DialHooked is Dial with h applied to the client.
func DialHooked(ctx context.Context, path string, h Hooks) (*Client, error) {
	t := systemTrust()
	h.apply(&t)
	maxResponse := MaxResponseSize
	if h.MaxResponse > 0 {
		maxResponse = h.MaxResponse
	}
	return dialWith(ctx, path, t, maxResponse)
}

// FileOwner is the owner of a file as the system tells it.
func FileOwner(path string, fi fs.FileInfo) int {
	return sockos.FileOwner(path, fi)
}

// BytesInFlight returns the bytes of requests s holds now and the most it
// ever held at once.
func BytesInFlight(s *Server) (used, peak int64) {
	return s.budget.usage()
}

// AnswerBytesInFlight returns the bytes of answers marshalled whole that s
// holds now, and the most it ever held at once.
func AnswerBytesInFlight(s *Server) (used, peak int64) {
	return s.answers.usage()
}

// ReadLine reads one line of at most max bytes, as both ends do.
func ReadLine(r *bufio.Reader, max int) ([]byte, error) {
	lr := &lineReader{r: r, max: max}
	line, _, err := lr.next()
	return line, err
}

// MaxSocketPath is the longest socket path Listen and Dial accept.
const MaxSocketPath = maxSocketPath

// FallbackDirs is how many fallback socket directories Listen and Dial try.
const FallbackDirs = fallbackDirs

// EncodeRequest is the request line a client writes, newline included.
func EncodeRequest(id []byte, method string, params []byte, build string) ([]byte, error) {
	return encodeRequest(id, method, params, build)
}

// DialSyncHooked is DialSync with h applied to the client.
func DialSyncHooked(ctx context.Context, path string, h Hooks) (*SyncClient, error) {
	t := systemTrust()
	h.apply(&t)
	maxResponse := MaxResponseSize
	if h.MaxResponse > 0 {
		maxResponse = h.MaxResponse
	}
	return dialSyncWith(ctx, path, t, maxResponse)
}

// EncodeParams is how a client writes a request's params.
func EncodeParams(params any) ([]byte, error) { return encodeParams(params) }

// DecodeResponse is how a client reads an answer line into result.
func DecodeResponse(line []byte, method string, result any) (Clock, error) {
	return decodeResponse(line, method, result)
}

// DecodedWithoutReflection reports whether an answer into result is
// copied from interface values rather than decoded with reflection.
func DecodedWithoutReflection(result any) bool { return valueTarget(result) != nil }

// Load returns the connections s counts as open and the requests it
// counts as being answered.
func Load(s *Server) (conns, requests int) { return s.load.usage() }

// SetPeerPID replaces how s learns the process at the other end of a
// connection; call it before Listen.
func SetPeerPID(s *Server, peerPID func(*net.UnixConn) int) { s.trust.peerPID = peerPID }
