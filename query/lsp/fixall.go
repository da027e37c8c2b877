package lsp

import (
	"bytes"
	"context"
	"maps"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
)

// Fixer is implemented by Analyzers that make the fixes of a buffer that
// need no choice: the server's source.fixAll code action asks it.
type Fixer interface {
	// SafeFixes returns the edits of path (in text) that fix ds without
	// asking, as `check --fix` makes them (analysis.Workspace.Fixes, the
	// unsafe ones left out): sorted, none overlapping another.
	SafeFixes(ctx context.Context, path string, text []byte, overlay map[string][]byte, ds []diag.Diagnostic) []query.TextEdit
}

var (
	_ Fixer = (*analysis.Workspace)(nil)
	_ Fixer = (*DaemonAnalyzer)(nil)
)

// SafeFixes implements Fixer: one analyze call (query.OpFixes).
func (d *DaemonAnalyzer) SafeFixes(ctx context.Context, path string, text []byte, overlay map[string][]byte, ds []diag.Diagnostic) []query.TextEdit {
	if !analysis.Checked(path) || len(ds) == 0 {
		return nil
	}
	if d.local.BundleDocument(path, text, overlay) {
		return d.local.SafeFixes(ctx, path, text, overlay, ds)
	}
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpFixes, Diagnostics: ds}, path, text, overlay); ok {
		return res.Edits
	}
	return d.local.SafeFixes(ctx, path, text, overlay, ds)
}

// fixAllRounds bounds the rounds of source.fixAll, as check --fix bounds
// its own: a fix can bring another to light (a key renamed to agents,
// its misspelt agent is seen).
const fixAllRounds = 10

// fixAllTitle is the title of the source.fixAll action.
const fixAllTitle = "Fix every amplidex problem that has one safe fix"

// askedActions answers textDocument/codeAction: the Analyzer's quick
// fixes and rewrites of rng, when only asks for them (or for every kind),
// and the source.fixAll action when only names it (or "source", or
// "source.fixAll"). Left out of a request for every kind, the fixAll
// action costs nothing while the cursor moves; fix on save and the
// "Source Action…" menu ask for it by name.
func (ss *session) askedActions(ctx context.Context, snap snapshot, rng diag.Range, only []string) []lspCodeAction {
	a := ss.srv.analyzer
	out := []lspCodeAction{}
	if len(only) == 0 || kindAsked(query.ActionQuickFix, only) || kindAsked(query.ActionRewrite, only) {
		out = ss.codeActions(a.CodeActions(ctx, snap.path, snap.text, snap.overlay, rng), snap, only)
	}
	if len(only) > 0 && kindAsked(query.ActionFixAll, only) {
		if ca, ok := ss.fixAll(ctx, snap); ok {
			out = append(out, ca)
		}
	}
	return out
}

// fixAll returns the source.fixAll action of the buffer: in rounds (as
// check --fix makes them), the diagnostics the server would publish (the
// Analyzer's, through the Filter) and the fixes the Analyzer makes of
// them without asking, each round over the text the one before left. Its
// edits take the buffer to the last text, line by line; ok is false when
// nothing is to fix or the Analyzer makes no fixes.
func (ss *session) fixAll(ctx context.Context, snap snapshot) (lspCodeAction, bool) {
	f, ok := ss.srv.analyzer.(Fixer)
	if !ok || !analysis.Checked(snap.path) {
		return lspCodeAction{}, false
	}
	overlay := maps.Clone(snap.overlay)
	if overlay == nil {
		overlay = map[string][]byte{}
	}
	text := snap.text
	for range fixAllRounds {
		overlay[snap.path] = text
		ds := ss.srv.analyzer.Diagnose(ctx, snap.path, text, overlay)
		if filter := ss.srv.opts.Filter; filter != nil {
			ds = filter(snap.path, ds)
		}
		own := ds[:0:0]
		for _, d := range ds {
			if d.Path == "" || d.Path == snap.path {
				own = append(own, d)
			}
		}
		edits := f.SafeFixes(ctx, snap.path, text, overlay, own)
		if ctx.Err() != nil || len(edits) == 0 {
			break
		}
		next, err := analysis.ApplyEdits(text, edits)
		if err != nil {
			ss.log.Error("lsp: source.fixAll", "path", snap.path, "err", err)
			break
		}
		text = next
	}
	if ctx.Err() != nil || bytes.Equal(text, snap.text) {
		return lspCodeAction{}, false
	}
	var lines *syntax.LineIndex
	if ss.utf8 {
		lines = syntax.NewLineIndex(snap.text)
	}
	var edits []textEdit
	for _, e := range lineEdits(snap.text, text) {
		r := e.Range
		if lines != nil {
			r = convertRange(lines, r, true)
		}
		edits = append(edits, textEdit{Range: r, NewText: e.NewText})
	}
	return lspCodeAction{Title: fixAllTitle, Kind: query.ActionFixAll,
		Edit: workspaceEdit{Changes: map[string][]textEdit{snap.uri: edits}}}, true
}

// lineEdits returns edits (UTF-16 ranges of old) that make old into new,
// a line at a time: the lines the two share at the start and at the end
// are kept; between them, when both have as many lines, each line that
// differs is replaced on its own (its line ending kept where both end
// alike), else the lines between are replaced as one.
func lineEdits(old, new []byte) []query.TextEdit {
	a, b := splitAfterNewline(old), splitAfterNewline(new)
	pre := 0
	for pre < len(a) && pre < len(b) && bytes.Equal(a[pre], b[pre]) {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && bytes.Equal(a[len(a)-1-suf], b[len(b)-1-suf]) {
		suf++
	}
	lines := syntax.NewLineIndex(old)
	starts := make([]int, len(a)+1) // byte offset of each line of old, and of its end
	for i, l := range a {
		starts[i+1] = starts[i] + len(l)
	}
	var out []query.TextEdit
	if len(a) != len(b) {
		var nt bytes.Buffer
		for _, l := range b[pre : len(b)-suf] {
			nt.Write(l)
		}
		return []query.TextEdit{{Range: lines.Range(starts[pre], starts[len(a)-suf]), NewText: nt.String()}}
	}
	for i := pre; i < len(a)-suf; i++ {
		if bytes.Equal(a[i], b[i]) {
			continue
		}
		x, y := a[i], b[i]
		if end := lineEnding(x); end != "" && end == lineEnding(y) {
			x, y = x[:len(x)-len(end)], y[:len(y)-len(end)]
		}
		out = append(out, query.TextEdit{Range: lines.Range(starts[i], starts[i]+len(x)), NewText: string(y)})
	}
	return out
}

// splitAfterNewline splits text into lines, each with its "\n" (the last
// may have none); empty text has no line.
func splitAfterNewline(text []byte) [][]byte {
	var out [][]byte
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// lineEnding returns the ending of a line: "\r\n", "\n" or "".
func lineEnding(l []byte) string {
	switch {
	case bytes.HasSuffix(l, []byte("\r\n")):
		return "\r\n"
	case bytes.HasSuffix(l, []byte("\n")):
		return "\n"
	}
	return ""
}
