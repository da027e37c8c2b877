package server_test

import (
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
	"sync"
	"testing"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/server"
)

func TestCallRoundTrip(t *testing.T) {
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h)
	c := querytest.DialClient(t, path)
	ctx := querytest.Context(t)

	var sum int
	clk, err := c.Call(ctx, "add", map[string]int{"a": 2, "b": 40}, &sum)
	if err != nil {
		t.Fatalf("Call add: %v", err)
	}
	if sum != 42 {
		t.Errorf("add = %d, want 42", sum)
	}
	if want := h.Clock(); clk != want {
		t.Errorf("clock = %v, want %v", clk, want)
	}

	var echoed []string
	clk, err = c.Call(ctx, "echo", []string{"a", "b"}, &echoed)
	if err != nil {
		t.Fatalf("Call echo: %v", err)
	}
	if strings.Join(echoed, ",") != "a,b" {
		t.Errorf("echo = %v", echoed)
	}
	if clk.Tick != 1 {
		t.Errorf("the clock should be read after the handler: tick %d, want 1", clk.Tick)
	}

	// No params and no result.
	if _, err := c.Call(ctx, "echo", nil, nil); err != nil {
		t.Errorf("Call echo without params: %v", err)
	}
}

func TestCallErrors(t *testing.T) {
	_, path := querytest.StartServer(t, querytest.NewHandler())
	c := querytest.DialClient(t, path)
	tests := []struct {
		method   string
		params   any
		wantCode query.Code
		wantMsg  string
	}{
		{"fail", nil, query.CodeNotFound, `no collection named "nope"`},
		{"wrapped", nil, query.CodeInvalidParams, "name is empty"},
		{"plain", nil, query.CodeInternal, "disk on fire"},
		{"panic", nil, query.CodeInternal, "panic: the handler failed"},
		{"nosuch", nil, query.CodeUnknownMethod, `unknown method "nosuch"`},
		{"add", map[string]any{"a": 1, "c": 2}, query.CodeInvalidParams, `unknown field "c"`},
		{"add", map[string]any{"a": "x"}, query.CodeInvalidParams, "A: want int"},
	}
	for _, tc := range tests {
		t.Run(tc.method+tc.wantMsg, func(t *testing.T) {
			clk, err := c.Call(querytest.Context(t), tc.method, tc.params, nil)
			var e *query.Error
			if !errors.As(err, &e) {
				t.Fatalf("Call %s = %v, want an *Error", tc.method, err)
			}
			if e.Code != tc.wantCode || !strings.Contains(e.Message, tc.wantMsg) {
				t.Errorf("Call %s = %v, want code %s and a message with %q", tc.method, e, tc.wantCode, tc.wantMsg)
			}
			if clk.IsZero() {
				t.Errorf("an error response should carry the clock")
			}
		})
	}
	// The connection is still fine after all that.
	if _, err := c.Call(querytest.Context(t), "echo", 1, nil); err != nil {
		t.Errorf("Call after errors: %v", err)
	}
}

func TestConcurrentCallsOneClient(t *testing.T) {
	_, path := querytest.StartServer(t, querytest.NewHandler())
	c := querytest.DialClient(t, path)
	ctx := querytest.Context(t)
	// Payloads of many sizes: lines that interleaved would not decode.
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				want := fmt.Sprintf("%d-%d-%s", g, i, strings.Repeat("x", (g*997+i*131)%9000))
				var got string
				if _, err := c.Call(ctx, "echo", want, &got); err != nil {
					errs <- err
					return
				}
				if got != want {
					errs <- fmt.Errorf("echo %.20q… = %.20q…", want, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestFiftyClients(t *testing.T) {
	_, path := querytest.StartServer(t, querytest.NewHandler())
	ctx := querytest.Context(t)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := query.Dial(ctx, path)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for j := range 10 {
				var sum int
				if _, err := c.Call(ctx, "add", map[string]int{"a": i, "b": j}, &sum); err != nil {
					errs <- err
					return
				}
				if sum != i+j {
					errs <- fmt.Errorf("add(%d, %d) = %d", i, j, sum)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestBadLines(t *testing.T) {
	_, path := querytest.StartServer(t, querytest.NewHandler())
	rc := querytest.DialRaw(t, path)
	tests := []struct {
		name    string
		line    string
		wantID  string
		wantMsg string
	}{
		{"garbage", "hello there", "null", "line 1: request is not a JSON object"},
		{"syntax", `{"id":3,"method":}`, "null", "line 2: decode request: invalid character '}'"},
		{"unknown key", `{"id":4,"method":"echo","parmas":1}`, "4", `line 3: decode request: unknown field "parmas"`},
		{"string id", `{"id":"x","method":""}`, `"x"`, "line 4: request has no method"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc.Send(tc.line)
			m := rc.Recv()
			if m.Error == nil || m.Error.Code != query.CodeInvalidRequest {
				t.Fatalf("answer %s, want an invalid-request error", m.Raw)
			}
			if !strings.Contains(m.Error.Message, tc.wantMsg) {
				t.Errorf("message %q does not contain %q", m.Error.Message, tc.wantMsg)
			}
			if string(m.ID) != tc.wantID {
				t.Errorf("id %s, want %s", m.ID, tc.wantID)
			}
		})
	}
	// Blank lines are skipped, CRLF is fine, and the connection still works.
	rc.Send("")
	rc.Send(`{"id":"ok","method":"echo","params":{"v":1}}` + "\r")
	m := rc.Recv()
	if string(m.ID) != `"ok"` || string(m.Result) != `{"v":1}` || m.Error != nil {
		t.Errorf("answer after bad lines: %s", m.Raw)
	}
	if _, err := query.ParseClock(m.Clock); err != nil {
		t.Errorf("answer clock: %v", err)
	}
}

func TestOversizeLine(t *testing.T) {
	_, path := querytest.StartServer(t, querytest.NewHandler())
	rc := querytest.DialRaw(t, path)
	big := `{"id":1,"method":"echo","params":"` + strings.Repeat("a", query.MaxLineSize) + `"}`
	done := make(chan struct{})
	go func() {
		defer close(done)
		rc.Send(big)
		rc.Send(`{"id":2,"method":"echo","params":"small"}`)
	}()
	m := rc.Recv()
	if m.Error == nil || m.Error.Code != query.CodeInvalidRequest || !strings.Contains(m.Error.Message, "longer than") {
		t.Fatalf("answer to an oversize line: %.200s", m.Raw)
	}
	if string(m.ID) != "1" {
		t.Errorf("id %s, want 1, read from the start of the line", m.ID)
	}
	m = rc.Recv()
	if string(m.ID) != "2" || string(m.Result) != `"small"` {
		t.Errorf("answer after the oversize line: %s", m.Raw)
	}
	<-done
}

func TestClientRefusesOversizeRequest(t *testing.T) {
	_, path := querytest.StartServer(t, querytest.NewHandler())
	c := querytest.DialClient(t, path)
	_, err := c.Call(querytest.Context(t), "echo", strings.Repeat("a", query.MaxLineSize), nil)
	if !errors.Is(err, query.ErrLineTooLong) {
		t.Fatalf("Call with a huge request = %v, want ErrLineTooLong", err)
	}
	if _, err := c.Call(querytest.Context(t), "echo", "small", nil); err != nil {
		t.Errorf("Call after: %v", err)
	}
}

func TestResultLongerThanALine(t *testing.T) {
	h := querytest.NewHandler()
	want := strings.Repeat("b", query.MaxLineSize+10)
	h.Handle("huge", func(ctx context.Context, params json.RawMessage) (any, error) {
		return want, nil
	})
	_, path := querytest.StartServer(t, h)
	c := querytest.DialClient(t, path)
	var got string
	if _, err := c.Call(querytest.Context(t), "huge", nil, &got); err != nil {
		t.Fatalf("Call huge: %v", err)
	}
	if got != want {
		t.Errorf("got %d bytes, want %d", len(got), len(want))
	}
}

func TestPeerUIDMismatch(t *testing.T) {
	other := os.Geteuid() + 1
	_, path := querytest.StartServer(t, querytest.NewHandler(), func(s *server.Server) {
		server.SetPeerUID(s, func(*net.UnixConn) (int, error) { return other, nil })
	})

	rc := querytest.DialRaw(t, path)
	m := rc.Recv()
	if m.Error == nil || m.Error.Code != query.CodeForbidden || string(m.ID) != "null" {
		t.Fatalf("first line from the server: %s, want a forbidden error", m.Raw)
	}
	if !strings.Contains(m.Error.Message, fmt.Sprintf("peer uid %d", other)) {
		t.Errorf("message %q should name the peer uid", m.Error.Message)
	}
	rc.ExpectEOF()

	c := querytest.DialClient(t, path)
	_, err := c.Call(querytest.Context(t), "echo", 1, nil)
	var e *query.Error
	if !errors.As(err, &e) || e.Code != query.CodeForbidden {
		t.Errorf("Call as another user = %v, want forbidden", err)
	}
	_, err = c.Subscribe(querytest.Context(t), "watch", nil)
	if !errors.As(err, &e) || e.Code != query.CodeForbidden {
		t.Errorf("Subscribe as another user = %v, want forbidden", err)
	}
}

// TestSyncClientForbidden: a server that refuses this user says so, and
// that is the answer.
func TestSyncClientForbidden(t *testing.T) {
	other := os.Geteuid() + 1
	_, path := querytest.StartServer(t, querytest.NewHandler(), func(s *server.Server) {
		server.SetPeerUID(s, func(*net.UnixConn) (int, error) { return other, nil })
	})
	sc, err := query.DialSync(querytest.Context(t), path)
	if err != nil {
		t.Fatalf("DialSync: %v", err)
	}
	defer sc.Close()
	_, err = sc.Call(querytest.Context(t), "echo", 1, nil)
	var e *query.Error
	if !errors.As(err, &e) || e.Code != query.CodeForbidden || !strings.Contains(e.Message, fmt.Sprint(other)) {
		t.Errorf("Call as another user = %v, want forbidden", err)
	}
}

func TestPeerCredentialsUnreadable(t *testing.T) {
	_, path := querytest.StartServer(t, querytest.NewHandler(), func(s *server.Server) {
		server.SetPeerUID(s, func(*net.UnixConn) (int, error) { return -1, errors.New("no credentials") })
	})
	m := querytest.DialRaw(t, path).Recv()
	if m.Error == nil || m.Error.Code != query.CodeForbidden || !strings.Contains(m.Error.Message, "no credentials") {
		t.Fatalf("answer: %s, want forbidden", m.Raw)
	}
}

func TestSocketModes(t *testing.T) {
	_, path := querytest.StartServer(t, querytest.NewHandler())
	querytest.AssertMode(t, filepath.Dir(path), 0o700|fs.ModeDir)
	querytest.AssertMode(t, path, 0o600|fs.ModeSocket)
}

func TestSocketDirectory(t *testing.T) {
	tests := []struct {
		name    string
		mode    fs.FileMode
		wantErr error
		wantMsg string // in the error, beside the directory
	}{
		{"private", 0o700, nil, ""},
		{"readable by others is tightened", 0o755, nil, ""},
		{"group readable is tightened", 0o750, nil, ""},
		{"writable by others is refused", 0o777, query.ErrUnsafeDir, "mode 0777"},
		{"sticky and shared is refused", fs.ModeSticky | 0o777, query.ErrUnsafeDir, "mode 01777"},
		{"group writable is refused", 0o770, query.ErrUnsafeDir, "mode 0770"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			h := querytest.NewHandler()
			s := server.New(h, h.Clock)
			defer s.Close()
			err := s.Listen(filepath.Join(dir, "amplidex.sock"))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Listen = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), tc.wantMsg) {
					t.Errorf("error %q should name the directory and say %q", err, tc.wantMsg)
				}
				querytest.AssertMode(t, dir, tc.mode|fs.ModeDir) // left alone
				return
			}
			querytest.AssertMode(t, dir, 0o700|fs.ModeDir)
		})
	}
}

func TestStaleSocketRemoved(t *testing.T) {
	path := querytest.SocketPath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	// A socket file nobody listens on, as a killed daemon leaves it.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the stale socket should exist: %v", err)
	}

	h := querytest.NewHandler()
	s := server.New(h, h.Clock)
	defer s.Close()
	if err := s.Listen(path); err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	c := querytest.DialClient(t, path)
	if _, err := c.Call(querytest.Context(t), "echo", 1, nil); err != nil {
		t.Errorf("Call: %v", err)
	}
}

func TestSecondServerInUse(t *testing.T) {
	_, path := querytest.StartServer(t, querytest.NewHandler())
	h := querytest.NewHandler()
	second := server.New(h, h.Clock)
	defer second.Close()
	if err := second.Listen(path); !errors.Is(err, server.ErrInUse) {
		t.Fatalf("second Listen = %v, want ErrInUse", err)
	}
	// The first server is unharmed.
	c := querytest.DialClient(t, path)
	if _, err := c.Call(querytest.Context(t), "echo", 1, nil); err != nil {
		t.Errorf("Call to the first server: %v", err)
	}
}

func TestLiveSocketWithoutLockInUse(t *testing.T) {
	// Some other program answers on the socket but holds no lock.
	path := querytest.SocketPath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	h := querytest.NewHandler()
	s := server.New(h, h.Clock)
	defer s.Close()
	if err := s.Listen(path); !errors.Is(err, server.ErrInUse) {
		t.Fatalf("Listen = %v, want ErrInUse", err)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("the live socket must stay: %v", err)
	}
}

func TestListenRefusesNonSocket(t *testing.T) {
	path := querytest.SocketPath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := querytest.NewHandler()
	s := server.New(h, h.Clock)
	defer s.Close()
	err := s.Listen(path)
	if err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Listen over a regular file = %v, want a refusal", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "precious" {
		t.Errorf("the file was touched: %q", data)
	}
}

func TestListenPathTooLong(t *testing.T) {
	h := querytest.NewHandler()
	s := server.New(h, h.Clock)
	defer s.Close()
	path := "/tmp/" + strings.Repeat("d", 120) + "/amplidex.sock"
	err := s.Listen(path)
	if err == nil || !strings.Contains(err.Error(), "longer than the 107") {
		t.Fatalf("Listen = %v, want a path-length error", err)
	}
}

func TestCloseRemovesSocket(t *testing.T) {
	s, path := querytest.StartServer(t, querytest.NewHandler())
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket after Close: %v, want it gone", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Listen(path); !errors.Is(err, query.ErrClosed) {
		t.Errorf("Listen after Close = %v, want ErrClosed", err)
	}
	// A new server takes the place at once.
	h := querytest.NewHandler()
	next := server.New(h, h.Clock)
	defer next.Close()
	if err := next.Listen(path); err != nil {
		t.Fatalf("Listen after the first server closed: %v", err)
	}
}

func TestShutdownCancelsHandlers(t *testing.T) {
	h := querytest.NewHandler()
	s, path := querytest.StartServer(t, h)
	c := querytest.DialClient(t, path)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(querytest.Context(t), "block", nil, nil)
		errc <- err
	}()
	<-h.Entered
	if err := s.Shutdown(querytest.Context(t)); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	err := <-errc
	var e *query.Error
	if !errors.As(err, &e) || e.Code != query.CodeShuttingDown {
		t.Errorf("blocked call ended with %v, want shutting-down", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket after Shutdown: %v", err)
	}
	// The connection is gone now.
	_, err = c.Call(querytest.Context(t), "echo", 1, nil)
	if !errors.Is(err, query.ErrNoDaemon) {
		t.Errorf("Call after Shutdown = %v, want ErrNoDaemon", err)
	}
}

func TestShutdownDeadline(t *testing.T) {
	// A handler that ignores its context keeps Shutdown from finishing;
	// Shutdown gives up when its context ends, and Close waits.
	release := make(chan struct{})
	h := querytest.NewHandler()
	h.Handle("stubborn", func(ctx context.Context, params json.RawMessage) (any, error) {
		h.Entered <- "stubborn"
		<-release
		return "done", nil
	})
	s, path := querytest.StartServer(t, h)
	c := querytest.DialClient(t, path)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(querytest.Context(t), "stubborn", nil, nil)
		errc <- err
	}()
	<-h.Entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown = %v, want context.Canceled", err)
	}
	if err := <-errc; !errors.Is(err, query.ErrNoDaemon) {
		t.Errorf("call on a closed connection = %v, want ErrNoDaemon", err)
	}
	close(release)
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	base := func() int {
		querytest.WaitNoLeaks(t, 1<<30) // earlier tests' goroutines are gone
		return runtime.NumGoroutine()
	}()

	h := querytest.NewHandler()
	path := querytest.SocketPath(t)
	s := server.New(h, h.Clock)
	if err := s.Listen(path); err != nil {
		t.Fatal(err)
	}
	ctx := querytest.Context(t)
	var clients []*query.Client
	for range 5 {
		c, err := query.Dial(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		if _, err := c.Call(ctx, "echo", "x", nil); err != nil {
			t.Fatal(err)
		}
	}
	// Calls and subscriptions in flight when everything closes.
	errc := make(chan error, 1)
	go func() {
		_, err := clients[0].Call(ctx, "block", nil, nil)
		errc <- err
	}()
	<-h.Entered
	notes, err := clients[1].Subscribe(ctx, "watch", querytest.CountParams{Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	<-h.Entered
	raw := querytest.DialRaw(t, path)
	raw.Send(`{"id":1,"method":"echo"}`)
	raw.Recv()

	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	<-errc
	for range notes {
	}
	for _, c := range clients {
		c.Close()
	}
	raw.Conn.Close()
	querytest.WaitNoLeaks(t, base)
}

// TestServerActivity: the Activity hook hears the number of connections
// open, in order: one more when a client connects, one more for its
// subscription's connection, and back to none only once the client has
// gone, its subscription ended.
func TestServerActivity(t *testing.T) {
	counts := make(chan int, 16)
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h, func(s *server.Server) { s.Activity = func(n int) { counts <- n } })
	next := func(want int) {
		t.Helper()
		select {
		case n := <-counts:
			if n != want {
				t.Fatalf("Activity heard %d connections, want %d", n, want)
			}
		case <-querytest.Context(t).Done():
			t.Fatalf("Activity heard nothing, want %d connections", want)
		}
	}
	ctx := querytest.Context(t)
	c, err := query.Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	next(1)
	if _, err := c.Call(ctx, "echo", nil, nil); err != nil {
		t.Fatal(err)
	}
	notes, err := c.Subscribe(ctx, "watch", querytest.CountParams{Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	next(2)
	<-notes
	c.Close()
	next(1)
	next(0)
	select {
	case n := <-counts:
		t.Fatalf("Activity heard %d connections after the last one closed", n)
	default:
	}
}
