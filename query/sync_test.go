package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/server"
)

// dialSync connects a SyncClient that is closed when the test ends.
func dialSync(t *testing.T, path string) *query.SyncClient {
	t.Helper()
	s, err := query.DialSync(querytest.Context(t), path)
	if err != nil {
		t.Fatalf("DialSync: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSyncClient: questions asked one after the other on one connection
// get their answers, clocks and errors, as a Client's calls do, and no
// goroutine of the package runs for them.
func TestSyncClient(t *testing.T) {
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h)
	s, err := query.DialSync(querytest.Context(t), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := querytest.Context(t)
	var sum int
	clk, err := s.Call(ctx, "add", map[string]int{"a": 2, "b": 40}, &sum)
	if err != nil || sum != 42 || clk != h.Clock() {
		t.Fatalf("add = %d, %v, %v; want 42 and the handler's clock", sum, clk, err)
	}
	for _, g := range querytest.PackageGoroutines() {
		if strings.Contains(g, "SyncClient") || strings.Contains(g, "dialSync") {
			t.Errorf("a goroutine runs for the SyncClient:\n%s", g)
		}
	}
	var echoed []string
	if _, err := s.Call(ctx, "echo", []string{"a", "b"}, &echoed); err != nil || strings.Join(echoed, ",") != "a,b" {
		t.Errorf("echo = %v, %v", echoed, err)
	}
	if _, err := s.Call(ctx, "echo", nil, nil); err != nil {
		t.Errorf("echo without params: %v", err)
	}
	var e *query.Error
	if _, err := s.Call(ctx, "fail", nil, nil); !errors.As(err, &e) || e.Code != query.CodeNotFound {
		t.Errorf("fail = %v, want a not-found *Error", err)
	}
	if _, err := s.Call(ctx, "nope", nil, nil); !errors.As(err, &e) || e.Code != query.CodeUnknownMethod {
		t.Errorf("nope = %v, want an unknown-method *Error", err)
	}
	// Ask is Call through the method table.
	st, _, err := query.Ask(ctx, s, query.MethodStatus, query.StatusParams{})
	if !errors.As(err, &e) || e.Code != query.CodeUnknownMethod || st != nil {
		t.Errorf("Ask status of the test handler = %v, %v; want unknown-method", st, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Call(ctx, "echo", 1, nil); !errors.Is(err, query.ErrClosed) {
		t.Errorf("Call after Close = %v, want ErrClosed", err)
	}
	s.Close()
}

// TestSyncClientRequireBuild: a SyncClient names its build as a Client
// does.
func TestSyncClientRequireBuild(t *testing.T) {
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h, func(s *server.Server) { s.Build = otherBuild })
	s := dialSync(t, path)
	s.RequireBuild(query.ReadBuild())
	var e *query.Error
	if _, err := s.Call(querytest.Context(t), "echo", 1, nil); !errors.As(err, &e) || e.Code != query.CodeOtherBuild {
		t.Fatalf("Call to a server of another build = %v, want other-build", err)
	}
	s.RequireBuild(query.Build{})
	var got int
	if _, err := s.Call(querytest.Context(t), "echo", 1, &got); err != nil || got != 1 || h.Tick.Load() != 1 {
		t.Errorf("Call without a build = %d, %v (handler ran %d times)", got, err, h.Tick.Load())
	}
}

// TestSyncClientContext: a question whose context ends while the server
// says nothing returns with the context's error; the connection is then
// done with.
func TestSyncClientContext(t *testing.T) {
	s := dialSync(t, silentServer(t))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Call(ctx, "echo", 1, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Call to a hung server = %v, want DeadlineExceeded", err)
	}
	if _, err := s.Call(querytest.Context(t), "echo", 1, nil); err == nil {
		t.Error("a Call after one given up on succeeded")
	}

	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h)
	s = dialSync(t, path)
	ctx, cancel = context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.Call(ctx, "block", nil, nil)
		errc <- err
	}()
	<-h.Entered
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Call = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := dialSync(t, path).Call(ctx, "echo", 1, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Call with a context already ended = %v, want context.Canceled", err)
	}
}

// TestSyncClientNoDaemon: no server, or one that goes away, is
// ErrNoDaemon; a directory others may write is ErrUnsafeDir.
func TestSyncClientNoDaemon(t *testing.T) {
	if _, err := query.DialSync(querytest.Context(t), filepath.Join(querytest.PrivateDir(t), "missing.sock")); !errors.Is(err, query.ErrNoDaemon) {
		t.Errorf("DialSync with no server = %v, want ErrNoDaemon", err)
	}
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := query.DialSync(querytest.Context(t), filepath.Join(open, "amplidex.sock")); !errors.Is(err, query.ErrUnsafeDir) {
		t.Errorf("DialSync in a directory others may write = %v, want ErrUnsafeDir", err)
	}
	srv, path := querytest.StartServer(t, querytest.NewHandler())
	s := dialSync(t, path)
	if _, err := s.Call(querytest.Context(t), "echo", 1, nil); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	if _, err := s.Call(querytest.Context(t), "echo", 1, nil); !errors.Is(err, query.ErrNoDaemon) {
		t.Errorf("Call after the server left = %v, want ErrNoDaemon", err)
	}
}

// TestSyncClientResponseTooLarge: an answer longer than the client takes
// fails alone; the connection goes on.
func TestSyncClientResponseTooLarge(t *testing.T) {
	const limit = 64 << 10
	h := querytest.NewHandler()
	h.Handle("long", func(ctx context.Context, params json.RawMessage) (any, error) {
		return strings.Repeat("x", 2*limit), nil
	})
	_, path := querytest.StartServer(t, h)
	s, err := query.DialSyncHooked(querytest.Context(t), path, query.Hooks{MaxResponse: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var e *query.Error
	if _, err := s.Call(querytest.Context(t), "long", nil, nil); !errors.Is(err, query.ErrResponseTooLarge) || errors.Is(err, query.ErrNoDaemon) || errors.As(err, &e) {
		t.Fatalf("Call long = %v, want ErrResponseTooLarge alone", err)
	}
	var got string
	if _, err := s.Call(querytest.Context(t), "echo", "after", &got); err != nil || got != "after" {
		t.Errorf("Call after long = %q, %v", got, err)
	}
	// A long answer that fits is gathered whole.
	var long string
	if _, err := s.Call(querytest.Context(t), "echo", strings.Repeat("y", limit/2), &long); err != nil || len(long) != limit/2 {
		t.Errorf("Call with a long answer: %d bytes, %v", len(long), err)
	}
}
