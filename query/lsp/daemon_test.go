package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lsp"
	"github.com/amplidex/amplidex/query/server"
)

// catalogViews is analysis.Views over a catalog another party keeps fresh, as
// the daemon's.
type catalogViews struct{ cat *catalog.Catalog }

func (c catalogViews) View(_ context.Context, project string) (*catalog.View, error) {
	st, _ := c.cat.AddProject(project)
	v, _ := st.View(c.cat.ProjectKey(project))
	return v, nil
}

func (c catalogViews) WithArguments(_ context.Context, project string, cols []*discovery.Collection) (*catalog.View, error) {
	v, ok := c.cat.WithArguments(project, cols)
	if !ok {
		return nil, analysis.ErrNoView
	}
	return v, nil
}

func (catalogViews) Changed(string) {}

// counter is a query.Handler that counts the calls of every method before
// passing them on.
type counter struct {
	h     query.Handler
	mu    sync.Mutex // guards fields below
	calls map[string]int
}

func (c *counter) ServeQuery(ctx context.Context, method string, params json.RawMessage) (any, error) {
	c.mu.Lock()
	c.calls[method]++
	c.mu.Unlock()
	return c.h.ServeQuery(ctx, method, params)
}

// take returns the calls counted since the last take.
func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = map[string]int{}
	return out
}

// fakeDaemon serves the analyze method as the daemon does: the Workspace
// code over a catalog's View of the question's project (registered on its
// first question), with every call counted.
type fakeDaemon struct {
	srv    *server.Server
	client *query.Client
	calls  *counter
}

func startFakeDaemon(t testing.TB, home string, bundled []string) *fakeDaemon {
	t.Helper()
	cat := catalog.New(catalog.Options{Home: home, Bundled: bundled})
	ws := analysis.NewWorkspace(catalogViews{cat}, analysis.WorkspaceOptions{})
	mux := query.NewMux()
	query.ServeAnalyze(mux, func(_ context.Context, scope query.Common) (*catalog.View, query.Clock, error) {
		st, _ := cat.AddProject(scope.Project)
		v, _ := st.View(cat.ProjectKey(scope.Project))
		return v, query.Clock{Start: 1, PID: 2, Tick: st.Version}, nil
	}, ws.Analyze)
	f := &fakeDaemon{calls: &counter{h: mux, calls: map[string]int{}}}
	f.srv = server.New(f.calls, nil)
	sock := filepath.Join(t.TempDir(), "d.sock")
	if err := f.srv.Listen(sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := query.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	f.client = c
	return f
}

// countingLocal is a Local that counts the Views asked of it.
type countingLocal struct {
	*analysis.Local
	mu    sync.Mutex // guards fields below
	views int
}

func (c *countingLocal) View(ctx context.Context, project string) (*catalog.View, error) {
	c.mu.Lock()
	c.views++
	c.mu.Unlock()
	return c.Local.View(ctx, project)
}

func (c *countingLocal) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.views
}

// TestDaemonAnalyzerOneCallPerRequest: every request of the editor is one
// analyze call, nothing else is asked of the daemon, the in-process
// catalog is not read, and the answers are the in-process Workspace's.
func TestDaemonAnalyzerOneCallPerRequest(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	f := startFakeDaemon(t, home, nil)
	local := &countingLocal{Local: analysis.NewLocal(analysis.LocalOptions{Home: home})}
	d := lsp.NewDaemonAnalyzer(f.client, analysis.NewWorkspace(local, analysis.WorkspaceOptions{Project: project}), nil)
	ref := newWorkspace(dir)

	path := filepath.Join(dir, devProfile)
	text := []byte(strings.Replace(read(t, path), "- helper", "- helpr", 1))
	draft := filepath.Join(dir, "work/mine/profiles/draft.md")
	overlay := map[string][]byte{path: text, draft: []byte("---\nprofile:\n  name: draft\n  version: 1.0.0\n  description: d\n  extends: foundation:base\n---\n")}
	pos := cursor(t, string(text), "foundation:ba")
	ctx := context.Background()
	requests := []struct {
		name string
		do   func(a lsp.Analyzer) any
	}{
		{"diagnose", func(a lsp.Analyzer) any { return a.Diagnose(ctx, path, text, overlay) }},
		{"complete", func(a lsp.Analyzer) any {
			return a.Complete(ctx, path, text, overlay, cursor(t, string(text), "extends: foundation:"))
		}},
		{"definition", func(a lsp.Analyzer) any { return a.Definition(ctx, path, text, overlay, pos) }},
		{"hover", func(a lsp.Analyzer) any { md, _ := a.Hover(ctx, path, text, overlay, pos); return md }},
		{"code actions", func(a lsp.Analyzer) any {
			at := cursor(t, string(text), "- hel")
			return a.CodeActions(ctx, path, text, overlay, diag.Range{Start: at, End: at})
		}},
		{"references", func(a lsp.Analyzer) any { return a.References(ctx, path, text, overlay, pos, true) }},
	}
	for _, rq := range requests {
		t.Run(rq.name, func(t *testing.T) {
			f.calls.take()
			got := rq.do(d)
			if calls := f.calls.take(); !maps.Equal(calls, map[string]int{query.MethodAnalyze.Name(): 1}) {
				t.Errorf("daemon calls %v, want one %s", calls, query.MethodAnalyze.Name())
			}
			if n := local.count(); n != 0 {
				t.Errorf("the in-process catalog was asked %d times", n)
			}
			want := rq.do(ref)
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if string(gj) != string(wj) || string(gj) == "null" || string(gj) == `""` {
				t.Errorf("through the daemon:\n%s\nin process:\n%s", gj, wj)
			}
		})
	}

	// Through the protocol: the hover of an open buffer is one call too.
	c := startServer(t, d, fastOpts())
	c.initialize()
	uri := lsp.PathToURI(path)
	c.open(uri, string(text))
	if p := c.diagnostics(uri); len(p.Diagnostics) != 1 || p.Diagnostics[0].Code != diag.CodeAgentUnknown {
		t.Fatalf("diagnostics through the daemon: %+v", p.Diagnostics)
	}
	f.calls.take()
	r := c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos})
	if r.Error != nil || !strings.Contains(string(r.Result), "Inherits: mine:dev") {
		t.Fatalf("hover: %s %+v", r.Result, r.Error)
	}
	if calls := f.calls.take(); !maps.Equal(calls, map[string]int{query.MethodAnalyze.Name(): 1}) {
		t.Errorf("daemon calls for one hover: %v, want one %s", calls, query.MethodAnalyze.Name())
	}
}

// TestDaemonAnalyzerFallsBack: when the daemon goes away, the in-process
// Workspace answers, and that is logged once.
func TestDaemonAnalyzerFallsBack(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	f := startFakeDaemon(t, filepath.Join(dir, "home"), nil)
	var logged syncBuffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	d := lsp.NewDaemonAnalyzer(f.client, newWorkspace(dir), log)
	path := filepath.Join(dir, devProfile)
	text := []byte(strings.Replace(read(t, path), "- helper", "- helpr", 1))
	ctx := context.Background()
	if got := d.Diagnose(ctx, path, text, nil); len(got) != 1 || got[0].Code != diag.CodeAgentUnknown {
		t.Fatalf("through the daemon: %v", got)
	}
	f.srv.Close()
	for range 3 {
		if got := d.Diagnose(ctx, path, text, nil); len(got) != 1 || got[0].Code != diag.CodeAgentUnknown {
			t.Fatalf("without the daemon: %v", got)
		}
	}
	if n := strings.Count(logged.String(), "does not answer"); n != 1 {
		t.Errorf("the fallback was logged %d times, want once:\n%s", n, logged.String())
	}
}

// syncBuffer is a strings.Builder safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHoverFollowsTheWholeChain: hover on the extends of corpus
// sb/profiles/dev-sb.md shows the whole chain, through profiles that are
// not open, with and without a daemon.
func TestHoverFollowsTheWholeChain(t *testing.T) {
	corpus := os.Getenv("AMPLIDEX_CORPUS")
	if corpus == "" {
		t.Skip("AMPLIDEX_CORPUS is not set: no corpus to test against")
	}
	bundled := []string{filepath.Join(corpus, "collections"), filepath.Join(corpus, "bundled")}
	home := t.TempDir()
	path := filepath.Join(corpus, "collections/Joi__amplifier-collection-switchboard/profiles/dev-sb.md")
	text := []byte(read(t, path))
	pos := cursor(t, string(text), "extends: toolkit:tool")
	const chain = "Inherits: sb:dev-sb → toolkit:toolkit-dev → developer-expertise:dev → foundation:base → foundation:foundation"

	local := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: home, Bundled: bundled}), analysis.WorkspaceOptions{})
	f := startFakeDaemon(t, home, bundled)
	remote := lsp.NewDaemonAnalyzer(f.client, analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: home}), analysis.WorkspaceOptions{}), nil)
	var got []string
	for _, a := range []lsp.Analyzer{local, remote} {
		md, ok := a.Hover(context.Background(), path, text, nil, pos)
		if !ok || !strings.Contains(md, chain+"\n") {
			t.Errorf("hover lacks %q:\n%s", chain, md)
		}
		got = append(got, md)
	}
	if got[0] != got[1] {
		t.Errorf("in process:\n%s\nthrough the daemon:\n%s", got[0], got[1])
	}
	if calls := f.calls.take(); !maps.Equal(calls, map[string]int{query.MethodAnalyze.Name(): 1}) {
		t.Errorf("daemon calls %v, want one %s", calls, query.MethodAnalyze.Name())
	}
}

// TestDaemonAnalyzerSendsTheBuffers: the buffer and the other open ones
// travel with the question, the buffer once.
func TestDaemonAnalyzerSendsTheBuffers(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	var seen query.AnalyzeParams
	mux := query.NewMux()
	query.Handle(mux, query.MethodAnalyze, func(_ context.Context, p query.AnalyzeParams) (*query.AnalyzeResult, error) {
		seen = p
		return &query.AnalyzeResult{Hover: "hi"}, nil
	})
	srv := server.New(mux, nil)
	sock := filepath.Join(t.TempDir(), "d.sock")
	if err := srv.Listen(sock); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := query.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	project := filepath.Join(dir, "project")
	w := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{}), analysis.WorkspaceOptions{Project: project,
		Schema: schema.Options{UnknownKeySeverity: diag.SeverityWarning}})
	d := lsp.NewDaemonAnalyzer(c, w, nil)
	path := filepath.Join(dir, devProfile)
	other := filepath.Join(dir, "work/mine/agents/helper.md")
	md, ok := d.Hover(ctx, path, []byte("mine"), map[string][]byte{path: []byte("mine"), other: []byte("theirs")}, pos(1, 2))
	if !ok || md != "hi" {
		t.Fatalf("hover = %q, %v", md, ok)
	}
	want := query.AnalyzeParams{Common: query.Common{Project: project}, Op: query.OpHover, Path: path, Text: "mine",
		Overlay: map[string]string{other: "theirs"}, Position: pos(1, 2), UnknownKey: diag.SeverityWarning}
	if seen.Common != want.Common || seen.Op != want.Op || seen.Path != want.Path || seen.Text != want.Text ||
		!maps.Equal(seen.Overlay, want.Overlay) || seen.Position != want.Position || seen.UnknownKey != want.UnknownKey {
		t.Errorf("params %+v, want %+v", seen, want)
	}
}

// TestDaemonAnalyzerReconnects: when the daemon goes away and another
// takes its place, the next question reconnects through Redial and is
// answered by the new daemon, which the log says once; when none answers,
// the in-process Workspace does, and Redial is not tried again at once.
func TestDaemonAnalyzerReconnects(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	home := filepath.Join(dir, "home")
	first, second := startFakeDaemon(t, home, nil), startFakeDaemon(t, home, nil)
	var logged syncBuffer
	d := lsp.NewDaemonAnalyzer(first.client, newWorkspace(dir), slog.New(slog.NewTextHandler(&logged, nil)))
	defer d.Close()
	var redials atomic.Int32
	var next atomic.Pointer[query.Client]
	next.Store(second.client)
	d.Redial = func(context.Context) (*query.Client, error) {
		redials.Add(1)
		if c := next.Load(); c != nil {
			return c, nil
		}
		return nil, errors.New("no daemon")
	}
	path := filepath.Join(dir, devProfile)
	text := []byte(strings.Replace(read(t, path), "- helper", "- helpr", 1))
	ctx := context.Background()
	diagnose := func() {
		t.Helper()
		if got := d.Diagnose(ctx, path, text, nil); len(got) != 1 || got[0].Code != diag.CodeAgentUnknown {
			t.Fatalf("diagnostics %v", got)
		}
	}
	diagnose()
	first.srv.Close()
	first.calls.take()
	diagnose()
	diagnose()
	if calls := second.calls.take(); calls[query.MethodAnalyze.Name()] != 2 || redials.Load() != 1 {
		t.Errorf("the new daemon answered %v, after %d redials; want 2 analyze calls after 1", calls, redials.Load())
	}
	if n := strings.Count(logged.String(), "new connection"); n != 1 || strings.Contains(logged.String(), "does not answer") {
		t.Errorf("the reconnection was logged %d times, want once, without a fallback:\n%s", n, logged.String())
	}

	// No daemon at all: in process, one Redial, logged once.
	next.Store(nil)
	second.srv.Close()
	diagnose()
	diagnose()
	if redials.Load() != 2 {
		t.Errorf("%d redials, want one more, none while backing off", redials.Load())
	}
	if n := strings.Count(logged.String(), "does not answer"); n != 1 {
		t.Errorf("the fallback was logged %d times, want once:\n%s", n, logged.String())
	}
}
