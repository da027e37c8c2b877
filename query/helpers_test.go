package query_test

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
)

// testTimeout bounds every wait in these tests; it is never what a test
// measures.
const testTimeout = 30 * time.Second

// testHandler is the Handler the tests serve. Its methods:
//
//	echo       returns its params
//	add        {"a","b"} → a+b
//	fail       a not-found *Error
//	wrapped    a wrapped invalid-params *Error
//	plain      a plain error (internal)
//	panic      panics
//	block      waits for its context, after signalling entered
//	watch      a stream: sends params.count notifications, then waits for
//	           its context and signals streamDone
//	countdown  a stream: sends params.count notifications and ends
//	badstream  a stream that fails with a not-found *Error
type testHandler struct {
	*query.Mux
	entered    chan string
	streamDone chan error
	tick       atomic.Uint64
}

type countParams struct {
	Count int `json:"count"`
}

func newTestHandler() *testHandler {
	h := &testHandler{
		Mux:        query.NewMux(),
		entered:    make(chan string, 100),
		streamDone: make(chan error, 100),
	}
	h.Handle("echo", func(ctx context.Context, params json.RawMessage) (any, error) {
		h.tick.Add(1)
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
		h.entered <- "block"
		<-ctx.Done()
		return nil, ctx.Err()
	})
	h.Handle("watch", func(ctx context.Context, params json.RawMessage) (any, error) {
		var p countParams
		if err := query.DecodeParams(params, &p); err != nil {
			return nil, err
		}
		return &query.Stream{Result: "watching", Run: func(ctx context.Context, send func(any) error) error {
			for i := range p.Count {
				if err := send(i); err != nil {
					h.streamDone <- err
					return err
				}
			}
			h.entered <- "watch"
			<-ctx.Done()
			h.streamDone <- ctx.Err()
			return ctx.Err()
		}}, nil
	})
	h.Handle("countdown", func(ctx context.Context, params json.RawMessage) (any, error) {
		var p countParams
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

// clock is the clock the test server stamps responses with.
func (h *testHandler) clock() query.Clock {
	return query.Clock{Start: 1700000000000000000, PID: 4242, Tick: h.tick.Load()}
}

// socketPath returns a fresh socket path in a directory the server creates.
func socketPath(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run", "amplidex.sock")
	if len(p) > query.MaxSocketPath {
		dir, err := os.MkdirTemp("", "aq")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		p = filepath.Join(dir, "run", "amplidex.sock")
	}
	return p
}

// privateDir returns a new directory of mode 0700, as Dial wants the
// socket's.
func privateDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startServer serves h on a new socket until the test ends.
func startServer(t *testing.T, h *testHandler, setup ...func(*query.Server)) (*query.Server, string) {
	t.Helper()
	path := socketPath(t)
	s := query.NewServer(h, h.clock)
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

// dialClient connects a Client that is closed when the test ends.
func dialClient(t *testing.T, path string) *query.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := query.Dial(ctx, path)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// rawConn speaks the protocol by hand.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dialRaw(t *testing.T, path string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("unix", path, testTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, r: bufio.NewReaderSize(nc, 1<<20)}
}

func (c *rawConn) send(line string) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(testTimeout))
	if _, err := c.nc.Write([]byte(line + "\n")); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// recv reads one line and decodes it.
func (c *rawConn) recv() wireMessage {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(testTimeout))
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("read: %v (got %q)", err, line)
	}
	var m wireMessage
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("decode %q: %v", line, err)
	}
	m.raw = strings.TrimSpace(string(line))
	return m
}

// expectEOF checks that the server closes the connection.
func (c *rawConn) expectEOF() {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(testTimeout))
	line, err := c.r.ReadBytes('\n')
	if err == nil || len(line) > 0 {
		c.t.Fatalf("read %q, %v; want the end of the connection", line, err)
	}
}

type wireMessage struct {
	ID           json.RawMessage `json:"id"`
	Result       json.RawMessage `json:"result"`
	Error        *query.Error    `json:"error"`
	Clock        string          `json:"clock"`
	Method       string          `json:"method"`
	Subscription json.RawMessage `json:"subscription"`
	Params       json.RawMessage `json:"params"`
	End          bool            `json:"end"`
	raw          string
}

// waitNoLeaks waits until the goroutines are back to base and none of this
// package's is left, failing with their stacks after a deadline.
func waitNoLeaks(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		n := runtime.NumGoroutine()
		ours := packageGoroutines()
		if n <= base && len(ours) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before; still running:\n%s", n, base, strings.Join(ours, "\n\n"))
		}
		runtime.Gosched()
	}
}

// packageGoroutines returns the stacks of goroutines running code of
// package query or started by it.
func packageGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var ours []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "amplidex/query.") && !strings.Contains(g, "packageGoroutines") {
			ours = append(ours, g)
		}
	}
	return ours
}

func runtimeGoroutines() int { return runtime.NumGoroutine() }

// assertMode checks the type and permission bits of path.
func assertMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode() & (fs.ModeType | fs.ModePerm | fs.ModeSticky); got != want {
		t.Errorf("mode of %s = %v, want %v", path, got, want)
	}
}
