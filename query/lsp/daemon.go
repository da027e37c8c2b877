package lsp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
)

// DaemonAnalyzer is the Analyzer backed by the daemon: each request of the
// editor (but of a bundle repository's documents, answered in process)
// is one analyze call (query.MethodAnalyze), which the daemon answers
// with the same engine (analysis.Workspace) over its own catalog's View
// of the file's project, at one clock, once every change made before the
// call is indexed. When the daemon does not answer, the in-process Workspace does;
// that is logged once, and so is the daemon's return.
//
// A call waits as long as the daemon says it works on what the call
// waits for (its first scan, the first read of the file's project), and
// otherwise at most five seconds; Tasks says what that work is, for the
// editor to show. When the connection is lost (the daemon stopped,
// restarted, or a newer build replaced it), Redial connects anew, and the
// call is asked again of the new daemon.
type DaemonAnalyzer struct {
	// Roots are the client's own roots, sent with every question so that
	// the daemon answers over them (see query.Common.Roots); nil sends
	// none, and the daemon answers over its configuration's.
	Roots *query.Roots
	// Redial, when set, connects to the daemon again once the connection
	// is lost; it may start a daemon. It is called by the first question
	// that finds the connection lost, the others answering in process
	// meanwhile (it is never called twice at once), and after a failure
	// not again for a while (one second, doubling up to 30). Set it
	// before the first question.
	Redial func(ctx context.Context) (*query.Client, error)

	local   *analysis.Workspace
	timeout time.Duration
	log     *slog.Logger

	mu     sync.Mutex    // guards fields below
	client *query.Client // the connection in use
	failed bool          // the last call failed (said once in the log)
	// redialing is set while Redial runs; after a failed one, no other
	// is tried before redialAt, and backoff is the wait after the next.
	redialing bool
	redialAt  time.Time
	backoff   time.Duration
	// asking counts the questions in flight by project, for Tasks.
	asking map[string]int
}

// redialTimeout bounds one Redial: it may start a daemon.
const redialTimeout = 20 * time.Second

// NewDaemonAnalyzer returns an Analyzer that asks the daemon through c,
// and local when the daemon fails; local also says which project a file
// belongs to and which schema options the buffers are checked with. log
// (nil for none) hears when it falls back and when the daemon answers
// again.
func NewDaemonAnalyzer(c *query.Client, local *analysis.Workspace, log *slog.Logger) *DaemonAnalyzer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &DaemonAnalyzer{client: c, local: local, timeout: 5 * time.Second, log: log, asking: map[string]int{}}
}

// Close closes the connection in use.
func (d *DaemonAnalyzer) Close() error {
	d.mu.Lock()
	c := d.client
	d.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.Close()
}

var (
	_ Analyzer    = (*DaemonAnalyzer)(nil)
	_ Invalidator = (*DaemonAnalyzer)(nil)
	_ Tasker      = (*DaemonAnalyzer)(nil)
)

// Invalidate passes a saved file on to the in-process Workspace; the
// daemon watches the files itself.
func (d *DaemonAnalyzer) Invalidate(path string) { d.local.Invalidate(path) }

// Diagnose implements Analyzer.
func (d *DaemonAnalyzer) Diagnose(ctx context.Context, path string, text []byte, overlay map[string][]byte) []diag.Diagnostic {
	if !analysis.Checked(path) {
		return nil
	}
	if d.local.BundleDocument(path, text, overlay) {
		return d.local.Diagnose(ctx, path, text, overlay)
	}
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpDiagnose}, path, text, overlay); ok {
		return res.Diagnostics
	}
	return d.local.Diagnose(ctx, path, text, overlay)
}

// Complete implements Analyzer.
func (d *DaemonAnalyzer) Complete(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) []query.CompletionItem {
	if d.local.BundleDocument(path, text, overlay) {
		return d.local.Complete(ctx, path, text, overlay, pos)
	}
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpComplete, Position: pos}, path, text, overlay); ok {
		return res.Items
	}
	return d.local.Complete(ctx, path, text, overlay, pos)
}

// Definition implements Analyzer.
func (d *DaemonAnalyzer) Definition(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) []query.Location {
	if d.local.BundleDocument(path, text, overlay) {
		return d.local.Definition(ctx, path, text, overlay, pos)
	}
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpDefinition, Position: pos}, path, text, overlay); ok {
		return res.Locations
	}
	return d.local.Definition(ctx, path, text, overlay, pos)
}

// Hover implements Analyzer.
func (d *DaemonAnalyzer) Hover(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) (string, bool) {
	if d.local.BundleDocument(path, text, overlay) {
		return d.local.Hover(ctx, path, text, overlay, pos)
	}
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpHover, Position: pos}, path, text, overlay); ok {
		return res.Hover, res.Hover != ""
	}
	return d.local.Hover(ctx, path, text, overlay, pos)
}

// CodeActions implements Analyzer.
func (d *DaemonAnalyzer) CodeActions(ctx context.Context, path string, text []byte, overlay map[string][]byte, rng diag.Range) []query.CodeAction {
	if !analysis.Checked(path) {
		return nil
	}
	if d.local.BundleDocument(path, text, overlay) {
		return d.local.CodeActions(ctx, path, text, overlay, rng)
	}
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpCodeActions, Position: rng.Start, Range: &rng}, path, text, overlay); ok {
		return res.Actions
	}
	return d.local.CodeActions(ctx, path, text, overlay, rng)
}

// References implements Analyzer.
func (d *DaemonAnalyzer) References(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position, includeDeclaration bool) []query.Location {
	if d.local.BundleDocument(path, text, overlay) {
		return d.local.References(ctx, path, text, overlay, pos, includeDeclaration)
	}
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
	p.UnknownKey = d.local.Schema().UnknownKeySeverity
	for q, t := range overlay {
		if q == path {
			continue
		}
		if p.Overlay == nil {
			p.Overlay = make(map[string]string, len(overlay))
		}
		p.Overlay[q] = string(t)
	}
	d.mu.Lock()
	c := d.client
	d.asking[p.Project]++
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		if d.asking[p.Project]--; d.asking[p.Project] == 0 {
			delete(d.asking, p.Project)
		}
		d.mu.Unlock()
	}()
	res, err := d.call(ctx, c, p)
	if ctx.Err() != nil {
		return &query.AnalyzeResult{}, true
	}
	if lost(err) {
		nc, pending := d.reconnect(ctx, c, err)
		if pending {
			// Another question is connecting again: answer in
			// process meanwhile, and let it say how that went.
			return nil, false
		}
		if nc != nil {
			res, err = d.call(ctx, nc, p)
			if ctx.Err() != nil {
				return &query.AnalyzeResult{}, true
			}
		}
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

// call asks c. It waits d.timeout, and as long again each time the daemon
// says it works on what p waits for, and once more after it said so last:
// the work that ended as the daemon was asked has its answer on the way,
// which may come after the daemon's word that it is done (or after a
// question about its work that a busy machine kept past the timeout).
func (d *DaemonAnalyzer) call(ctx context.Context, c *query.Client, p query.AnalyzeParams) (*query.AnalyzeResult, error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		res *query.AnalyzeResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, _, err := query.Call(cctx, c, query.MethodAnalyze, p)
		done <- answer{res, err}
	}()
	t := time.NewTimer(d.timeout)
	defer t.Stop()
	wasBusy := false
	for {
		select {
		case a := <-done:
			return a.res, a.err
		case <-t.C:
			sctx, scancel := context.WithTimeout(cctx, d.timeout)
			busy := len(tasksOf(sctx, c, map[string]int{p.Project: 1})) > 0
			scancel()
			if !busy && wasBusy {
				busy, wasBusy = true, false // once more: see above
			} else {
				wasBusy = busy
			}
			if !busy {
				select {
				case a := <-done:
					// The answer came while the daemon was asked: it
					// was on its way, not lost.
					return a.res, a.err
				default:
				}
				cancel()
				<-done
				return nil, fmt.Errorf("no answer within %s: %w", d.timeout, context.DeadlineExceeded)
			}
			t.Reset(d.timeout)
		}
	}
}

// lost reports an error that says the connection is gone, or the daemon
// is going: a new one may answer.
func lost(err error) bool {
	var qe *query.Error
	return errors.Is(err, query.ErrNoDaemon) || errors.Is(err, query.ErrClosed) ||
		(errors.As(err, &qe) && (qe.Code == query.CodeShuttingDown || qe.Code == query.CodeUnavailable))
}

// reconnect replaces old, whose connection was lost (why), with a new
// connection from Redial, and returns it; nil when there is none (no
// Redial, one failed a moment ago, or this one failed), with pending set
// when another question's Redial runs. A connection another question made
// meanwhile is returned as it is.
func (d *DaemonAnalyzer) reconnect(ctx context.Context, old *query.Client, why error) (c *query.Client, pending bool) {
	d.mu.Lock()
	switch {
	case d.client != old:
		c := d.client
		d.mu.Unlock()
		return c, false
	case d.redialing:
		d.mu.Unlock()
		return nil, true
	case d.Redial == nil || time.Now().Before(d.redialAt):
		d.mu.Unlock()
		return nil, false
	}
	d.redialing = true
	d.mu.Unlock()
	// A newer edit cancels the question, not the connection it needs.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), redialTimeout)
	c, err := d.Redial(rctx)
	cancel()
	if err == nil && c == nil {
		err = errors.New("no daemon runs")
	}
	d.mu.Lock()
	d.redialing = false
	if err != nil {
		d.backoff = min(max(2*d.backoff, time.Second), 30*time.Second)
		d.redialAt = time.Now().Add(d.backoff)
		d.mu.Unlock()
		d.log.Debug("lsp: no daemon to reconnect to", "err", err, "retry_in", d.backoff)
		return nil, false
	}
	d.client, d.backoff, d.redialAt = c, 0, time.Time{}
	failed := d.failed
	d.mu.Unlock()
	old.Close()
	if !failed {
		d.log.Info("lsp: the daemon went away; answering through a new connection", "why", why)
	}
	return c, false
}

// Tasks implements Tasker: the daemon's first scan, and the first read
// of each project a question in flight is about.
func (d *DaemonAnalyzer) Tasks(ctx context.Context) []Task {
	d.mu.Lock()
	c := d.client
	asking := maps.Clone(d.asking)
	d.mu.Unlock()
	return tasksOf(ctx, c, asking)
}

// tasksOf asks the daemon behind c what it works on that questions about
// the projects in asking wait for.
func tasksOf(ctx context.Context, c *query.Client, asking map[string]int) []Task {
	st, _, err := query.Call(ctx, c, query.MethodStatus, query.StatusParams{})
	if err != nil {
		return nil
	}
	var out []Task
	if p := st.Progress; st.Scanning && p != nil {
		out = append(out, Task{ID: "scan", Title: "amplidex: first scan",
			Message: fmt.Sprintf("%s: %s, %s", p.Phase, query.Plural(p.Files, "file"), query.Plural(p.Collections, "collection"))})
	}
	for _, r := range st.Registering {
		if asking[r.Dir] == 0 {
			continue
		}
		id, title := "register "+r.Dir, "amplidex: reading the project "+filepath.Base(r.Dir)
		if r.Dir == "" {
			title = "amplidex: reading the roots"
		}
		if r.Roots != nil {
			id += "\x00" + r.Roots.Home + "\x00" + strings.Join(r.Roots.Bundled, "\x00")
		}
		out = append(out, Task{ID: id, Title: title,
			Message: fmt.Sprintf("%s: %s, %s", r.Phase, query.Plural(r.Files, "file"), query.Plural(r.Collections, "collection"))})
	}
	return out
}
