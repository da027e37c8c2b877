// Package querytest serves the tests of the socket's two ends, the client
// (query) and the server (query/server): a Handler of test methods, a
// server on a fresh socket, clients, and a connection that speaks the
// protocol by hand. Only tests import it.
package querytest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/sockos"
	"github.com/amplidex/amplidex/query/server"
)

// Timeout bounds every wait in the tests; it is never what a test
// measures.
const Timeout = 30 * time.Second

// Handler is the query.Handler the tests serve. Its methods:
//
//	echo       returns its params
//	add        {"a","b"} → a+b
//	fail       a not-found *Error
//	wrapped    a wrapped invalid-params *Error
//	plain      a plain error (internal)
//	panic      panics
//	block      waits for its context, after signalling on Entered
//	watch      a stream: sends params.count notifications, then waits for
//	           its context and tells StreamDone
//	countdown  a stream: sends params.count notifications and ends
//	badstream  a stream that fails with a not-found *Error
type Handler struct {
	*query.Mux
	// Entered hears the name of a blocking method or stream once it runs.
	Entered chan string
	// StreamDone hears how a watch stream ended.
	StreamDone chan error
	// Tick counts the echo calls; Clock stamps it.
	Tick atomic.Uint64
}

// CountParams are the params of the watch and countdown streams.
type CountParams struct {
	Count int `json:"count"`
}

// NewHandler returns a Handler with the methods above.
func NewHandler() *Handler {
	h := &Handler{
		Mux:        query.NewMux(),
		Entered:    make(chan string, 100),
		StreamDone: make(chan error, 100),
	}
	h.Handle("echo", func(ctx context.Context, params json.RawMessage) (any, error) {
		h.Tick.Add(1)
		return params, nil
	})
	h.Handle("add", func(ctx context.Context, params json.RawMessage) (any, error) {
		var p struct{ A, B int }
		if err := query.DecodeParams(params, &p); err != nil {
			return nil, err
		}
		return p.A + p.B, nil
	})
	h.Handle("fail", func(ctx context.Context, params json.RawMessage) (any, error) {
		return nil, query.Errorf(query.CodeNotFound, "no collection named %q", "nope")
	})
	h.Handle("wrapped", func(ctx context.Context, params json.RawMessage) (any, error) {
		return nil, fmt.Errorf("resolve: %w", query.Errorf(query.CodeInvalidParams, "name is empty"))
	})
	h.Handle("plain", func(ctx context.Context, params json.RawMessage) (any, error) {
		return nil, errors.New("disk on fire")
	})
	h.Handle("panic", func(ctx context.Context, params json.RawMessage) (any, error) {
		panic("handler bug")
	})
	h.Handle("block", func(ctx context.Context, params json.RawMessage) (any, error) {
		h.Entered <- "block"
		<-ctx.Done()
		return nil, ctx.Err()
	})
	h.Handle("watch", func(ctx context.Context, params json.RawMessage) (any, error) {
		var p CountParams
		if err := query.DecodeParams(params, &p); err != nil {
			return nil, err
		}
		return &query.Stream{Result: "watching", Run: func(ctx context.Context, send func(any) error) error {
			for i := range p.Count {
				if err := send(i); err != nil {
					h.StreamDone <- err
					return err
				}
			}
			h.Entered <- "watch"
			<-ctx.Done()
			h.StreamDone <- ctx.Err()
			return ctx.Err()
		}}, nil
	})
	h.Handle("countdown", func(ctx context.Context, params json.RawMessage) (any, error) {
		var p CountParams
		if err := query.DecodeParams(params, &p); err != nil {
			return nil, err
		}
		return &query.Stream{Run: func(ctx context.Context, send func(any) error) error {
			for i := p.Count; i > 0; i-- {
				if err := send(i); err != nil {
					return err
				}
			}
			return nil
		}}, nil
	})
	h.Handle("badstream", func(ctx context.Context, params json.RawMessage) (any, error) {
		return &query.Stream{Run: func(ctx context.Context, send func(any) error) error {
			if err := send("first"); err != nil {
				return err
			}
			return query.Errorf(query.CodeNotFound, "the root went away")
		}}, nil
	})
	return h
}

// Clock is the clock the test server stamps responses with.
func (h *Handler) Clock() query.Clock {
	return query.Clock{Start: 1700000000000000000, PID: 4242, Tick: h.Tick.Load()}
}

// SocketPath returns a fresh socket path in a directory the server creates.
func SocketPath(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run", "amplidex.sock")
	if len(p) > sockos.MaxPath {
		dir, err := os.MkdirTemp("", "aq")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		p = filepath.Join(dir, "run", "amplidex.sock")
	}
	return p
}

// PrivateDir returns a new directory of mode 0700, as Dial wants the
// socket's.
func PrivateDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// StartServer serves h on a new socket until the test ends, calling
// setup before Listen.
func StartServer(t testing.TB, h *Handler, setup ...func(*server.Server)) (*server.Server, string) {
	t.Helper()
	path := SocketPath(t)
	s := server.New(h, h.Clock)
	for _, f := range setup {
		f(s)
	}
	if err := s.Listen(path); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, path
}

// DialClient connects a Client that is closed when the test ends.
func DialClient(t testing.TB, path string) *query.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	c, err := query.Dial(ctx, path)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Context ends after Timeout or with the test.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return ctx
}

// RawConn speaks the protocol by hand.
type RawConn struct {
	t testing.TB
	// Conn is the connection, for what the methods do not do.
	Conn net.Conn
	// Reader reads Conn.
	Reader *bufio.Reader
}

// DialRaw connects a RawConn that is closed when the test ends.
func DialRaw(t testing.TB, path string) *RawConn {
	t.Helper()
	nc, err := net.DialTimeout("unix", path, Timeout)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &RawConn{t: t, Conn: nc, Reader: bufio.NewReaderSize(nc, 1<<20)}
}

// Send writes line and its newline.
func (c *RawConn) Send(line string) {
	c.t.Helper()
	c.Conn.SetWriteDeadline(time.Now().Add(Timeout))
	if _, err := c.Conn.Write([]byte(line + "\n")); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// Recv reads one line and decodes it.
func (c *RawConn) Recv() Message {
	c.t.Helper()
	c.Conn.SetReadDeadline(time.Now().Add(Timeout))
	line, err := c.Reader.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("read: %v (got %q)", err, line)
	}
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("decode %q: %v", line, err)
	}
	m.Raw = strings.TrimSpace(string(line))
	return m
}

// ExpectEOF checks that the server closes the connection.
func (c *RawConn) ExpectEOF() {
	c.t.Helper()
	c.Conn.SetReadDeadline(time.Now().Add(Timeout))
	line, err := c.Reader.ReadBytes('\n')
	if err == nil || len(line) > 0 {
		c.t.Fatalf("read %q, %v; want the end of the connection", line, err)
	}
}

// Message is any line a server writes, as a test reads it.
type Message struct {
	ID           json.RawMessage `json:"id"`
	Result       json.RawMessage `json:"result"`
	Error        *query.Error    `json:"error"`
	Clock        string          `json:"clock"`
	Method       string          `json:"method"`
	Subscription json.RawMessage `json:"subscription"`
	Params       json.RawMessage `json:"params"`
	End          bool            `json:"end"`
	// Raw is the line as it came, without its newline.
	Raw string `json:"-"`
}

// WaitNoLeaks waits until the goroutines are back to base and none of
// package query's or query/server's is left, failing with their stacks after a deadline.
func WaitNoLeaks(t testing.TB, base int) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		n := runtime.NumGoroutine()
		ours := PackageGoroutines()
		if n <= base && len(ours) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before; still running:\n%s", n, base, strings.Join(ours, "\n\n"))
		}
		runtime.Gosched()
	}
}

// PackageGoroutines returns the stacks of goroutines running code of
// package query or query/server, or started by it.
func PackageGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var ours []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if (strings.Contains(g, "amplidex/query.") || strings.Contains(g, "amplidex/query/server.")) && !strings.Contains(g, "PackageGoroutines") {
			ours = append(ours, g)
		}
	}
	return ours
}

// AssertMode checks the type and permission bits of path.
func AssertMode(t testing.TB, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode() & (fs.ModeType | fs.ModePerm | fs.ModeSticky); got != want {
		t.Errorf("mode of %s = %v, want %v", path, got, want)
	}
}
