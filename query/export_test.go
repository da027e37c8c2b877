package query

import (
	"context"
	"io/fs"
	"net"

	"github.com/amplidex/amplidex/query/internal/trust"
)

// Hooks replace what a Client learns from the system, so that
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

func (h Hooks) apply(t *trust.User) {
	if h.TempDir != "" {
		t.Tmp = h.TempDir
	}
	if h.Owner != nil {
		t.Owner = h.Owner
	}
	if h.PeerUID != nil {
		t.PeerUID = h.PeerUID
	}
}

// DialHooked is Dial with h applied to the client.
func DialHooked(ctx context.Context, path string, h Hooks) (*Client, error) {
	t := trust.System()
	h.apply(&t)
	maxResponse := MaxResponseSize
	if h.MaxResponse > 0 {
		maxResponse = h.MaxResponse
	}
	return dialWith(ctx, path, t, maxResponse)
}

// EncodeRequest is the request line a client writes, newline included.
func EncodeRequest(id []byte, method string, params []byte, build string) ([]byte, error) {
	return encodeRequest(id, method, params, build)
}

// DialSyncHooked is DialSync with h applied to the client.
func DialSyncHooked(ctx context.Context, path string, h Hooks) (*SyncClient, error) {
	t := trust.System()
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
