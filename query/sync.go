package query

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/amplidex/amplidex/query/internal/lines"
	"github.com/amplidex/amplidex/query/internal/trust"
)

// syncReadBuffer is the buffer a SyncClient reads answers through; a
// longer answer is gathered in a buffer of its own.
const syncReadBuffer = 4 << 10

// SyncClient asks a server one question at a time, on the calling
// goroutine: it writes the request and reads the answer itself, with no
// goroutine and no buffer beyond the answer. It is what a command that
// asks one question uses: a Client starts a reader and a writer, for
// callers that ask concurrently or subscribe. A SyncClient is not safe for
// concurrent use; a question given up on (its context ended) ends the
// connection, and every later one fails.
type SyncClient struct {
	path        string
	nc          *net.UnixConn
	lr          lines.Reader
	maxResponse int
	// build is the Key of the build every request names (RequireBuild),
	// "" for none.
	build  string
	nextID uint64
	// err, once set, ended the connection.
	err error
}

// DialSync connects to the server on socketPath as Dial does, with the
// same checks and errors, for questions asked one at a time (see
// SyncClient).
func DialSync(ctx context.Context, socketPath string) (*SyncClient, error) {
	return dialSyncWith(ctx, socketPath, trust.System(), MaxResponseSize)
}

func dialSyncWith(ctx context.Context, socketPath string, t trust.User, maxResponse int) (*SyncClient, error) {
	path, err := checkedPath(socketPath, t)
	if err != nil {
		return nil, err
	}
	nc, err := dialChecked(ctx, path, t)
	if err != nil {
		return nil, err
	}
	return &SyncClient{path: path, nc: nc, maxResponse: maxResponse,
		lr: lines.Reader{R: bufio.NewReaderSize(nc, syncReadBuffer), Max: maxResponse}}, nil
}

// RequireBuild makes every request sent from now on name b, as
// Client.RequireBuild does.
func (s *SyncClient) RequireBuild(b Build) {
	s.build = ""
	if b != (Build{}) {
		s.build = b.Key()
	}
}

// Ask sends m with params p on s and returns the answer, as Call does on a
// Client: an error response as an *Error, a lost connection as an error
// wrapping ErrNoDaemon, and the context's error once ctx ends.
func Ask[P, R any](ctx context.Context, s *SyncClient, m *Method[P, R], p P) (R, Clock, error) {
	var r R
	clock, err := s.Call(ctx, m.name, p, &r)
	return r, clock, err
}

// Call sends method with params (nil sends none) and reads the answer into
// result unless result is nil, as Client.Call does.
func (s *SyncClient) Call(ctx context.Context, method string, params, result any) (Clock, error) {
	if s.err != nil {
		return Clock{}, fmt.Errorf("call %s: %w", method, s.err)
	}
	raw, err := encodeParams(params)
	if err != nil {
		return Clock{}, fmt.Errorf("call %s: %w", method, err)
	}
	s.nextID++
	line, err := encodeRequest(strconv.AppendUint(nil, s.nextID, 10), method, raw, s.build)
	if err != nil {
		return Clock{}, fmt.Errorf("call %s: %w", method, err)
	}
	// The context's end interrupts the write or the read in progress; the
	// connection is then in no state for another question.
	stop := context.AfterFunc(ctx, func() { s.nc.SetDeadline(time.Unix(1, 0)) })
	answer, err := s.exchange(line)
	if !stop() && err == nil {
		s.err = ctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		s.err = err
		return Clock{}, fmt.Errorf("call %s: %w", method, err)
	}
	if answer == nil {
		return Clock{}, fmt.Errorf("answer from %s longer than %d bytes: %w", s.path, s.maxResponse, ErrResponseTooLarge)
	}
	return decodeResponse(answer, method, result)
}

// exchange writes a request line and reads the line of its answer: nil for
// one too long to take, which is discarded. An error ends the connection.
func (s *SyncClient) exchange(request []byte) ([]byte, error) {
	if _, err := s.nc.Write(request); err != nil {
		// The server may have said why it closed (a forbidden answer,
		// say); read it, briefly.
		s.nc.SetReadDeadline(time.Now().Add(time.Second))
		if line, rerr := s.readLine(); rerr == nil {
			return line, nil
		}
		return nil, s.lost(err)
	}
	line, err := s.readLine()
	if errors.Is(err, ErrLineTooLong) {
		return nil, nil
	}
	if err != nil {
		return nil, s.lost(err)
	}
	return line, nil
}

// readLine returns the next line that is not empty.
func (s *SyncClient) readLine() ([]byte, error) {
	for {
		line, _, err := s.lr.Next()
		if err != nil || len(line) > 0 {
			return line, err
		}
	}
}

// lost describes a connection that ended under s.
func (s *SyncClient) lost(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return fmt.Errorf("connection to %s lost: %w: %w", s.path, ErrNoDaemon, err)
}

// Close closes the connection. It is safe to call more than once.
func (s *SyncClient) Close() error {
	if s.err == nil {
		s.err = ErrClosed
	}
	s.nc.Close()
	return nil
}
