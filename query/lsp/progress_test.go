package lsp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lsp"
	"github.com/amplidex/amplidex/query/server"
)

// progressOpts are fastOpts that look at the tasks soon and often.
func progressOpts() lsp.Options {
	o := fastOpts()
	o.ProgressDelay, o.ProgressEvery = 10*time.Millisecond, 10*time.Millisecond
	return o
}

// initializeWith performs the handshake with the client capabilities
// given.
func (c *client) initializeWith(capabilities map[string]any) {
	c.t.Helper()
	r := c.call("initialize", map[string]any{"processId": nil, "capabilities": capabilities})
	if r.Error != nil {
		c.t.Fatalf("initialize: %v", r.Error.Message)
	}
	c.notify("initialized", map[string]any{})
}

// progressValue is the value of a $/progress notification.
type progressValue struct {
	Token string `json:"token"`
	Value struct {
		Kind    string `json:"kind"`
		Title   string `json:"title"`
		Message string `json:"message"`
	} `json:"value"`
}

// progressEvents reads the server's messages until stop says so: it
// answers every window/workDoneProgress/create (with refuse, an error),
// and returns the $/progress values in order, and the tokens asked for.
func (c *client) progressEvents(refuse bool, stop func(m wire, events []progressValue) bool) (events []progressValue, created []string) {
	c.t.Helper()
	for {
		m := c.read()
		switch m.Method {
		case "window/workDoneProgress/create":
			var p struct {
				Token string `json:"token"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil || len(m.ID) == 0 {
				c.t.Fatalf("create: %s (%v)", m.Params, err)
			}
			created = append(created, p.Token)
			if refuse {
				c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32603, "message": "no"}})
			} else {
				c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
			}
		case "$/progress":
			var v progressValue
			if err := json.Unmarshal(m.Params, &v); err != nil {
				c.t.Fatal(err)
			}
			events = append(events, v)
		}
		if stop(m, events) {
			return events, created
		}
	}
}

// tasker is a fake Analyzer whose diagnostics wait until released, while
// its Tasks says what they wait for.
type tasker struct {
	*fake
	release chan struct{}
	polls   atomic.Int32
}

func newTasker() *tasker {
	t := &tasker{fake: &fake{}, release: make(chan struct{})}
	t.block = func(ctx context.Context, _ string) {
		select {
		case <-t.release:
		case <-ctx.Done():
		}
	}
	return t
}

func (t *tasker) Tasks(context.Context) []lsp.Task {
	select {
	case <-t.release:
		return nil
	default:
	}
	n := t.polls.Add(1)
	return []lsp.Task{{ID: "scan", Title: "amplidex: first scan", Message: strings.Repeat("x", int(n))}}
}

// TestProgressAroundSlowAnswer: a client that supports work-done
// progress is asked to create a token, then sees begin (before the slow
// diagnostics), reports as the message changes, and end once the work is
// done; a client that does not, or refuses the token, sees none.
func TestProgressAroundSlowAnswer(t *testing.T) {
	uri := lsp.PathToURI("/p/.amplifier/collections/c/agents/a.md")
	t.Run("supported", func(t *testing.T) {
		a := newTasker()
		c := startServer(t, a, progressOpts())
		c.initializeWith(map[string]any{"window": map[string]any{"workDoneProgress": true}})
		c.open(uri, "BAD")
		events, created := c.progressEvents(false, func(_ wire, ev []progressValue) bool {
			return len(ev) >= 3 // begin and two reports
		})
		if len(created) != 1 || events[0].Value.Kind != "begin" || events[0].Token != created[0] ||
			events[0].Value.Title != "amplidex: first scan" {
			t.Fatalf("created %q, then %+v", created, events)
		}
		for _, ev := range events[1:] {
			if ev.Value.Kind != "report" || ev.Token != created[0] || ev.Value.Message == "" {
				t.Fatalf("after begin: %+v", ev)
			}
		}
		close(a.release)
		published := false
		events, _ = c.progressEvents(false, func(m wire, ev []progressValue) bool {
			published = published || m.Method == "textDocument/publishDiagnostics"
			return published && len(ev) > 0 && ev[len(ev)-1].Value.Kind == "end"
		})
		for _, ev := range events[:len(events)-1] {
			if ev.Value.Kind != "report" {
				t.Errorf("before end: %+v", ev)
			}
		}
		if end := events[len(events)-1]; end.Token != created[0] {
			t.Errorf("end of token %q, want %q", end.Token, created[0])
		}
	})
	t.Run("not supported", func(t *testing.T) {
		a := newTasker()
		c := startServer(t, a, progressOpts())
		c.initializeWith(map[string]any{})
		c.open(uri, "BAD")
		for deadline := time.Now().Add(waitFor); len(a.seen()) == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no diagnostics run started")
			}
		}
		close(a.release)
		events, created := c.progressEvents(false, func(m wire, _ []progressValue) bool {
			return m.Method == "textDocument/publishDiagnostics"
		})
		if len(events) != 0 || len(created) != 0 || a.polls.Load() != 0 {
			t.Errorf("created %q, progress %+v, tasks asked %d times", created, events, a.polls.Load())
		}
	})
	t.Run("refused", func(t *testing.T) {
		a := newTasker()
		c := startServer(t, a, progressOpts())
		c.initializeWith(map[string]any{"window": map[string]any{"workDoneProgress": true}})
		c.open(uri, "BAD")
		_, created := c.progressEvents(true, func(m wire, _ []progressValue) bool { return m.Method == "window/workDoneProgress/create" })
		// The task refused, the tasks are still asked about: not the
		// client.
		for deadline := time.Now().Add(waitFor); a.polls.Load() < 3; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the tasks were not asked about again")
			}
		}
		close(a.release)
		events, again := c.progressEvents(true, func(m wire, _ []progressValue) bool {
			return m.Method == "textDocument/publishDiagnostics"
		})
		if len(created) != 1 || len(again) != 0 || len(events) != 0 {
			t.Errorf("created %q then %q, progress %+v", created, again, events)
		}
	})
}

// slowDaemon is a daemon whose first scan goes on until released: status
// says how far it got (one file more at every question), and analyze
// waits for the scan.
type slowDaemon struct {
	client  *query.Client
	release chan struct{}
	once    sync.Once
	files   atomic.Int32
}

// startSlowDaemon starts a slowDaemon. With registering set, it is not
// its first scan that goes on but the first read of those projects.
func startSlowDaemon(t *testing.T, registering ...string) *slowDaemon {
	t.Helper()
	s := &slowDaemon{release: make(chan struct{})}
	t.Cleanup(s.free)
	mux := query.NewMux()
	query.Handle(mux, query.MethodStatus, func(context.Context, query.StatusParams) (*query.Status, error) {
		select {
		case <-s.release:
			return &query.Status{}, nil
		default:
		}
		n := int(s.files.Add(1))
		if len(registering) > 0 {
			st := &query.Status{}
			for _, dir := range registering {
				st.Registering = append(st.Registering, query.RegistrationProgress{Dir: dir, Phase: "reading collections", Files: n, Collections: 1})
			}
			return st, nil
		}
		return &query.Status{Scanning: true, Progress: &query.ScanProgress{Phase: "reading roots", Files: n, Collections: 1}}, nil
	})
	query.Handle(mux, query.MethodAnalyze, func(ctx context.Context, p query.AnalyzeParams) (*query.AnalyzeResult, error) {
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &query.AnalyzeResult{Diagnostics: []diag.Diagnostic{{Code: "daemon/said", Severity: diag.SeverityError,
			Path: p.Path, Message: "from the daemon"}}}, nil
	})
	srv := server.New(mux, nil)
	sock := filepath.Join(t.TempDir(), "d.sock")
	if err := srv.Listen(sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := query.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s.client = c
	return s
}

func (s *slowDaemon) free() { s.once.Do(func() { close(s.release) }) }

// TestDaemonScanProgress: through the daemon, a client that supports
// work-done progress sees the daemon's first scan begin, go on and end
// around the first diagnostics, which come from the daemon however long
// the scan takes (the call waits past its timeout while the scan goes
// on, and once more as it ends: the answer may come after the status
// that says the scan is over).
func TestDaemonScanProgress(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	s := startSlowDaemon(t)
	d := lsp.NewDaemonAnalyzer(s.client, newWorkspace(dir), nil)
	// The call's timeout is many times what a loaded machine takes to
	// answer a status question, and the scan lasts many timeouts: the
	// wait is timed by the reports, not by a clock.
	const timeout = 100 * time.Millisecond
	lsp.SetTimeout(d, timeout)
	c := startServer(t, d, progressOpts())
	c.initializeWith(map[string]any{"window": map[string]any{"workDoneProgress": true}})
	uri := lsp.PathToURI(filepath.Join(dir, devProfile))
	c.open(uri, read(t, filepath.Join(dir, devProfile)))
	began := time.Now()
	events, _ := c.progressEvents(false, func(m wire, ev []progressValue) bool {
		if m.Method == "textDocument/publishDiagnostics" {
			t.Fatalf("diagnostics published while the scan goes on (the call gave up): %s", m.Params)
		}
		// Reports every 10ms, for at least three timeouts.
		return len(ev) >= 2 && time.Since(began) > 3*timeout
	})
	if b := events[0].Value; b.Kind != "begin" || b.Title != "amplidex: first scan" || !strings.HasPrefix(b.Message, "reading roots: ") {
		t.Fatalf("first progress: %+v", events[0])
	}
	s.free()
	var diags published
	c.progressEvents(false, func(m wire, ev []progressValue) bool {
		if m.Method == "textDocument/publishDiagnostics" {
			if err := json.Unmarshal(m.Params, &diags); err != nil {
				t.Fatal(err)
			}
		}
		return diags.URI != "" && len(ev) > 0 && ev[len(ev)-1].Value.Kind == "end"
	})
	if len(diags.Diagnostics) != 1 || diags.Diagnostics[0].Message != "from the daemon" {
		t.Errorf("diagnostics %+v, want the daemon's", diags.Diagnostics)
	}
}

// TestDaemonRegistrationProgress: the first read of the project of the
// file asked about is shown, that of another project is not.
func TestDaemonRegistrationProgress(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	project := filepath.Join(dir, "project")
	s := startSlowDaemon(t, filepath.Join(dir, "elsewhere"), project)
	d := lsp.NewDaemonAnalyzer(s.client, newWorkspace(dir), nil)
	c := startServer(t, d, progressOpts())
	c.initializeWith(map[string]any{"window": map[string]any{"workDoneProgress": true}})
	uri := lsp.PathToURI(filepath.Join(dir, devProfile))
	c.open(uri, read(t, filepath.Join(dir, devProfile)))
	events, created := c.progressEvents(false, func(_ wire, ev []progressValue) bool { return len(ev) >= 3 })
	if b := events[0].Value; b.Kind != "begin" || b.Title != "amplidex: reading the project project" ||
		!strings.HasPrefix(b.Message, "reading collections: ") || len(created) != 1 {
		t.Fatalf("created %q, then %+v", created, events)
	}
	s.free()
	events, created = c.progressEvents(false, func(_ wire, ev []progressValue) bool {
		return len(ev) > 0 && ev[len(ev)-1].Value.Kind == "end"
	})
	if len(created) != 0 {
		t.Errorf("another project's read was shown too: %q, %+v", created, events)
	}
}

// TestDaemonAnswerAfterScanEnds: the daemon's word that its scan is over
// comes before the answer to the question that waited for the scan (a
// proxy holds that answer back until a moment after the word): the call
// takes the answer, rather than give up on the daemon and answer in
// process.
func TestDaemonAnswerAfterScanEnds(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	var (
		scanning atomic.Bool
		probes   atomic.Int32 // status questions while the scan goes on
	)
	scanning.Store(true)
	mux := query.NewMux()
	query.Handle(mux, query.MethodStatus, func(context.Context, query.StatusParams) (*query.Status, error) {
		if scanning.Load() {
			probes.Add(1)
			return &query.Status{Scanning: true, Progress: &query.ScanProgress{Phase: "reading roots", Files: 1}}, nil
		}
		return &query.Status{}, nil
	})
	query.Handle(mux, query.MethodAnalyze, func(ctx context.Context, p query.AnalyzeParams) (*query.AnalyzeResult, error) {
		for scanning.Load() {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
		return &query.AnalyzeResult{Diagnostics: []diag.Diagnostic{{Code: "daemon/said", Severity: diag.SeverityError,
			Path: p.Path, Message: "from the daemon"}}}, nil
	})
	srv := server.New(mux, nil)
	sock := filepath.Join(t.TempDir(), "d.sock")
	if err := srv.Listen(sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	// The proxy passes every line on, but for the answer of analyze: it
	// is sent a moment (a tenth of the call's timeout) after a status
	// that says the scan is over, as an answer on its way would be.
	const timeout = 200 * time.Millisecond
	frontDir := t.TempDir()
	if err := os.Chmod(frontDir, 0o700); err != nil { // as a client wants it
		t.Fatal(err)
	}
	front := filepath.Join(frontDir, "p.sock")
	ln, err := net.Listen("unix", front)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			sc, err := net.Dial("unix", sock)
			if err != nil {
				cc.Close()
				return
			}
			go func() { io.Copy(sc, cc); sc.Close() }()
			go func() {
				defer cc.Close()
				var mu sync.Mutex // guards writes to cc
				write := func(b []byte) error {
					mu.Lock()
					defer mu.Unlock()
					_, err := cc.Write(b)
					return err
				}
				r := bufio.NewReader(sc)
				var held []byte
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					if bytes.Contains(line, []byte("from the daemon")) {
						held = line
						continue
					}
					if err := write(line); err != nil {
						return
					}
					if held != nil && !bytes.Contains(line, []byte("reading roots")) {
						answer := held
						held = nil
						time.AfterFunc(timeout/10, func() { write(answer) })
					}
				}
			}()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := query.Dial(ctx, front)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	d := lsp.NewDaemonAnalyzer(c, newWorkspace(dir), nil)
	lsp.SetTimeout(d, timeout)
	path := filepath.Join(dir, devProfile)
	got := make(chan []diag.Diagnostic, 1)
	go func() { got <- d.Diagnose(ctx, path, []byte(read(t, path)), nil) }()
	// The call waits past its timeout while the scan goes on; then the
	// scan ends.
	for deadline := time.Now().Add(waitFor); probes.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the call never asked whether the daemon was busy")
		}
	}
	scanning.Store(false)
	ds := <-got
	if len(ds) != 1 || ds[0].Message != "from the daemon" {
		t.Errorf("diagnostics %+v, want the daemon's", ds)
	}
}
