package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/server"
)

// waitFor waits until cond holds, failing after querytest.Timeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(querytest.Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, querytest.Timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestConnectionBounds: beyond MaxConns, and beyond MaxPeerConns for one
// process, a connection is answered with an overloaded error that says
// which bound, and closed; once one closes, another is let in.
func TestConnectionBounds(t *testing.T) {
	for _, tc := range []struct {
		name        string
		all, byPeer int
		says        string
	}{
		{"in all", 3, 100, "connections open, its limit"},
		{"per process", 100, 3, "this process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, path := querytest.StartServer(t, querytest.NewHandler(), func(s *server.Server) {
				s.MaxConns, s.MaxPeerConns = tc.all, tc.byPeer
			})
			var held []*query.Client
			for range 3 {
				c := querytest.DialClient(t, path)
				if _, err := c.Call(querytest.Context(t), "echo", "x", nil); err != nil {
					t.Fatal(err)
				}
				held = append(held, c)
			}
			extra := querytest.DialRaw(t, path)
			m := extra.Recv()
			if m.Error == nil || m.Error.Code != query.CodeOverloaded || !strings.Contains(m.Error.Message, tc.says) {
				t.Fatalf("a fourth connection got %s; want an overloaded error saying %q", m.Raw, tc.says)
			}
			extra.ExpectEOF()
			// A Client reports it as the server's answer, not as no daemon.
			c, err := query.Dial(querytest.Context(t), path)
			if err == nil {
				_, err = c.Call(querytest.Context(t), "echo", "x", nil)
				c.Close()
			}
			var qe *query.Error
			if !errors.As(err, &qe) || qe.Code != query.CodeOverloaded || errors.Is(err, query.ErrNoDaemon) {
				t.Fatalf("a Client beyond the bound: %v; want an overloaded error", err)
			}
			held[0].Close()
			waitFor(t, "a closed connection uncounted", func() bool { n, _ := server.Load(s); return n < 3 })
			if _, err := querytest.DialClient(t, path).Call(querytest.Context(t), "echo", "x", nil); err != nil {
				t.Fatalf("once a connection closed, another is refused: %v", err)
			}
		})
	}
}

// TestPeerBoundsLeaveOthersIn: one process at its bound of connections
// and requests does not keep another's out.
func TestPeerBoundsLeaveOthersIn(t *testing.T) {
	// The first connections are the greedy process's, the rest another's.
	var accepted atomic.Int64
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h, func(s *server.Server) {
		s.MaxPeerConns, s.MaxPeerRequests = 2, 2
		server.SetPeerPID(s, func(*net.UnixConn) int {
			if accepted.Add(1) <= 3 {
				return 1001
			}
			return 1002
		})
	})
	greedy := []*querytest.RawConn{querytest.DialRaw(t, path), querytest.DialRaw(t, path)}
	greedy[0].Send(`{"id":1,"method":"block"}`)
	greedy[1].Send(`{"id":2,"method":"block"}`)
	for range 2 {
		<-h.Entered
	}
	greedy[0].Send(`{"id":3,"method":"echo","params":"x"}`)
	if m := greedy[0].Recv(); m.Error == nil || m.Error.Code != query.CodeOverloaded || !strings.Contains(m.Error.Message, "requests being answered") {
		t.Fatalf("a third request of a process with two running got %s; want overloaded", m.Raw)
	}
	third := querytest.DialRaw(t, path)
	if m := third.Recv(); m.Error == nil || m.Error.Code != query.CodeOverloaded {
		t.Fatalf("a third connection of the process got %s; want overloaded", m.Raw)
	}
	c := querytest.DialClient(t, path)
	var got string
	if _, err := c.Call(querytest.Context(t), "echo", "other", &got); err != nil || got != "other" {
		t.Fatalf("another process is kept out: %q, %v", got, err)
	}
}

// TestRequestBound: beyond MaxRequests being answered, a request is
// answered overloaded at once, not queued; once one ends, others run.
func TestRequestBound(t *testing.T) {
	h := querytest.NewHandler()
	s, path := querytest.StartServer(t, h, func(s *server.Server) { s.MaxRequests = 2 })
	a, b := querytest.DialRaw(t, path), querytest.DialRaw(t, path)
	a.Send(`{"id":1,"method":"block"}`)
	b.Send(`{"id":2,"method":"block"}`)
	for range 2 {
		<-h.Entered
	}
	c := querytest.DialClient(t, path)
	_, err := c.Call(querytest.Context(t), "echo", "x", nil)
	var qe *query.Error
	if !errors.As(err, &qe) || qe.Code != query.CodeOverloaded || !strings.Contains(qe.Message, "requests") {
		t.Fatalf("a third request while two run: %v; want overloaded", err)
	}
	a.Conn.Close() // hung up: its request is cancelled, and uncounted
	waitFor(t, "the hung-up request uncounted", func() bool { _, n := server.Load(s); return n < 2 })
	if _, err := c.Call(querytest.Context(t), "echo", "x", nil); err != nil {
		t.Fatalf("once a request ended, another is refused: %v", err)
	}
}

// TestHangUpCancels: the calls of a peer that hung up are cancelled,
// whether it hung up at once or after it stopped sending; a peer that
// only stopped sending still gets its answers.
func TestHangUpCancels(t *testing.T) {
	h := querytest.NewHandler()
	var cancelled atomic.Int64
	h.Handle("slow", func(ctx context.Context, _ json.RawMessage) (any, error) {
		h.Entered <- "slow"
		select {
		case <-ctx.Done():
			cancelled.Add(1)
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
			return "done", nil
		}
	})
	_, path := querytest.StartServer(t, h)

	t.Run("hung up at once", func(t *testing.T) {
		rc := querytest.DialRaw(t, path)
		rc.Send(`{"id":1,"method":"block"}`)
		<-h.Entered
		before := runtime.NumGoroutine()
		rc.Conn.Close()
		waitFor(t, "the call of a peer that hung up cancelled", func() bool { return runtime.NumGoroutine() < before-1 })
	})
	t.Run("stopped sending, then hung up", func(t *testing.T) {
		rc := querytest.DialRaw(t, path)
		rc.Send(`{"id":1,"method":"block"}`)
		<-h.Entered
		rc.Conn.(*net.UnixConn).CloseWrite()
		before := runtime.NumGoroutine()
		time.Sleep(3 * hangupPollForTest) // still reading: not cancelled
		if runtime.NumGoroutine() < before-1 {
			t.Fatal("the call of a peer that only stopped sending was cancelled")
		}
		rc.Conn.Close()
		waitFor(t, "the call cancelled once the peer hung up", func() bool { return runtime.NumGoroutine() < before-1 })
	})
	t.Run("stopped sending, reads its answer", func(t *testing.T) {
		rc := querytest.DialRaw(t, path)
		rc.Send(`{"id":1,"method":"slow"}`)
		<-h.Entered
		rc.Conn.(*net.UnixConn).CloseWrite()
		if m := rc.Recv(); string(m.Result) != `"done"` {
			t.Fatalf("answer %s, want done", m.Raw)
		}
		if n := cancelled.Load(); n != 0 {
			t.Fatalf("%d calls of a peer still reading were cancelled", n)
		}
	})
}

// hangupPollForTest is a little more than the server's look at a peer
// that stopped sending.
const hangupPollForTest = 60 * time.Millisecond

// TestHangUpFloodBounded: a flood of peers that send a request and hang
// up at once, from many goroutines, keeps the connections counted within
// the bound, ends every call, and leaves the server answering.
func TestHangUpFloodBounded(t *testing.T) {
	h := querytest.NewHandler()
	var peak atomic.Int64
	s, path := querytest.StartServer(t, h, func(s *server.Server) {
		s.MaxConns = 32
		s.Activity = func(open int) {
			for p := peak.Load(); int64(open) > p && !peak.CompareAndSwap(p, int64(open)); p = peak.Load() {
			}
		}
	})
	go func() {
		for range h.Entered { // block's signals, unread otherwise
		}
	}()
	var wg sync.WaitGroup
	end := time.Now().Add(time.Second)
	for range 16 {
		wg.Go(func() {
			for time.Now().Before(end) {
				nc, err := net.Dial("unix", path)
				if err != nil {
					continue // the listen queue is full
				}
				nc.Write([]byte(`{"id":1,"method":"block"}` + "\n"))
				nc.Close()
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > 32 {
		t.Errorf("%d connections open at once; want at most the bound, 32", p)
	}
	// What the kernel still queues of the flood is served, or refused,
	// and hangs up: another client is answered soon.
	var got string
	waitFor(t, "another client answered after the flood", func() bool {
		c, err := query.Dial(querytest.Context(t), path)
		if err != nil {
			return false
		}
		defer c.Close()
		_, err = c.Call(querytest.Context(t), "echo", "after", &got)
		var qe *query.Error
		if err != nil && !(errors.As(err, &qe) && qe.Code == query.CodeOverloaded) {
			t.Fatalf("after the flood: %v", err)
		}
		return err == nil && got == "after"
	})
	waitFor(t, "every call of the flood ended", func() bool { n, r := server.Load(s); return n == 0 && r == 0 })
}

// TestIdleConnectionsHoldNoWriteBuffer: a connection holds its write
// buffer only while it writes an answer; idle ones, however many, hold
// none (it is 32 KiB each).
func TestIdleConnectionsHoldNoWriteBuffer(t *testing.T) {
	const conns = 200
	_, path := querytest.StartServer(t, querytest.NewHandler(), func(s *server.Server) { s.MaxPeerConns = conns })
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	before := heap()
	buf := make([]byte, 512)
	for range conns {
		nc, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		nc.SetDeadline(time.Now().Add(querytest.Timeout))
		if _, err := nc.Write([]byte(`{"id":1,"method":"echo","params":"x"}` + "\n")); err != nil {
			t.Fatal(err)
		}
		if n, err := nc.Read(buf); err != nil || !strings.Contains(string(buf[:n]), `"x"`) {
			t.Fatalf("answer %q, %v", buf[:n], err)
		}
	}
	grew := int64(heap()) - int64(before)
	if per := grew / conns; per > 16<<10 {
		t.Errorf("each idle connection holds %d bytes of heap; want less than 16 KiB (no write buffer)", per)
	}
}

// TestStreamAbandoned: a subscription whose answer cannot be written (its
// client hung up while it was being opened) never runs; its Abandon is
// called instead, so that the handler lets go of what it took.
func TestStreamAbandoned(t *testing.T) {
	h := querytest.NewHandler()
	release := make(chan struct{})
	abandoned, ran := make(chan struct{}), make(chan struct{}, 1)
	h.Handle("late", func(ctx context.Context, _ json.RawMessage) (any, error) {
		h.Entered <- "late"
		<-release
		return &query.Stream{
			Run: func(context.Context, func(any) error) error {
				ran <- struct{}{}
				return nil
			},
			Abandon: func() { close(abandoned) },
		}, nil
	})
	_, path := querytest.StartServer(t, h)
	rc := querytest.DialRaw(t, path)
	rc.Send(`{"id":1,"method":"late"}`)
	<-h.Entered
	rc.Conn.Close()
	close(release)
	select {
	case <-abandoned:
	case <-time.After(querytest.Timeout):
		t.Fatal("the subscription of a client that hung up was never abandoned")
	}
	select {
	case <-ran:
		t.Fatal("the subscription of a client that hung up ran")
	default:
	}
}
