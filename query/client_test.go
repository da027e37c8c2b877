package query_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
)

func TestDialNoDaemon(t *testing.T) {
	dir := querytest.PrivateDir(t)
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	notSocket := filepath.Join(dir, "file")
	if err := os.WriteFile(notSocket, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, path string
	}{
		{"missing socket", filepath.Join(dir, "missing.sock")},
		{"missing directory", filepath.Join(dir, "nope", "amplidex.sock")},
		{"stale socket", stale},
		{"not a socket", notSocket},
		{"path too long", "/tmp/" + strings.Repeat("x", 200)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := query.Dial(querytest.Context(t), tc.path)
			if !errors.Is(err, query.ErrNoDaemon) {
				if c != nil {
					c.Close()
				}
				t.Fatalf("Dial = %v, want ErrNoDaemon", err)
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q should name the socket", err)
			}
		})
	}
}

func TestDialCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := query.Dial(ctx, filepath.Join(querytest.PrivateDir(t), "amplidex.sock"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial with a cancelled context = %v, want context.Canceled", err)
	}
}

// silentServer accepts connections and never reads or answers, like a
// daemon that hangs.
func silentServer(t *testing.T) string {
	t.Helper()
	path := filepath.Join(querytest.PrivateDir(t), "hung.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, nc := range conns {
			nc.Close()
		}
	})
	return path
}

func TestCallDeadlineWhenServerHangs(t *testing.T) {
	path := silentServer(t)
	c := querytest.DialClient(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Call(ctx, "echo", 1, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Call to a hung server = %v, want DeadlineExceeded", err)
	}

	// Many calls at once, with requests bigger than the socket buffers, so
	// that the writer blocks: each still ends with its context.
	big := strings.Repeat("z", 256<<10)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if _, err := c.Call(ctx, "echo", big, nil); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Call = %v, want DeadlineExceeded", err)
			}
		}()
	}
	wg.Wait()

	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Subscribe(ctx, "watch", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Subscribe to a hung server = %v, want DeadlineExceeded", err)
	}
}

func TestCallCancelled(t *testing.T) {
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h)
	c := querytest.DialClient(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "block", nil, nil)
		errc <- err
	}()
	<-h.Entered
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Call = %v, want context.Canceled", err)
	}
	// The client goes on working.
	if _, err := c.Call(querytest.Context(t), "echo", 1, nil); err != nil {
		t.Errorf("Call after a cancelled one: %v", err)
	}
}

func TestClientClose(t *testing.T) {
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h)
	c := querytest.DialClient(t, path)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(querytest.Context(t), "block", nil, nil)
		errc <- err
	}()
	<-h.Entered
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-errc; !errors.Is(err, query.ErrClosed) {
		t.Errorf("call in flight at Close = %v, want ErrClosed", err)
	}
	if _, err := c.Call(querytest.Context(t), "echo", 1, nil); !errors.Is(err, query.ErrClosed) {
		t.Errorf("Call after Close = %v, want ErrClosed", err)
	}
	if _, err := c.Subscribe(querytest.Context(t), "watch", nil); !errors.Is(err, query.ErrClosed) {
		t.Errorf("Subscribe after Close = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestDaemonGoesAway(t *testing.T) {
	s, path := querytest.StartServer(t, querytest.NewHandler())
	c := querytest.DialClient(t, path)
	if _, err := c.Call(querytest.Context(t), "echo", 1, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := c.Call(querytest.Context(t), "echo", 1, nil)
	if !errors.Is(err, query.ErrNoDaemon) {
		t.Fatalf("Call after the daemon left = %v, want ErrNoDaemon", err)
	}
}

func TestSubscribe(t *testing.T) {
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h)
	c := querytest.DialClient(t, path)
	ctx := querytest.Context(t)

	notes, err := c.Subscribe(ctx, "watch", querytest.CountParams{Count: 3})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	for i := range 3 {
		n, ok := <-notes
		if !ok {
			t.Fatalf("channel closed after %d notifications", i)
		}
		if n.Method != "watch" || string(n.Params) != string(rune('0'+i)) || n.End || n.Clock.IsZero() {
			t.Errorf("notification %d = %+v", i, n)
		}
	}
	<-h.Entered

	// Calls on the same client are not held up by the subscription.
	if _, err := c.Call(ctx, "echo", 1, nil); err != nil {
		t.Errorf("Call while subscribed: %v", err)
	}

	// Closing the client ends the subscription on both sides.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n, ok := <-notes; ok {
		t.Errorf("after Close got %+v, want the channel closed", n)
	}
	if err := <-h.StreamDone; !errors.Is(err, context.Canceled) {
		t.Errorf("the server's stream ended with %v, want its context cancelled", err)
	}
}

func TestSubscribeContextEnds(t *testing.T) {
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h)
	c := querytest.DialClient(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	notes, err := c.Subscribe(ctx, "watch", querytest.CountParams{Count: 1})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	<-notes
	<-h.Entered
	cancel()
	for range notes {
	}
	if err := <-h.StreamDone; !errors.Is(err, context.Canceled) {
		t.Errorf("the server's stream ended with %v, want its context cancelled", err)
	}
}

func TestSubscriptionEnds(t *testing.T) {
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h)
	c := querytest.DialClient(t, path)
	ctx := querytest.Context(t)

	t.Run("cleanly", func(t *testing.T) {
		notes, err := c.Subscribe(ctx, "countdown", querytest.CountParams{Count: 3})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for n := range notes {
			if n.End || n.Error != nil {
				t.Errorf("unexpected end %+v", n)
			}
			got = append(got, string(n.Params))
		}
		if strings.Join(got, ",") != "3,2,1" {
			t.Errorf("notifications %v, want 3,2,1", got)
		}
	})
	t.Run("in failure", func(t *testing.T) {
		notes, err := c.Subscribe(ctx, "badstream", nil)
		if err != nil {
			t.Fatal(err)
		}
		var all []query.Notification
		for n := range notes {
			all = append(all, n)
		}
		if len(all) != 2 || string(all[0].Params) != `"first"` {
			t.Fatalf("notifications %+v", all)
		}
		if last := all[1]; !last.End || last.Error == nil || last.Error.Code != query.CodeNotFound {
			t.Errorf("last notification %+v, want the end with a not-found error", last)
		}
	})
	t.Run("refused", func(t *testing.T) {
		_, err := c.Subscribe(ctx, "nosuch", nil)
		var e *query.Error
		if !errors.As(err, &e) || e.Code != query.CodeUnknownMethod {
			t.Errorf("Subscribe to an unknown method = %v", err)
		}
		_, err = c.Subscribe(ctx, "watch", map[string]string{"bad": "x"})
		if !errors.As(err, &e) || e.Code != query.CodeInvalidParams {
			t.Errorf("Subscribe with bad params = %v", err)
		}
	})
	t.Run("server shuts down", func(t *testing.T) {
		h := querytest.NewHandler()
		s, path := querytest.StartServer(t, h)
		c := querytest.DialClient(t, path)
		notes, err := c.Subscribe(ctx, "watch", nil)
		if err != nil {
			t.Fatal(err)
		}
		<-h.Entered
		if err := s.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		var last query.Notification
		for n := range notes {
			last = n
		}
		if !last.End || last.Error == nil || last.Error.Code != query.CodeShuttingDown {
			t.Errorf("last notification %+v, want the end with shutting-down", last)
		}
	})
	t.Run("connection lost", func(t *testing.T) {
		// A server that answers the subscription, then dies.
		path := filepath.Join(querytest.PrivateDir(t), "dying.sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			main, err := ln.Accept() // the client's shared connection
			if err != nil {
				return
			}
			defer main.Close()
			nc, err := ln.Accept() // the subscription's
			if err != nil {
				return
			}
			defer nc.Close()
			bufio.NewReader(nc).ReadBytes('\n')
			nc.Write([]byte(`{"id":1,"result":null}` + "\n" + `{"method":"watch","subscription":1,"params":7}` + "\n"))
		}()
		c := querytest.DialClient(t, path)
		notes, err := c.Subscribe(ctx, "watch", nil)
		if err != nil {
			t.Fatal(err)
		}
		var all []query.Notification
		for n := range notes {
			all = append(all, n)
		}
		<-done
		if len(all) != 2 || string(all[0].Params) != "7" {
			t.Fatalf("notifications %+v", all)
		}
		if last := all[1]; !last.End || last.Error == nil || last.Error.Code != query.CodeUnavailable {
			t.Errorf("last notification %+v, want the end with unavailable", last)
		}
	})
}

func TestRawSubscription(t *testing.T) {
	// Two subscriptions and a call on one connection, by hand.
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h)
	rc := querytest.DialRaw(t, path)
	rc.Send(`{"id":"a","method":"countdown","params":{"count":2}}`)
	rc.Send(`{"id":"b","method":"countdown","params":{"count":1}}`)
	rc.Send(`{"id":"c","method":"echo","params":5}`)
	got := map[string][]string{}
	for ends := 0; ends < 2; {
		m := rc.Recv()
		switch {
		case m.Method == "":
			got[string(m.ID)] = append(got[string(m.ID)], "result "+string(m.Result))
		case m.End:
			got[string(m.Subscription)] = append(got[string(m.Subscription)], "end")
			ends++
		default:
			got[string(m.Subscription)] = append(got[string(m.Subscription)], string(m.Params))
		}
	}
	want := map[string]string{
		`"a"`: "result null,2,1,end",
		`"b"`: "result null,1,end",
	}
	for id, w := range want {
		if g := strings.Join(got[id], ","); g != w {
			t.Errorf("subscription %s: %s, want %s", id, g, w)
		}
	}
	if len(got[`"c"`]) == 0 {
		// The call may be answered after the ends; wait for it.
		m := rc.Recv()
		got[`"c"`] = []string{"result " + string(m.Result)}
	}
	if g := strings.Join(got[`"c"`], ","); g != "result 5" {
		t.Errorf("call: %s", g)
	}
}

func TestHalfClosedPeerGetsAnswers(t *testing.T) {
	// `printf '…' | nc -U sock` sends, closes its write side, then reads.
	_, path := querytest.StartServer(t, querytest.NewHandler())
	rc := querytest.DialRaw(t, path)
	rc.Conn.(*net.UnixConn).Write([]byte(`{"id":1,"method":"add","params":{"a":1,"b":2}}` + "\n" + `{"id":2,"method":"echo","params":"no newline"}`))
	rc.Conn.(*net.UnixConn).CloseWrite()
	answers := map[string]string{}
	for range 2 {
		m := rc.Recv()
		answers[string(m.ID)] = string(m.Result)
	}
	if answers["1"] != "3" || answers["2"] != `"no newline"` {
		t.Errorf("answers %v", answers)
	}
	rc.ExpectEOF()
}

// TestResponseTooLarge: an answer longer than the client takes fails
// alone, a list as a whole answer; the connection goes on.
func TestResponseTooLarge(t *testing.T) {
	const limit = 64 << 10
	h := querytest.NewHandler()
	h.Handle("long", func(ctx context.Context, params json.RawMessage) (any, error) {
		return strings.Repeat("x", 2*limit), nil
	})
	h.Handle("list", func(ctx context.Context, params json.RawMessage) (any, error) {
		// A list, streamed one element at a time, of about 100 KiB.
		return slices.Repeat([]string{strings.Repeat("z", 100)}, 1000), nil
	})
	h.Handle("bigwatch", func(ctx context.Context, params json.RawMessage) (any, error) {
		return &query.Stream{Result: strings.Repeat("y", 2*limit)}, nil
	})
	_, path := querytest.StartServer(t, h)
	c, err := query.DialHooked(querytest.Context(t), path, query.Hooks{MaxResponse: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, method := range []string{"long", "list"} {
		_, err := c.Call(querytest.Context(t), method, nil, nil)
		var e *query.Error
		if !errors.Is(err, query.ErrResponseTooLarge) || errors.Is(err, query.ErrNoDaemon) || errors.As(err, &e) {
			t.Fatalf("Call %s = %v, want ErrResponseTooLarge alone", method, err)
		}
		var got string
		if _, err := c.Call(querytest.Context(t), "echo", "after", &got); err != nil || got != "after" {
			t.Fatalf("Call after %s = %q, %v", method, got, err)
		}
	}

	// A subscription's answer is held to the same limit.
	if _, err := c.Subscribe(querytest.Context(t), "bigwatch", nil); !errors.Is(err, query.ErrResponseTooLarge) {
		t.Fatalf("Subscribe = %v, want ErrResponseTooLarge", err)
	}
}
