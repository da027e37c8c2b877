package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

// queryOptions are the flags every query subcommand shares.
type queryOptions struct {
	json   bool
	noSync bool
}

func newQueryCmd(a *App) *cobra.Command {
	opts := &queryOptions{}
	cmd := &cobra.Command{
		Use:   "query",
		Short: "Ask the index: collections, resolution, profiles, agents, diagnostics, bundles",
		Long: "query asks the daemon when one runs, and otherwise answers from an in-process scan\n" +
			"(correct, slower), saying so once on stderr.",
	}
	cmd.PersistentFlags().BoolVar(&opts.json, "json", false, "print JSON (the same structs the daemon returns)")
	cmd.PersistentFlags().BoolVar(&opts.noSync, "no-sync", false,
		"answer from what the daemon has seen so far, without waiting for changes in flight\n"+
			"(right after a restart, resolve answers from the last run's summary)")
	list := func(c query.Common, _ []string) query.ListParams { return query.ListParams{Common: c} }
	name := func(c query.Common, args []string) query.NameParams {
		return query.NameParams{Common: c, Name: args[0]}
	}
	completeNames := a.completeCollectionNames()
	addQuery(cmd, a, opts, query.MethodCollections, "collections", noArgs, list, nil)
	addQuery(cmd, a, opts, query.MethodResolve, "resolve NAME", exactArgs("NAME"), name, completeNames)
	addQuery(cmd, a, opts, query.MethodCollection, "collection NAME", exactArgs("NAME"), name, completeNames)
	addQuery(cmd, a, opts, query.MethodProfiles, "profiles", noArgs, list, nil)
	addQuery(cmd, a, opts, query.MethodAgents, "agents", noArgs, list, nil)
	addQuery(cmd, a, opts, query.MethodAgent, "agent REF", exactArgs("REF"),
		func(c query.Common, args []string) query.RefParams { return query.RefParams{Common: c, Ref: args[0]} },
		a.completeRefs(discovery.KindAgent))
	addQuery(cmd, a, opts, query.MethodContext, "context", noArgs, list, nil)
	addQuery(cmd, a, opts, query.MethodTools, "tools", noArgs, list, nil)
	addQuery(cmd, a, opts, query.MethodModules, "modules", noArgs, list, nil)
	addQuery(cmd, a, opts, query.MethodSearch, "search TEXT", minArgs("TEXT"),
		func(c query.Common, args []string) query.SearchParams {
			return query.SearchParams{Common: c, Text: strings.Join(args, " ")}
		}, nil)
	cmd.AddCommand(&cobra.Command{
		Use:   "diagnostics [PATH]",
		Short: "List what check reports, of the project (or the collection here) or below PATH",
		Long: "diagnostics answers what check reports: below PATH, or without one what a plain check reports (the\n" +
			"project's collections and collections.lock, or the collection the working directory is in), selected and\n" +
			"ranked by the same configuration (the project's committed file nearest to each file, then the user's).",
		Args: existingPath(maxArgs("PATH")),
		RunE: func(c *cobra.Command, argv []string) error { return a.runDiagnostics(c.Context(), opts, argv) },
	})
	addQuery(cmd, a, opts, query.MethodDeps, "deps NAME", exactArgs("NAME"), name, completeNames)
	var merged bool
	profile := addQuery(cmd, a, opts, query.MethodProfile, "profile REF", exactArgs("REF"),
		func(c query.Common, args []string) query.ProfileParams {
			return query.ProfileParams{Common: c, Ref: args[0], Merged: merged}
		}, a.completeRefs(discovery.KindProfile))
	profile.Flags().BoolVar(&merged, "merged", false, "print the effective profile after its extends chain")
	addQuery(cmd, a, opts, query.MethodBundles, "bundles", noArgs, list, nil)
	var composed bool
	bundle := addQuery(cmd, a, opts, query.MethodBundle, "bundle REF", exactArgs("REF"),
		func(c query.Common, args []string) query.BundleParams {
			return query.BundleParams{Common: c, Ref: args[0], Composed: composed}
		}, nil)
	bundle.Flags().BoolVar(&composed, "composed", false,
		"compose it with its includes, as the runtime mounts it: the mount plan, where each part comes from,\n"+
			"the include tree, the agents and context files with their sizes, and the diagnostics")
	var since string
	changes := &cobra.Command{
		Use:   "changes --since CLOCK",
		Short: query.MethodChanges.Summary() + "; exit 3 without one",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return a.runChanges(c.Context(), opts, since)
		},
	}
	changes.Flags().StringVar(&since, "since", "", "a clock from an earlier answer (c:<start>:<pid>:<tick>)")
	_ = changes.MarkFlagRequired("since")
	cmd.AddCommand(changes)
	return cmd
}

// addQuery adds the subcommand of a method answered from a View: use is
// its usage line, params builds its params from the arguments.
func addQuery[P, R any](parent *cobra.Command, a *App, opts *queryOptions, m *query.Method[P, R], use string,
	args cobra.PositionalArgs, params func(query.Common, []string) P,
	complete func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)) *cobra.Command {
	cmd := &cobra.Command{
		Use: use, Short: m.Summary(), Args: args, ValidArgsFunction: complete,
		RunE: func(c *cobra.Command, argv []string) error {
			return runQuery(c.Context(), a, opts, m, func(cm query.Common) P { return params(cm, argv) })
		},
	}
	parent.AddCommand(cmd)
	return cmd
}

// existingPath checks args with check, then that the path they name, if
// any, exists: asking about a path that is not there is a usage error,
// not an empty answer.
func existingPath(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return err
		}
		if len(args) == 1 {
			if _, err := os.Stat(args[0]); err != nil {
				return exitf(exitUsage, "%s %s: %s", commandName(c), args[0], errText(err))
			}
		}
		return nil
	}
}

// runDiagnostics answers `query diagnostics [PATH]` as check reports:
// below PATH, or in check's default scope (see DefaultScope) and the
// bundle repository stood in, with the
// policy applied (the project's committed configuration, then the
// user's), its summary counted again.
func (a *App) runDiagnostics(ctx context.Context, opts *queryOptions, args []string) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	var scope []string
	if len(args) > 0 {
		p, err := filepath.Abs(args[0])
		if err != nil {
			return exitf(exitUsage, "query diagnostics: %v", err)
		}
		scope = []string{p}
	} else {
		var none string
		if scope, none, err = ws.DefaultScope(); err != nil {
			return err
		}
		// The bundle repository stood in, as check reports it beside
		// the project's collections.
		if repo := ws.BundleView().Repo(); repo != "" && !slices.ContainsFunc(scope, func(s string) bool { return syntax.Within(repo, s) }) {
			scope = append(scope, repo)
		}
		if len(scope) == 0 {
			fmt.Fprintf(a.Stderr, "amplidex: nothing to check: %s\n", none)
		}
	}
	_, lk, err := lint.PolicyFor(ws, scope)
	if err != nil {
		return err
	}
	params := func(c query.Common) query.DiagnosticsParams {
		p := query.DiagnosticsParams{Common: c}
		if len(scope) == 1 {
			p.Path = scope[0]
		}
		return p
	}
	if len(scope) == 0 {
		empty := &query.DiagnosticsResult{Diagnostics: []diag.Diagnostic{}}
		if opts.json {
			return query.PrintJSON(a.Stdout, empty)
		}
		return query.MethodDiagnostics.Print(a.Stdout, empty, a.printOptions())
	}
	return runQueryIn(ctx, a, ws, opts, query.MethodDiagnostics, params, func(r *query.DiagnosticsResult) (*query.DiagnosticsResult, error) {
		return lk.Keep(ctx, r, scope)
	})
}

// runQuery answers one query, from the daemon or in process, and prints
// it.
func runQuery[P, R any](ctx context.Context, a *App, opts *queryOptions, m *query.Method[P, R], params func(query.Common) P) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	return runQueryIn(ctx, a, ws, opts, m, params, nil)
}

// runQueryIn is runQuery in the workspace ws; adjust, when set, turns the
// answer into what is printed.
func runQueryIn[P, R any](ctx context.Context, a *App, ws *lint.Workspace, opts *queryOptions, m *query.Method[P, R], params func(query.Common) P,
	adjust func(R) (R, error)) error {
	result, err := service.Answer(ctx, a.launcher(), ws, m, params, opts.noSync, !opts.json)
	var ce *service.CallError
	if errors.As(err, &ce) {
		return daemonError(ce.Err)
	}
	if err != nil {
		var qe *query.Error
		if errors.As(err, &qe) {
			switch qe.Code {
			case query.CodeNotFound:
				return &exitError{code: exitFailed, kind: string(qe.Code), err: errors.New(qe.Message)}
			case query.CodeInvalidParams:
				return &exitError{code: exitUsage, kind: string(qe.Code), err: errors.New(qe.Message)}
			}
		}
		return err
	}
	if adjust != nil {
		if result, err = adjust(result); err != nil {
			return err
		}
	}
	r, isResolve := any(result).(*query.ResolveResult)
	nowhere := isResolve && r != nil && !r.Found
	switch {
	case opts.json:
		if err := query.PrintJSON(a.Stdout, result); err != nil {
			return err
		}
	case nowhere && r.Winner == nil && len(r.Skipped) == 0 && len(r.Shadowed) == 0:
		// Nothing at all answers to the name: no table, a message.
		msg := fmt.Sprintf("collection %q resolves nowhere", r.Name)
		if r.DidYouMean != "" {
			msg += fmt.Sprintf("; did you mean %q?", r.DidYouMean)
		}
		return exitf(exitFailed, "%s", msg)
	default:
		// One write for the whole answer, not one for each cell.
		out := bufio.NewWriter(a.Stdout)
		err := m.Print(out, result, a.printOptions())
		if ferr := out.Flush(); err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
	}
	// A name that resolves nowhere (only skipped candidates) matched nothing.
	if nowhere {
		return exitCode(exitFailed)
	}
	// An effective profile asked for whose chain does not resolve is no
	// effective profile.
	if pr, ok := any(result).(*query.ProfileResult); ok && pr != nil && !pr.Complete {
		if pp, ok := any(params(query.Common{})).(query.ProfileParams); ok && pp.Merged {
			return exitCode(exitFailed)
		}
	}
	return nil
}

// daemonError maps a failed call to its exit code: 2 for an answer too
// large to take or a daemon too busy, 3 when the daemon is unreachable.
func daemonError(err error) error {
	var qe *query.Error
	switch {
	case errors.Is(err, query.ErrResponseTooLarge):
		return exitf(exitUsage, "daemon: %v", err)
	case errors.As(err, &qe) && (qe.Code == query.CodeOverloaded || qe.Code == query.CodeDegraded):
		return exitf(exitUsage, "daemon: %v", err)
	}
	return exitf(exitUnreachable, "daemon: %v", err)
}

// printOptions are the text printers' options for stdout.
func (a *App) printOptions() query.PrintOptions {
	return query.PrintOptions{Header: isTerminal(a.Stdout), Diagnostics: a.diagnosticPrinter(a.Stdout)}
}

// diagnosticPrinter prints diagnostics to w: colour on a terminal, paths
// relative to the working directory.
func (a *App) diagnosticPrinter(w io.Writer) query.DiagnosticPrinter {
	wd, _ := os.Getwd()
	return query.DiagnosticPrinter{Color: a.colorOn(w), WorkDir: wd}
}

// runChanges asks the daemon what changed since a clock. Only a daemon
// has clocks: without one it exits 3.
func (a *App) runChanges(ctx context.Context, opts *queryOptions, since string) error {
	if _, err := query.ParseClock(since); err != nil {
		return exitf(exitUsage, "--since: %v", err)
	}
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	c, err := a.launcher().ConnectToAsk(ctx, ws)
	if err != nil {
		return err
	}
	var res *query.ChangesResult
	if c != nil {
		c, err = a.launcher().Ask(ctx, ws, c, func(c *query.SyncClient) (err error) {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			res, _, err = query.Ask(cctx, c, query.MethodChanges, query.ChangesParams{Common: ws.Common(false), Since: since})
			return err
		})
	}
	if c == nil {
		return exitf(exitUnreachable, "query changes needs the daemon, and none is running (socket %s)", ws.Paths.Socket)
	}
	defer c.Close()
	if err != nil {
		return daemonError(err)
	}
	if opts.json {
		return query.PrintJSON(a.Stdout, res)
	}
	return query.MethodChanges.Print(a.Stdout, res, a.printOptions())
}
