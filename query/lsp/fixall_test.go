package lsp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lsp"
)

// wireAction is a code action as the server sends it.
type wireAction struct {
	Title string
	Kind  string
	Edit  struct {
		Changes map[string][]struct {
			Range   diag.Range
			NewText string
		}
	}
}

// applyWire applies the edits of one document, in the client's encoding,
// as an editor does: each range in the text as it was.
func applyWire(t *testing.T, text string, a wireAction, uri string, utf8 bool) string {
	t.Helper()
	if len(a.Edit.Changes) != 1 || a.Edit.Changes[uri] == nil {
		t.Fatalf("the action edits %v, want %s alone", slices.Collect(func(yield func(string) bool) {
			for u := range a.Edit.Changes {
				if !yield(u) {
					return
				}
			}
		}), uri)
	}
	edits := a.Edit.Changes[uri]
	sort.Slice(edits, func(i, j int) bool {
		return lsp.OffsetOf([]byte(text), edits[i].Range.Start, utf8) > lsp.OffsetOf([]byte(text), edits[j].Range.Start, utf8)
	})
	out := text
	prev := len(text) + 1
	for _, e := range edits {
		s, end := lsp.OffsetOf([]byte(text), e.Range.Start, utf8), lsp.OffsetOf([]byte(text), e.Range.End, utf8)
		if s > end || end > prev {
			t.Fatalf("edits overlap or run backwards: %+v", edits)
		}
		out = out[:s] + e.NewText + out[end:]
		prev = s
	}
	return out
}

// codeActionsOf asks for the code actions of the whole of text with only
// (nil: every kind).
func (c *client) codeActionsOf(uri, text string, only []string) []wireAction {
	c.t.Helper()
	lines := strings.Count(text, "\n")
	ctx := map[string]any{"diagnostics": []any{}}
	if only != nil {
		ctx["only"] = only
	}
	r := c.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": rng(0, 0, lines, 0), "context": ctx})
	if r.Error != nil {
		c.t.Fatalf("codeAction: %s", r.Error.Message)
	}
	var actions []wireAction
	if err := json.Unmarshal(r.Result, &actions); err != nil {
		c.t.Fatalf("codeAction: %s: %v", r.Result, err)
	}
	return actions
}

// fixAllOf returns the source.fixAll actions among actions.
func fixAllOf(actions []wireAction) []wireAction {
	var out []wireAction
	for _, a := range actions {
		if a.Kind == query.ActionFixAll {
			out = append(out, a)
		}
	}
	return out
}

// TestFixAll: the server offers source.fixAll.amplidex in initialize and
// answers a request for it (by its name, "source.fixAll" or "source")
// with one action whose edits, in the client's encoding, make every fix
// `check --fix` makes, in rounds (agnets renamed brings the misspelt
// agent to light), and nothing else: not the rename of the profile
// (a choice of the author's), not a fix that would write an item twice,
// not a fix of what the Filter does not report. A request for every kind
// or for quick fixes does not get it; a document with nothing to fix gets
// no action.
func TestFixAll(t *testing.T) {
	dir := unpack(t, "actions.txtar")
	path := filepath.Join(dir, "project/.amplifier/collections/mine/profiles/dev.md")
	uri := lsp.PathToURI(path)
	wide := strings.Replace(devText, "See @foundation:context/shared.md", "See 😀 漢字 @foundation:context/shared.md", 1)
	broken := strings.NewReplacer("agents:", "agnets:", "- helper", "- helpr", "context/shared.md", "context/shard.md",
		"foundation:base", "foundaton:base", "name: dev", "name: devv").Replace(wide)
	fixed := strings.Replace(wide, "name: dev", "name: devv", 1)
	for _, enc := range []string{"utf-16", "utf-8"} {
		t.Run(enc, func(t *testing.T) {
			w := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")}),
				analysis.WorkspaceOptions{Project: filepath.Join(dir, "project")})
			c := startServer(t, w, fastOpts())
			var caps map[string]any
			if enc == "utf-8" {
				caps = c.initialize("utf-8")
			} else {
				caps = c.initialize()
			}
			if kinds := fmt.Sprint(caps["capabilities"].(map[string]any)["codeActionProvider"]); !strings.Contains(kinds, query.ActionFixAll) {
				t.Errorf("codeActionProvider = %v, want %s among its kinds", kinds, query.ActionFixAll)
			}
			c.open(uri, broken)
			for _, only := range [][]string{{query.ActionFixAll}, {"source.fixAll"}, {"source"}} {
				actions := c.codeActionsOf(uri, broken, only)
				if len(actions) != 1 || actions[0].Kind != query.ActionFixAll || actions[0].Title == "" {
					t.Fatalf("only %v: %+v, want one %s action", only, actions, query.ActionFixAll)
				}
				if got := applyWire(t, broken, actions[0], uri, enc == "utf-8"); got != fixed {
					t.Errorf("only %v: after the action:\n%s\nwant:\n%s", only, got, fixed)
				}
			}
			for _, only := range [][]string{nil, {"quickfix"}, {"refactor"}} {
				if got := fixAllOf(c.codeActionsOf(uri, broken, only)); len(got) != 0 {
					t.Errorf("only %v: %+v, want no %s action", only, got, query.ActionFixAll)
				}
			}
			if got := c.codeActionsOf(uri, broken, []string{"quickfix"}); len(got) == 0 {
				t.Error("no quick fixes of the broken profile")
			}

			clean := c.changeAndWait(uri, 2, fixed)
			if got := c.codeActionsOf(uri, clean, []string{"source.fixAll"}); len(got) != 0 {
				t.Errorf("fixAll of a profile with nothing to fix: %+v", got)
			}
			dup := strings.Replace(wide, "  - helper\n", "  - helper\n  - helpr\n", 1)
			c.changeAndWait(uri, 3, dup)
			if got := c.codeActionsOf(uri, dup, []string{"source.fixAll"}); len(got) != 0 {
				t.Errorf("fixAll of a fix that would write helper twice: %+v", got)
			}
		})
	}

	t.Run("filter", func(t *testing.T) {
		w := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")}),
			analysis.WorkspaceOptions{Project: filepath.Join(dir, "project")})
		opts := fastOpts()
		opts.Filter = func(_ string, ds []diag.Diagnostic) []diag.Diagnostic {
			return slices.DeleteFunc(slices.Clone(ds), func(d diag.Diagnostic) bool { return d.Code == diag.CodeAgentUnknown })
		}
		c := startServer(t, w, opts)
		c.initialize()
		c.open(uri, broken)
		actions := c.codeActionsOf(uri, broken, []string{"source.fixAll"})
		if len(actions) != 1 {
			t.Fatalf("%+v, want one action", actions)
		}
		if got, want := applyWire(t, broken, actions[0], uri, false), strings.Replace(fixed, "- helper", "- helpr", 1); got != want {
			t.Errorf("with the unknown agent not reported, after the action:\n%s\nwant:\n%s", got, want)
		}
	})
}

// changeAndWait replaces the text of uri and waits for its diagnostics
// of that version; it returns text.
func (c *client) changeAndWait(uri string, version int, text string) string {
	c.t.Helper()
	c.changeAll(uri, version, text)
	for {
		p := c.diagnostics(uri)
		if p.Version != nil && int(*p.Version) == version {
			return text
		}
	}
}

// TestFixAllThroughTheDaemon: the fixes of source.fixAll are one analyze
// call each round through the daemon, and the same as in process.
func TestFixAllThroughTheDaemon(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	f := startFakeDaemon(t, home, nil)
	local := &countingLocal{Local: analysis.NewLocal(analysis.LocalOptions{Home: home})}
	d := lsp.NewDaemonAnalyzer(f.client, analysis.NewWorkspace(local, analysis.WorkspaceOptions{Project: project}), nil)
	ref := newWorkspace(dir)
	path := filepath.Join(dir, devProfile)
	text := []byte(strings.Replace(read(t, path), "- helper", "- helpr", 1))
	ctx := context.Background()
	ds := ref.Diagnose(ctx, path, text, nil)
	f.calls.take()
	got := d.SafeFixes(ctx, path, text, nil, ds)
	if calls := f.calls.take(); calls[query.MethodAnalyze.Name()] != 1 || len(calls) != 1 {
		t.Errorf("daemon calls %v, want one %s", calls, query.MethodAnalyze.Name())
	}
	if n := local.count(); n != 0 {
		t.Errorf("the in-process catalog was asked %d times", n)
	}
	want := ref.SafeFixes(ctx, path, text, nil, ds)
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if len(got) != 1 || string(gj) != string(wj) {
		t.Errorf("through the daemon:\n%s\nin process:\n%s", gj, wj)
	}
	fixedText, err := analysis.ApplyEdits(text, got)
	if err != nil || !bytes.Contains(fixedText, []byte("- helper\n")) {
		t.Errorf("after the fixes (%v):\n%s", err, fixedText)
	}
}

// TestLineEdits: the edits take the old text to the new, line by line
// when the lines are as many, the lines between the common start and end
// at once otherwise.
func TestLineEdits(t *testing.T) {
	tests := []struct {
		old, new string
		edits    int
	}{
		{"a\nb\nc\n", "a\nB\nc\n", 1},
		{"a\nb\nc\nd\n", "A\nb\nc\nD\n", 2},
		{"a\r\nb\r\n", "a\r\nB\r\n", 1},
		{"a\nb", "a\nB", 1},
		{"a\nb", "a\nb\n", 1},
		{"a\nb\nc\n", "a\nx\ny\nc\n", 1},
		{"a\nb\nc\n", "a\nc\n", 1},
		{"", "x\n", 1},
		{"x\n", "", 1},
		{"😀 b\n漢\n", "😀 B\n漢字\n", 2},
		{"same\n", "same\n", 0},
	}
	for _, tc := range tests {
		edits := lsp.LineEdits([]byte(tc.old), []byte(tc.new))
		got, err := analysis.ApplyEdits([]byte(tc.old), edits)
		if err != nil || string(got) != tc.new || len(edits) != tc.edits {
			t.Errorf("%q → %q: %d edits %+v give %q (%v), want %d", tc.old, tc.new, len(edits), edits, got, err, tc.edits)
		}
	}
}

// FuzzLineEdits: whatever the two texts, the edits take one to the other.
func FuzzLineEdits(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("a\r\nb", "a\nb\r\n")
	f.Add("😀\n\n", "\n😀")
	f.Fuzz(func(t *testing.T, old, new string) {
		edits := lsp.LineEdits([]byte(old), []byte(new))
		got, err := analysis.ApplyEdits([]byte(old), edits)
		if err != nil || string(got) != new {
			t.Fatalf("%q → %q: edits %+v give %q (%v)", old, new, edits, got, err)
		}
	})
}
