package lsp

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/query"
)

// DaemonAnalyzer is the Analyzer backed by the daemon: each request of the
// editor is one analyze call (query.MethodAnalyze), which the daemon
// answers with the same Workspace code over its own catalog's View of the
// file's project, at one clock, once every change made before the call is
// indexed. When the daemon does not answer, the in-process Workspace does;
// that is logged once, and so is the daemon's return.
type DaemonAnalyzer struct {
	// Roots are the client's own roots, sent with every question so that
	// the daemon answers over them (see query.Common.Roots); nil sends
	// none, and the daemon answers over its configuration's.
	Roots *query.Roots

	client  *query.Client
	local   *Workspace
	timeout time.Duration
	log     *slog.Logger

	mu     sync.Mutex // guards fields below
	failed bool       // the last call failed (said once in the log)
}

// NewDaemonAnalyzer returns an Analyzer that asks the daemon through c,
// and local when the daemon fails; local also says which project a file
// belongs to and which schema options the buffers are checked with. log
// (nil for none) hears when it falls back and when the daemon answers
// again.
func NewDaemonAnalyzer(c *query.Client, local *Workspace, log *slog.Logger) *DaemonAnalyzer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &DaemonAnalyzer{client: c, local: local, timeout: 5 * time.Second, log: log}
}

var (
	_ Analyzer    = (*DaemonAnalyzer)(nil)
	_ Invalidator = (*DaemonAnalyzer)(nil)
)

// Invalidate passes a saved file on to the in-process Workspace; the
// daemon watches the files itself.
func (d *DaemonAnalyzer) Invalidate(path string) { d.local.Invalidate(path) }

// Diagnose implements Analyzer.
func (d *DaemonAnalyzer) Diagnose(ctx context.Context, path string, text []byte, overlay map[string][]byte) []discovery.Diagnostic {
	if kindOf(path) == fileOther {
		return nil
	}
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpDiagnose}, path, text, overlay); ok {
		return res.Diagnostics
	}
	return d.local.Diagnose(ctx, path, text, overlay)
}

// Complete implements Analyzer.
func (d *DaemonAnalyzer) Complete(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos discovery.Position) []query.CompletionItem {
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpComplete, Position: pos}, path, text, overlay); ok {
		return res.Items
	}
	return d.local.Complete(ctx, path, text, overlay, pos)
}

// Definition implements Analyzer.
func (d *DaemonAnalyzer) Definition(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos discovery.Position) []query.Location {
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpDefinition, Position: pos}, path, text, overlay); ok {
		return res.Locations
	}
	return d.local.Definition(ctx, path, text, overlay, pos)
}

// Hover implements Analyzer.
func (d *DaemonAnalyzer) Hover(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos discovery.Position) (string, bool) {
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpHover, Position: pos}, path, text, overlay); ok {
		return res.Hover, res.Hover != ""
	}
	return d.local.Hover(ctx, path, text, overlay, pos)
}

// CodeActions implements Analyzer.
func (d *DaemonAnalyzer) CodeActions(ctx context.Context, path string, text []byte, overlay map[string][]byte, rng discovery.Range) []query.CodeAction {
	if kindOf(path) == fileOther {
		return nil
	}
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpCodeActions, Position: rng.Start, Range: &rng}, path, text, overlay); ok {
		return res.Actions
	}
	return d.local.CodeActions(ctx, path, text, overlay, rng)
}

// References implements Analyzer.
func (d *DaemonAnalyzer) References(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos discovery.Position, includeDeclaration bool) []query.Location {
	p := query.AnalyzeParams{Op: query.OpReferences, Position: pos, IncludeDeclaration: includeDeclaration}
	if res, ok := d.ask(ctx, p, path, text, overlay); ok {
		return res.Locations
	}
	return d.local.References(ctx, path, text, overlay, pos, includeDeclaration)
}

// ask makes the one call of a request: p holds its op and cursor, ask
// adds the rest. ok is false when the daemon did not answer and the
// in-process Workspace should; a request whose ctx ended gets an empty
// answer, not the fallback's work.
func (d *DaemonAnalyzer) ask(ctx context.Context, p query.AnalyzeParams, path string, text []byte, overlay map[string][]byte) (*query.AnalyzeResult, bool) {
	p.Common = query.Common{Project: d.local.ProjectOf(path), Roots: d.Roots}
	p.Path, p.Text = path, string(text)
	p.UnknownKey = d.local.schema.UnknownKeySeverity
	for q, t := range overlay {
		if q == path {
			continue
		}
		if p.Overlay == nil {
			p.Overlay = make(map[string]string, len(overlay))
		}
		p.Overlay[q] = string(t)
	}
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	res, _, err := query.Call(cctx, d.client, query.MethodAnalyze, p)
	if ctx.Err() != nil {
		return &query.AnalyzeResult{}, true
	}
	d.mu.Lock()
	was := d.failed
	d.failed = err != nil
	d.mu.Unlock()
	switch {
	case err != nil && !was:
		d.log.Warn("lsp: the daemon does not answer; analyzing in process", "err", err)
	case err == nil && was:
		d.log.Info("lsp: the daemon answers again")
	}
	if err != nil || res == nil {
		return nil, false
	}
	return res, true
}
