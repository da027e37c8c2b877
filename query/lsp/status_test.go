package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lsp"
	"github.com/amplidex/amplidex/query/server"
)

// reporter is a fake Analyzer whose Status is what the test sets, and
// counts the times it was asked.
type reporter struct {
	*fake
	mu    sync.Mutex // guards fields below
	st    lsp.Status
	asked int
}

func (r *reporter) Status(context.Context) lsp.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked++
	return r.st
}

func (r *reporter) set(st lsp.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st = st
}

func (r *reporter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked
}

// nextStatus returns the params of the next amplidex/status notification.
func (c *client) nextStatus() lsp.Status {
	c.t.Helper()
	for {
		m := c.read()
		if m.Method != lsp.MethodStatus {
			continue
		}
		var st lsp.Status
		if err := json.Unmarshal(m.Params, &st); err != nil {
			c.t.Fatal(err)
		}
		return st
	}
}

// TestStatusNotifications: a client that asks for amplidex/status in its
// experimental capabilities gets the Analyzer's status once initialized,
// then each change once, however often the server looks; a client that
// does not ask (or says something else than an object there) gets none,
// and the Analyzer is not even asked.
func TestStatusNotifications(t *testing.T) {
	opts := fastOpts()
	opts.StatusEvery = time.Millisecond
	t.Run("asked", func(t *testing.T) {
		r := &reporter{fake: &fake{}, st: lsp.Status{State: lsp.StateScanning, Files: 1, Message: "reading roots"}}
		c := startServer(t, r, opts)
		c.initializeWith(map[string]any{"experimental": map[string]any{"amplidexStatus": true}})
		if st := c.nextStatus(); st != (lsp.Status{State: lsp.StateScanning, Files: 1, Message: "reading roots"}) {
			t.Fatalf("first status %+v", st)
		}
		// Asked many times over, an unchanged status is not sent again:
		// the next notification is the change.
		deadline := time.Now().Add(waitFor)
		for n := r.count(); r.count() < n+20; {
			if time.Now().After(deadline) {
				t.Fatal("the status was not asked again")
			}
			time.Sleep(time.Millisecond)
		}
		ready := lsp.Status{State: lsp.StateReady, PID: 7, Collections: 2, Files: 9}
		r.set(ready)
		if st := c.nextStatus(); st != ready {
			t.Fatalf("status after the change %+v, want %+v", st, ready)
		}
		gone := lsp.Status{State: lsp.StateInProcess, Message: "no daemon"}
		r.set(gone)
		if st := c.nextStatus(); st != gone {
			t.Fatalf("status after the second change %+v, want %+v", st, gone)
		}
	})
	for name, caps := range map[string]map[string]any{
		"not asked":     {},
		"not asked 2":   {"experimental": map[string]any{"amplidexStatus": false}},
		"not an object": {"experimental": 5},
	} {
		t.Run(name, func(t *testing.T) {
			r := &reporter{fake: &fake{}, st: lsp.Status{State: lsp.StateReady}}
			c := startServer(t, r, opts)
			c.initializeWith(caps)
			if res := c.call("shutdown", nil); res.Error != nil {
				t.Fatal(res.Error.Message)
			}
			c.notify("exit", nil)
			if err := c.serveResult(); err != nil {
				t.Fatalf("Serve: %v", err)
			}
			// Serve waits for every goroutine it started: a status
			// reporter would have asked at least once.
			if n := r.count(); n != 0 {
				t.Errorf("the status was asked %d times", n)
			}
			for m := range c.msgs {
				if m.Method == lsp.MethodStatus {
					t.Errorf("status sent: %s", m.Params)
				}
			}
		})
	}
}

// TestDaemonStatus: a DaemonAnalyzer's Status is the daemon's: scanning
// with its progress, ready with the collections of its roots, and in
// process once the daemon is gone.
func TestDaemonStatus(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	var mu sync.Mutex
	answer := &query.Status{PID: 42, Scanning: true, Progress: &query.ScanProgress{Phase: "reading roots", Files: 10, Collections: 1}}
	mux := query.NewMux()
	query.Handle(mux, query.MethodStatus, func(context.Context, query.StatusParams) (*query.Status, error) {
		mu.Lock()
		defer mu.Unlock()
		return answer, nil
	})
	srv := server.New(mux, nil)
	sock := filepath.Join(t.TempDir(), "d.sock")
	if err := srv.Listen(sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	qc, err := query.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.Close() })
	d := lsp.NewDaemonAnalyzer(qc, newWorkspace(dir), nil)

	if st := d.Status(ctx); st != (lsp.Status{State: lsp.StateScanning, PID: 42, Files: 10, Collections: 1, Message: "reading roots"}) {
		t.Errorf("while scanning: %+v", st)
	}
	mu.Lock()
	answer = &query.Status{PID: 42, Files: 30, Warnings: []string{"w"},
		Roots: []query.RootStatus{{Path: "/a", Collections: 2}, {Path: "/b", Collections: 3}}}
	mu.Unlock()
	if st := d.Status(ctx); st != (lsp.Status{State: lsp.StateReady, PID: 42, Files: 30, Collections: 5, Warnings: 1}) {
		t.Errorf("ready: %+v", st)
	}
	srv.Close()
	for {
		st := d.Status(ctx)
		if st.State == lsp.StateInProcess && st.Message != "" && st.PID == 0 {
			break
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("after the daemon stopped: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
	if st := (lsp.InProcess{Workspace: newWorkspace(dir)}).Status(ctx); st.State != lsp.StateInProcess {
		t.Errorf("in process: %+v", st)
	}
}
