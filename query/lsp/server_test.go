package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lsp"
	"github.com/amplidex/amplidex/query/lsp/jsonrpc"
)

const agentURI = "file:///work/coll/agents/helper.md"

func fastOpts() lsp.Options { return lsp.Options{Debounce: time.Millisecond} }

func rng(l1, c1, l2, c2 int) diag.Range {
	return diag.Range{Start: diag.Position{Line: l1, Character: c1}, End: diag.Position{Line: l2, Character: c2}}
}

func TestLifecycle(t *testing.T) {
	t.Run("requests before initialize", func(t *testing.T) {
		c := startServer(t, &fake{}, fastOpts())
		r := c.call("textDocument/hover", map[string]any{})
		if r.Error == nil || r.Error.Code != jsonrpc.CodeServerNotInitialized {
			t.Fatalf("hover before initialize: got %+v, want error %d", r.Error, jsonrpc.CodeServerNotInitialized)
		}
	})
	t.Run("shutdown then exit", func(t *testing.T) {
		c := startServer(t, &fake{}, fastOpts())
		c.initialize()
		r := c.call("shutdown", nil)
		if r.Error != nil || string(r.Result) != "null" {
			t.Fatalf("shutdown: result %s error %+v, want null", r.Result, r.Error)
		}
		r = c.call("textDocument/hover", map[string]any{})
		if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidRequest {
			t.Fatalf("request after shutdown: got %+v, want error %d", r.Error, jsonrpc.CodeInvalidRequest)
		}
		c.notify("exit", nil)
		if err := c.serveResult(); err != nil {
			t.Fatalf("Serve after shutdown and exit = %v, want nil", err)
		}
	})
	t.Run("exit without shutdown", func(t *testing.T) {
		c := startServer(t, &fake{}, fastOpts())
		c.initialize()
		c.notify("exit", nil)
		if err := c.serveResult(); !errors.Is(err, lsp.ErrNoShutdown) {
			t.Fatalf("Serve = %v, want ErrNoShutdown", err)
		}
	})
	t.Run("end of input without shutdown", func(t *testing.T) {
		c := startServer(t, &fake{}, fastOpts())
		c.initialize()
		c.in.Close()
		if err := c.serveResult(); !errors.Is(err, lsp.ErrNoShutdown) {
			t.Fatalf("Serve = %v, want ErrNoShutdown", err)
		}
	})
	t.Run("end of input after shutdown", func(t *testing.T) {
		c := startServer(t, &fake{}, fastOpts())
		c.initialize()
		c.call("shutdown", nil)
		c.in.Close()
		if err := c.serveResult(); err != nil {
			t.Fatalf("Serve = %v, want nil", err)
		}
	})
	t.Run("initialize twice", func(t *testing.T) {
		c := startServer(t, &fake{}, fastOpts())
		c.initialize()
		r := c.call("initialize", map[string]any{"capabilities": map[string]any{}})
		if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidRequest {
			t.Fatalf("second initialize: got %+v, want error %d", r.Error, jsonrpc.CodeInvalidRequest)
		}
	})
}

func TestPositionEncodingNegotiation(t *testing.T) {
	tests := []struct {
		name    string
		offered []string
		want    string
	}{
		{"nothing offered", nil, "utf-16"},
		{"utf-16 only", []string{"utf-16"}, "utf-16"},
		{"utf-8 offered", []string{"utf-32", "utf-16", "utf-8"}, "utf-8"},
		{"utf-32 only", []string{"utf-32"}, "utf-16"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := startServer(t, &fake{}, fastOpts())
			res := c.initialize(tc.offered...)
			caps := res["capabilities"].(map[string]any)
			if got := caps["positionEncoding"]; got != tc.want {
				t.Errorf("positionEncoding = %v, want %s", got, tc.want)
			}
			sync := caps["textDocumentSync"].(map[string]any)
			if sync["change"] != float64(2) || sync["openClose"] != true {
				t.Errorf("textDocumentSync = %v, want incremental with open/close", sync)
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	c := startServer(t, &fake{}, fastOpts())
	c.initialize()
	tests := []struct {
		name   string
		method string
		params any
		code   int
	}{
		{"unknown method", "workspace/symbol", map[string]any{"query": ""}, jsonrpc.CodeMethodNotFound},
		{"params of the wrong shape", "textDocument/completion", []int{1, 2}, jsonrpc.CodeInvalidParams},
		{"missing params", "textDocument/definition", nil, jsonrpc.CodeInvalidParams},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.call(tc.method, tc.params)
			if r.Error == nil || r.Error.Code != tc.code {
				t.Fatalf("%s: got error %+v, want code %d", tc.method, r.Error, tc.code)
			}
		})
	}
}

func frameOf(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

func TestMalformedInputIsSurvived(t *testing.T) {
	tests := []struct {
		name  string
		input string
		errID string // the id of the error response that comes back; "" for none
	}{
		{"header without colon", "Garbage header\r\n\r\n", ""},
		{"non-numeric length", "Content-Length: ten\r\n\r\n", ""},
		{"negative length", "Content-Length: -5\r\n\r\n", ""},
		{"no length", "Content-Type: x\r\n\r\n", ""},
		{"header line too long", strings.Repeat("h", 10000) + "\r\n\r\n", ""},
		{"body is not JSON", frameOf("{oops"), "null"},
		{"not JSON-RPC 2.0", frameOf(`{"jsonrpc":"1.0","id":7,"method":"x"}`), "7"},
		{"id of the wrong type", frameOf(`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`), "null"},
		{"huge length refused", "Content-Length: 99999\r\n\r\n" + strings.Repeat("x", 99999), ""},
		{"body without its framing", `{"jsonrpc":"2.0","method":"x"}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := startServer(t, &fake{}, lsp.Options{Debounce: time.Millisecond, MaxMessage: 1024})
			c.raw(tc.input)
			if tc.errID != "" {
				m := c.read()
				if m.Error == nil || string(m.ID) != tc.errID {
					t.Fatalf("got %+v (id %s), want an error response with id %s", m, m.ID, tc.errID)
				}
			}
			// The session goes on: the handshake works.
			c.initialize()
			c.call("shutdown", nil)
			c.notify("exit", nil)
			if err := c.serveResult(); err != nil {
				t.Fatalf("Serve = %v, want nil", err)
			}
		})
	}
}

func TestTruncatedInput(t *testing.T) {
	tests := []struct{ name, input string }{
		{"inside a header", "Content-Len"},
		{"inside a body", "Content-Length: 50\r\n\r\n{\"jsonrpc\""},
		{"between header and body", "Content-Length: 50\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := startServer(t, &fake{}, fastOpts())
			c.raw(tc.input)
			c.in.Close()
			if err := c.serveResult(); !errors.Is(err, lsp.ErrNoShutdown) {
				t.Fatalf("Serve = %v, want ErrNoShutdown", err)
			}
		})
	}
}

func TestBrokenAgentDiagnostics(t *testing.T) {
	c := startServer(t, &fake{}, fastOpts())
	c.initialize()
	c.open(agentURI, "---\nname: helper\nBAD: 1\n---\n")
	p := c.diagnostics(agentURI)
	if len(p.Diagnostics) != 1 {
		t.Fatalf("got %d diagnostics, want 1: %+v", len(p.Diagnostics), p)
	}
	d := p.Diagnostics[0]
	if d.Range != rng(2, 0, 2, 3) || d.Code != diag.CodeUnknownKey || d.Severity != 1 || d.Source != "amplidex" {
		t.Errorf("diagnostic = %+v, want %s at 2:0-2:3, severity 1", d, diag.CodeUnknownKey)
	}
	if p.Version == nil || *p.Version != 1 {
		t.Errorf("version = %v, want 1", p.Version)
	}

	c.changeRange(agentURI, 2, rng(2, 0, 2, 3), "description")
	p = c.diagnostics(agentURI)
	if len(p.Diagnostics) != 0 || p.Version == nil || *p.Version != 2 {
		t.Fatalf("after the fix: %+v, want an empty list for version 2", p)
	}
	if p.Diagnostics == nil {
		t.Error("an empty result must be published as [], not null")
	}

	c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": agentURI}})
	p = c.diagnostics(agentURI)
	if len(p.Diagnostics) != 0 {
		t.Fatalf("after close: %+v, want an empty list", p)
	}
}

func TestCloseClearsDiagnostics(t *testing.T) {
	c := startServer(t, &fake{}, fastOpts())
	c.initialize()
	c.open(agentURI, "BAD")
	if p := c.diagnostics(agentURI); len(p.Diagnostics) != 1 {
		t.Fatalf("got %+v, want one diagnostic", p)
	}
	c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": agentURI}})
	p := c.diagnostics(agentURI)
	if p.Diagnostics == nil || len(p.Diagnostics) != 0 {
		t.Fatalf("after close: %+v, want []", p)
	}
}

func TestUnicodeColumns(t *testing.T) {
	// "😀" is 4 bytes and 2 UTF-16 units; "漢字" is 6 bytes and 2 units.
	text := "---\nname: helper\ndescription: \"😀 漢字 x\" BAD\n---\n"
	prefix := `description: "😀 漢字 x" `
	tests := []struct {
		name      string
		encodings []string
		col       int
	}{
		{"utf-16", nil, len(prefix) - 4 - 6 + 2 + 2},
		{"utf-8", []string{"utf-8", "utf-16"}, len(prefix)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := startServer(t, &fake{}, fastOpts())
			c.initialize(tc.encodings...)
			c.open(agentURI, text)
			p := c.diagnostics(agentURI)
			if len(p.Diagnostics) != 1 {
				t.Fatalf("got %+v, want one diagnostic", p)
			}
			if got, want := p.Diagnostics[0].Range, rng(2, tc.col, 2, tc.col+3); got != want {
				t.Fatalf("range = %+v, want %+v", got, want)
			}
			// An edit in the same encoding replaces exactly the marker.
			c.changeRange(agentURI, 2, rng(2, tc.col, 2, tc.col+3), "ok")
			if p := c.diagnostics(agentURI); len(p.Diagnostics) != 0 {
				t.Fatalf("after the edit: %+v, want none", p)
			}
		})
	}
}

func TestIncrementalEditsAcrossSurrogates(t *testing.T) {
	f := &fake{}
	c := startServer(t, f, fastOpts())
	c.initialize()
	c.open(agentURI, "a😀b\n漢字\n")
	// Insert "X" after the emoji (UTF-16 column 3), then replace "字"
	// (column 1-2 on line 1), then delete the first line's "a".
	c.changeRange(agentURI, 2, rng(0, 3, 0, 3), "X")
	c.changeRange(agentURI, 3, rng(1, 1, 1, 2), "Z")
	c.changeRange(agentURI, 4, rng(0, 0, 0, 1), "")
	for {
		p := c.diagnostics(agentURI)
		if p.Version != nil && *p.Version == 4 {
			break
		}
	}
	seen := f.seen()
	if got, want := seen[len(seen)-1], "😀Xb\n漢Z\n"; got != want {
		t.Fatalf("text after edits = %q, want %q", got, want)
	}
}

func TestQuickEditsPublishOnlyTheLatest(t *testing.T) {
	started := make(chan struct{}, 16)
	f := &fake{block: func(ctx context.Context, text string) {
		if strings.Contains(text, "first") {
			started <- struct{}{}
			<-ctx.Done() // a superseded run is cancelled
		}
	}}
	c := startServer(t, f, lsp.Options{Debounce: 5 * time.Millisecond})
	c.initialize()
	c.open(agentURI, "BAD first")
	// Make sure the first run is in progress, so the second edit has to
	// cancel it rather than merely restart the debounce.
	select {
	case <-started:
	case <-time.After(waitFor):
		t.Fatal("the first run did not start")
	}
	c.changeAll(agentURI, 2, "BAD BAD second")
	c.changeAll(agentURI, 3, "BAD BAD BAD third")
	p := c.diagnostics(agentURI)
	if p.Version == nil || *p.Version != 3 || len(p.Diagnostics) != 3 {
		t.Fatalf("first publication: version %v with %d diagnostics, want version 3 with 3", p.Version, len(p.Diagnostics))
	}
	// Nothing else is published before the shutdown response: the loop
	// handles results in order, and the cancelled run sends none.
	id := c.start("shutdown", nil)
	for {
		m := c.read()
		if m.Method == "textDocument/publishDiagnostics" {
			t.Fatalf("stale publication after the latest: %s", m.Params)
		}
		if string(m.ID) == fmt.Sprint(id) {
			break
		}
	}
}

func TestUncheckedFilesGetNoDiagnostics(t *testing.T) {
	f := &fake{}
	c := startServer(t, f, fastOpts())
	c.initialize()
	readme := "file:///work/coll/agents/README.md"
	c.open(readme, "BAD")
	c.open(agentURI, "BAD")
	p := c.diagnostics(agentURI)
	if len(p.Diagnostics) != 1 {
		t.Fatalf("agent: %+v", p)
	}
	for _, s := range f.seen() {
		if s != "BAD" {
			t.Fatalf("unexpected text diagnosed: %q", s)
		}
	}
	if n := len(f.seen()); n != 1 {
		t.Fatalf("Diagnose called %d times, want once (README.md is not checked)", n)
	}
}

func TestCancelRequest(t *testing.T) {
	entered := make(chan struct{})
	f := &fake{complete: func(ctx context.Context, text []byte, pos diag.Position) []query.CompletionItem {
		close(entered)
		<-ctx.Done()
		return nil
	}}
	c := startServer(t, f, fastOpts())
	c.initialize()
	c.open(agentURI, "x")
	id := c.start("textDocument/completion", map[string]any{
		"textDocument": map[string]any{"uri": agentURI}, "position": diag.Position{}})
	select {
	case <-entered:
	case <-time.After(waitFor):
		t.Fatal("completion did not start")
	}
	c.notify("$/cancelRequest", map[string]any{"id": id})
	r := c.response(id)
	if r.Error == nil || r.Error.Code != jsonrpc.CodeRequestCancelled {
		t.Fatalf("cancelled completion: got %+v, want error %d", r.Error, jsonrpc.CodeRequestCancelled)
	}
}

func TestPositionRequests(t *testing.T) {
	text := "---\nextends: 😀 base\n---\n"
	target := "/work/coll/profiles/base.md"
	var gotPos []diag.Position
	f := &fake{
		complete: func(ctx context.Context, text []byte, pos diag.Position) []query.CompletionItem {
			gotPos = append(gotPos, pos)
			r := rng(1, 12, 1, 16)
			return []query.CompletionItem{{Label: "foundation:base", Kind: query.CompletionReference, Detail: "bundled", Replace: &r}}
		},
		define: func(pos diag.Position) []query.Location {
			gotPos = append(gotPos, pos)
			return []query.Location{{Path: target, Range: rng(0, 0, 0, 0)}}
		},
		hover: func(text []byte, pos diag.Position) (string, bool) {
			gotPos = append(gotPos, pos)
			return "**base** resolves to `" + target + "`", true
		},
	}
	tests := []struct {
		name      string
		encodings []string
		col       int // the column of "base" in the client's encoding
		editStart int
	}{
		{"utf-16", nil, 12, 12},
		{"utf-8", []string{"utf-8"}, 14, 14},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gotPos = nil
			c := startServer(t, f, fastOpts())
			c.initialize(tc.encodings...)
			c.open("file:///work/coll/profiles/dev.md", text)
			at := map[string]any{"textDocument": map[string]any{"uri": "file:///work/coll/profiles/dev.md"},
				"position": diag.Position{Line: 1, Character: tc.col}}

			r := c.call("textDocument/completion", at)
			var list struct {
				Items []struct {
					Label    string
					Kind     int
					TextEdit struct {
						Range   diag.Range
						NewText string
					}
				}
			}
			if err := json.Unmarshal(r.Result, &list); err != nil || len(list.Items) != 1 {
				t.Fatalf("completion: %s (%v)", r.Result, err)
			}
			it := list.Items[0]
			if it.Label != "foundation:base" || it.Kind != 18 || it.TextEdit.Range != rng(1, tc.editStart, 1, tc.editStart+4) {
				t.Errorf("completion item = %+v", it)
			}

			r = c.call("textDocument/definition", at)
			var locs []struct {
				URI   string
				Range diag.Range
			}
			if err := json.Unmarshal(r.Result, &locs); err != nil || len(locs) != 1 || locs[0].URI != "file://"+target {
				t.Errorf("definition: %s (%v)", r.Result, err)
			}

			r = c.call("textDocument/hover", at)
			var h struct{ Contents struct{ Kind, Value string } }
			if err := json.Unmarshal(r.Result, &h); err != nil || h.Contents.Kind != "markdown" || !strings.Contains(h.Contents.Value, target) {
				t.Errorf("hover: %s (%v)", r.Result, err)
			}
			for _, p := range gotPos {
				if p != (diag.Position{Line: 1, Character: 12}) {
					t.Errorf("analyzer saw position %+v, want UTF-16 1:12", p)
				}
			}
		})
	}
}

func TestAnalyzerPanicIsAnInternalError(t *testing.T) {
	f := &fake{hover: func(text []byte, pos diag.Position) (string, bool) { panic("boom") }}
	c := startServer(t, f, fastOpts())
	c.initialize()
	c.open(agentURI, "x")
	r := c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": agentURI}, "position": diag.Position{}})
	if r.Error == nil || r.Error.Code != jsonrpc.CodeInternalError {
		t.Fatalf("got %+v, want an internal error", r.Error)
	}
	// The session survives.
	// The publication of the open may come after the change is sent: wait
	// for the change's own version.
	c.changeAll(agentURI, 2, "BAD")
	for {
		p := c.diagnostics(agentURI)
		if p.Version == nil || *p.Version != 2 {
			continue
		}
		if len(p.Diagnostics) != 1 {
			t.Fatalf("after the panic: %+v", p)
		}
		return
	}
}

func TestRequestsOnUnopenedDocuments(t *testing.T) {
	c := startServer(t, &fake{}, fastOpts())
	c.initialize()
	at := map[string]any{"textDocument": map[string]any{"uri": "file:///nowhere/x.md"}, "position": diag.Position{}}
	if r := c.call("textDocument/completion", at); r.Error != nil || !strings.Contains(string(r.Result), `"items":[]`) {
		t.Errorf("completion: %s %+v", r.Result, r.Error)
	}
	if r := c.call("textDocument/definition", at); r.Error != nil || string(r.Result) != "null" {
		t.Errorf("definition: %s %+v", r.Result, r.Error)
	}
}

func TestCancelledContextStopsServe(t *testing.T) {
	// Serve returns the context's error even while the input stays open.
	in, feed := io.Pipe()
	defer feed.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lsp.NewServer(&fake{}, lsp.Options{}).Serve(ctx, in, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(waitFor):
		t.Fatal("Serve did not return after cancel")
	}
}

// TestFilter: what the Filter drops is neither published nor fixed, and
// what it keeps is published as it reports it.
func TestFilter(t *testing.T) {
	bad := func(d diag.Diagnostic) bool { return d.Range.Start.Line == 0 }
	opts := fastOpts()
	var paths []string
	var mu sync.Mutex
	opts.Filter = func(path string, ds []diag.Diagnostic) []diag.Diagnostic {
		mu.Lock()
		paths = append(paths, path)
		mu.Unlock()
		var out []diag.Diagnostic
		for _, d := range ds {
			if bad(d) {
				continue // the first line's are ignored
			}
			d.Severity = diag.SeverityWarning
			out = append(out, d)
		}
		return out
	}
	f := &fake{actions: func(r diag.Range) []query.CodeAction {
		var out []query.CodeAction
		for _, line := range []int{0, 1} {
			d := diag.Diagnostic{Code: diag.CodeUnknownKey, Severity: diag.SeverityError,
				Path: "/work/coll/agents/helper.md", Range: rng(line, 0, line, 3), Message: "bad thing"}
			out = append(out, query.CodeAction{Title: fmt.Sprintf("fix line %d", line), Kind: query.ActionQuickFix, Diagnostic: &d,
				Edits: []query.TextEdit{{Path: d.Path, Range: d.Range, NewText: "GOOD"}}})
		}
		return out
	}}
	c := startServer(t, f, opts)
	c.initialize()
	c.open(agentURI, "BAD\nBAD\n")
	p := c.diagnostics(agentURI)
	if len(p.Diagnostics) != 1 || p.Diagnostics[0].Range.Start.Line != 1 || p.Diagnostics[0].Severity != 2 {
		t.Fatalf("published %+v, want the second line's, as a warning", p.Diagnostics)
	}
	mu.Lock()
	if len(paths) == 0 || paths[0] != "/work/coll/agents/helper.md" {
		t.Errorf("the Filter was asked about %q", paths)
	}
	mu.Unlock()
	r := c.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": agentURI},
		"range": rng(0, 0, 2, 0), "context": map[string]any{"diagnostics": []any{}}})
	var actions []struct {
		Title       string `json:"title"`
		Diagnostics []struct {
			Severity int `json:"severity"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(r.Result, &actions); err != nil || len(actions) != 1 || actions[0].Title != "fix line 1" ||
		len(actions[0].Diagnostics) != 1 || actions[0].Diagnostics[0].Severity != 2 {
		t.Fatalf("code actions %s (%v), want the fix of line 1 alone, its diagnostic a warning", r.Result, err)
	}
}
