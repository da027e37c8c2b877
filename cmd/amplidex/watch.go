package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
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
	pol, _, err := lint.PolicyFor(ws, paths)
	if err != nil {
		return err
	}
	warned := map[string]bool{}
	pr := &lint.Changes{Out: a.Stdout, Text: a.diagnosticPrinter(a.Stdout), JSON: opts.json,
		Filter: func(path string, ds []diag.Diagnostic) []diag.Diagnostic {
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
		err = service.WatchInProcess(ctx, ws, a.Getenv, a.log, paths, pr.Print)
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
func (a *App) watchDaemon(ctx context.Context, c *query.Client, ws *lint.Workspace, paths []string, pr *lint.Changes, subscribed func()) error {
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
		if err := pr.Print(u); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return errDaemonGone
}
