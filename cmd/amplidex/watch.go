package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/lint"
	"github.com/amplidex/amplidex/query"
)

// watchOptions are the flags of `amplidex watch`.
type watchOptions struct {
	paths []string
	json  bool
}

func newWatchCmd(a *App) *cobra.Command {
	opts := &watchOptions{}
	cmd := &cobra.Command{
		Use:   "watch [PATH...]",
		Short: "Stream diagnostics as files change: those that appear and those that clear (Ctrl-C ends)",
		Long: "watch follows the diagnostics of every file below PATH (default: what a plain check reports, the project's\n" +
			"collections and collections.lock, or the collection the working directory is in). It subscribes to the daemon\n" +
			"when one runs, and otherwise watches in process. Ctrl-C ends it (exit 130).",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			return a.runWatch(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON lines: {\"event\": \"appeared\"|\"cleared\", \"diagnostic\": {...}}")
	return cmd
}

// watchEvent is one line of `watch --json`.
type watchEvent struct {
	Event      string          `json:"event"`
	Clock      query.Clock     `json:"clock"`
	Diagnostic diag.Diagnostic `json:"diagnostic"`
}

func (a *App) runWatch(ctx context.Context, opts *watchOptions) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(opts.paths))
	for _, p := range opts.paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return exitf(exitUsage, "watch: %v", err)
		}
		if _, err := os.Stat(abs); err != nil {
			return exitf(exitUsage, "watch: %v", err)
		}
		paths = append(paths, abs)
	}
	// Without a PATH, what a plain check reports: the project's own
	// collections, not the user and bundled roots it resolves against.
	if len(paths) == 0 {
		scope, none, err := ws.DefaultScope()
		if err != nil {
			return err
		}
		if none != "" {
			// No collection here: the bundle repository stood in, if any.
			repo := ws.BundleView().Repo()
			if repo == "" {
				fmt.Fprintf(a.Stderr, "amplidex: nothing to watch: %s; name a PATH\n", none)
				return nil
			}
			scope = []string{repo}
		}
		paths = scope
	}
	// The project's configuration decides what is printed, as it does for
	// check: one that cannot be read stops watch at the start, and later
	// on is said once and the user's settings apply.
	pol, err := lint.NewPolicy(ws, lint.Selection{})
	if err != nil {
		return err
	}
	lk := pol.Lookup()
	for _, p := range append([]string{ws.Base()}, paths...) {
		dir := p
		if !isDirAt(p) {
			dir = filepath.Dir(p)
		}
		if err := lk.Read(dir); err != nil {
			return configError(err)
		}
	}
	warned := map[string]bool{}
	pr := &watchPrinter{a: a, json: opts.json, last: map[string][]diag.Diagnostic{},
		filter: func(path string, ds []diag.Diagnostic) []diag.Diagnostic {
			return pol.FilterFile(path, ds, func(err error) {
				if !warned[err.Error()] {
					warned[err.Error()] = true
					fmt.Fprintf(a.Stderr, "amplidex: %v\n", err)
				}
			})
		}}
	c, err := a.launcher().Connect(ctx, ws)
	if err != nil {
		return err
	}
	if c != nil {
		err = a.followDaemon(ctx, c, ws, paths, pr)
	} else {
		fmt.Fprintln(a.Stderr, "amplidex: no daemon is running; watching in process")
		err = a.watchInProcess(ctx, ws, paths, pr)
	}
	if ctx.Err() != nil {
		// Ctrl-C or SIGTERM: the exit code of a command stopped so (130).
		return ctx.Err()
	}
	return err
}

// watchDaemon prints the updates of a daemon subscription; subscribed,
// when not nil, is called once the daemon took it. It returns an error
// wrapping errDaemonGone when the daemon went away (see followDaemon).
func (a *App) watchDaemon(ctx context.Context, c *query.Client, ws *lint.Workspace, paths []string, pr *watchPrinter, subscribed func()) error {
	ch, err := query.Subscribe(ctx, c, query.MethodSubscribe, query.SubscribeParams{
		Common: ws.Common(false), Paths: paths})
	var qe *query.Error
	switch {
	case err == nil:
		if subscribed != nil {
			subscribed()
		}
	case ctx.Err() != nil: // Ctrl-C
		return nil
	case errors.Is(err, query.ErrNoDaemon), errors.As(err, &qe) && qe.Code == query.CodeShuttingDown:
		return fmt.Errorf("%w (%v)", errDaemonGone, err)
	default:
		return exitf(exitUnreachable, "watch: %v", err)
	}
	for n := range ch {
		if n.End {
			switch {
			case n.Error == nil || ctx.Err() != nil:
			case n.Error.Code == query.CodeNotFound: // the project was forgotten
				return exitf(exitFailed, "watch: %s; run watch again to follow it", n.Error.Message)
			case n.Error.Code == query.CodeShuttingDown, n.Error.Code == query.CodeUnavailable:
				return fmt.Errorf("%w (%v)", errDaemonGone, n.Error)
			default:
				return exitf(exitUnreachable, "watch: the daemon ended the subscription: %v", n.Error)
			}
			break
		}
		var u query.Update
		if err := json.Unmarshal(n.Params, &u); err != nil {
			return fmt.Errorf("watch: %w", err)
		}
		if err := pr.print(u); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return errDaemonGone
}

// watchInProcess runs the daemon's engine in this process, with its own
// index in a temporary directory and no socket.
func (a *App) watchInProcess(ctx context.Context, ws *lint.Workspace, paths []string, pr *watchPrinter) error {
	tmp, err := os.MkdirTemp("", "amplidex-watch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	opts := daemonOptions(ws, a)
	opts.Paths = query.Paths{Index: filepath.Join(tmp, "index.db"), PidFile: filepath.Join(tmp, "amplidex.pid"),
		Socket: filepath.Join(tmp, "amplidex.sock"), StateDir: tmp}
	opts.NoSocket, opts.NoSync = true, true
	d, err := daemon.Start(ctx, opts)
	if err != nil {
		return exitf(exitUsage, "watch: %v", err)
	}
	defer d.Close()
	err = d.FollowRoots(ctx, ws.Common(false), paths, pr.print)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// watchPrinter prints, per file, the diagnostics that appeared and those
// that cleared since the last update.
type watchPrinter struct {
	a    *App
	json bool
	last map[string][]diag.Diagnostic
	// filter decides what is printed of a file's diagnostics.
	filter func(path string, ds []diag.Diagnostic) []diag.Diagnostic
}

func (p *watchPrinter) print(u query.Update) error {
	w := p.a.Stdout
	dp := p.a.diagnosticPrinter(w)
	if u.Initial {
		// Every followed file with diagnostics is in it: those printed
		// before and left out cleared (while the daemon was away).
		u.Files = append(slices.Clip(u.Files), p.clearedBy(u.Files)...)
	}
	for _, f := range u.Files {
		if p.filter != nil {
			f.Diagnostics = p.filter(f.Path, f.Diagnostics)
		}
		old := p.last[f.Path]
		var lines []watchEvent
		for _, d := range old {
			if !slices.Contains(f.Diagnostics, d) {
				lines = append(lines, watchEvent{Event: "cleared", Clock: u.Clock, Diagnostic: d})
			}
		}
		for _, d := range f.Diagnostics {
			if !slices.Contains(old, d) {
				lines = append(lines, watchEvent{Event: "appeared", Clock: u.Clock, Diagnostic: d})
			}
		}
		if len(f.Diagnostics) == 0 {
			delete(p.last, f.Path)
		} else {
			p.last[f.Path] = f.Diagnostics
		}
		for _, ev := range lines {
			if err := p.line(w, dp, ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// clearedBy returns, for the files printed with diagnostics that files
// leave out, an empty list: they cleared. They come sorted.
func (p *watchPrinter) clearedBy(files []query.FileDiagnostics) []query.FileDiagnostics {
	in := make(map[string]bool, len(files))
	for _, f := range files {
		in[f.Path] = true
	}
	var out []query.FileDiagnostics
	for path := range p.last {
		if !in[path] {
			out = append(out, query.FileDiagnostics{Path: path, Diagnostics: []diag.Diagnostic{}})
		}
	}
	slices.SortFunc(out, func(a, b query.FileDiagnostics) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func (p *watchPrinter) line(w io.Writer, dp query.DiagnosticPrinter, ev watchEvent) error {
	if p.json {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	d := ev.Diagnostic
	if ev.Event == "cleared" {
		d.Severity = "cleared"
	}
	_, err := fmt.Fprintln(w, dp.Line(d))
	return err
}
