package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// queryOptions are the flags every query subcommand shares.
type queryOptions struct {
	json bool
}

func newQueryCmd(a *App) *cobra.Command {
	opts := &queryOptions{}
	cmd := &cobra.Command{
		Use:   "query",
		Short: "Ask the index: collections, resolution, profiles, agents, diagnostics",
		Long: "query asks the daemon when one runs, and otherwise answers from an in-process scan\n" +
			"(correct, slower), saying so once on stderr.",
	}
	cmd.PersistentFlags().BoolVar(&opts.json, "json", false, "print JSON (the same structs the daemon returns)")
	type sub struct {
		use, short string
		args       cobra.PositionalArgs
		params     func(args []string) any
	}
	noArgs := func([]string) any { return nil }
	name := func(args []string) any { return query.NameParams{Name: args[0]} }
	subs := []sub{
		{"collections", "List every collection of every root, with its status", cobra.NoArgs, noArgs},
		{"resolve NAME", "Show where a collection name resolves, what it shadows and what was skipped", cobra.ExactArgs(1), name},
		{"collection NAME", "Show a collection and its resources", cobra.ExactArgs(1), name},
		{"profiles", "List the profiles of the winning collections", cobra.NoArgs, noArgs},
		{"agents", "List the agents of the winning collections", cobra.NoArgs, noArgs},
		{"agent REF", "Show an agent (collection:name)", cobra.ExactArgs(1), func(args []string) any { return query.RefParams{Ref: args[0]} }},
		{"context", "List the context files of the winning collections", cobra.NoArgs, noArgs},
		{"tools", "List the scenario tools of the winning collections", cobra.NoArgs, noArgs},
		{"modules", "List the modules of the winning collections", cobra.NoArgs, noArgs},
		{"search TEXT", "Find resources whose name, path or description contains TEXT", cobra.MinimumNArgs(1),
			func(args []string) any { return query.TextParams{Text: strings.Join(args, " ")} }},
		{"diagnostics [PATH]", "List diagnostics, of everything or below PATH", cobra.MaximumNArgs(1), func(args []string) any {
			if len(args) == 0 {
				return query.PathParams{}
			}
			p, _ := filepath.Abs(args[0])
			return query.PathParams{Path: p}
		}},
		{"deps NAME", "Show what a collection requires and who requires it", cobra.ExactArgs(1), name},
	}
	for _, s := range subs {
		s := s
		method := strings.Fields(s.use)[0]
		cmd.AddCommand(&cobra.Command{
			Use: s.use, Short: s.short, Args: s.args,
			ValidArgsFunction: a.completeCollectionNames(method),
			RunE: func(c *cobra.Command, args []string) error {
				return a.runQuery(c.Context(), opts, method, s.params(args))
			},
		})
	}
	var merged bool
	profile := &cobra.Command{
		Use: "profile REF", Short: "Show a profile (collection:name) and its extends chain", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.runQuery(c.Context(), opts, "profile", query.RefParams{Ref: args[0], Merged: merged})
		},
	}
	profile.Flags().BoolVar(&merged, "merged", false, "print the effective profile after its extends chain")
	cmd.AddCommand(profile)
	var since string
	changes := &cobra.Command{
		Use:   "changes --since CLOCK",
		Short: "List the files that changed since a clock (needs the daemon; exit 3 without one)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return a.runChanges(c.Context(), opts, since)
		},
	}
	changes.Flags().StringVar(&since, "since", "", "a clock from an earlier answer (c:<start>:<pid>:<tick>)")
	_ = changes.MarkFlagRequired("since")
	cmd.AddCommand(changes)
	return cmd
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
	c, err := a.requireDaemon(ctx, ws, "query changes")
	if err != nil {
		return err
	}
	defer c.Close()
	var res daemon.ChangesResult
	params := daemon.ChangesParams{Common: daemon.Common{Project: ws.daemonProject()}, Since: since}
	if err := callDaemon(ctx, c, "changes", params, &res); err != nil {
		return err
	}
	if opts.json {
		enc := json.NewEncoder(a.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(a.Stdout, "clock %s\n", res.Clock)
	if res.IsFreshInstance {
		fmt.Fprintln(a.Stdout, "fresh instance: every indexed file follows")
	}
	for _, f := range res.Files {
		if f.Deleted {
			fmt.Fprintf(a.Stdout, "deleted %s\n", f.Path)
		} else {
			fmt.Fprintf(a.Stdout, "changed %s\n", f.Path)
		}
	}
	return nil
}

// completeCollectionNames completes collection names for the subcommands
// that take one.
func (a *App) completeCollectionNames(method string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	switch method {
	case "resolve", "collection", "deps":
	default:
		return nil
	}
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ws, err := a.workspace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		snap, err := ws.snapshot()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []string
		for _, c := range snap.Set.Winners() {
			if strings.HasPrefix(c.Name, prefix) {
				out = append(out, c.Name+"\t"+c.Description)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// runQuery answers one query and prints it.
func (a *App) runQuery(ctx context.Context, opts *queryOptions, method string, params any) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	result, err := a.answer(ctx, ws, method, raw)
	if err != nil {
		var qe *query.Error
		if errors.As(err, &qe) {
			switch qe.Code {
			case query.CodeNotFound:
				return exitf(exitFailed, "%s", qe.Message)
			case query.CodeInvalidParams:
				return exitf(exitUsage, "%s", qe.Message)
			}
		}
		return err
	}
	if opts.json {
		enc := json.NewEncoder(a.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(result); err != nil {
			return err
		}
	} else if err := a.printQuery(method, result); err != nil {
		return err
	}
	// A name that resolves nowhere (only skipped candidates) matched nothing.
	if m, ok := result.(map[string]any); ok && method == "resolve" && m["found"] == false {
		return exitCode(exitFailed)
	}
	return nil
}

// answer asks the daemon, or scans in process when none runs.
func (a *App) answer(ctx context.Context, ws *workspace, method string, raw json.RawMessage) (any, error) {
	c, err := a.dial(ctx, ws)
	if err != nil {
		return nil, err
	}
	if c != nil {
		defer c.Close()
		params, err := withProject(raw, ws.daemonProject())
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var out any
		if _, err := c.Call(cctx, method, params, &out); err != nil {
			var qe *query.Error
			if errors.As(err, &qe) && (qe.Code == query.CodeNotFound || qe.Code == query.CodeInvalidParams) {
				return nil, err
			}
			return nil, exitf(exitUnreachable, "daemon: %v", err)
		}
		return out, nil
	}
	fmt.Fprintln(a.Stderr, "amplidex: no daemon is running; answering from an in-process scan")
	snap, err := ws.snapshot()
	if err != nil {
		return nil, exitf(exitUsage, "query: %v", err)
	}
	res, err := snap.Answer(method, raw)
	if err != nil {
		return nil, err
	}
	// Round-trip through JSON so that in-process and daemon answers print
	// from the same shapes.
	return reencode(res)
}

// withProject adds the project directory to a method's params.
func withProject(raw json.RawMessage, project string) (json.RawMessage, error) {
	m := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
	}
	m["project"] = project
	return json.Marshal(m)
}

func reencode(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

// printQuery prints a result as aligned text.
func (a *App) printQuery(method string, result any) error {
	w := a.Stdout
	header := isTerminal(w)
	b, _ := json.Marshal(result)
	switch method {
	case "collections":
		var cs []query.CollectionInfo
		_ = json.Unmarshal(b, &cs)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		if header {
			fmt.Fprintln(tw, "NAME\tVERSION\tROOT\tSTATUS\tLAYOUT\tDIR")
		}
		for _, c := range cs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, dash(c.Version), c.Root, c.Status, c.Layout, c.Dir)
		}
		return tw.Flush()
	case "resolve":
		var r query.ResolveResult
		_ = json.Unmarshal(b, &r)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		if r.Winner != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Winner.Version, r.Winner.Root, r.Winner.Dir)
		} else {
			fmt.Fprintf(tw, "%s\t-\t-\tresolves nowhere\n", r.Name)
		}
		for _, c := range r.Shadowed {
			fmt.Fprintf(tw, "  shadowed\t%s\t%s\t%s\n", c.Version, c.Root, c.Dir)
		}
		for _, c := range r.Skipped {
			fmt.Fprintf(tw, "  skipped\t%s\t%s\t%s: %s\n", dash(c.Version), c.Root, c.Dir, c.Problem)
		}
		return tw.Flush()
	case "collection":
		var d query.CollectionDetail
		_ = json.Unmarshal(b, &d)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "name\t%s\nversion\t%s\ndescription\t%s\nroot\t%s\ndir\t%s\nlayout\t%s\nstatus\t%s\n",
			d.Name, dash(d.Version), d.Description, d.Root, d.Dir, d.Layout, d.Status)
		if d.Base != d.Dir {
			fmt.Fprintf(tw, "base\t%s\n", d.Base)
		}
		for _, r := range d.Requires {
			fmt.Fprintf(tw, "requires\t%s %s\n", r.Name, r.Constraint)
		}
		for _, r := range d.Resources {
			fmt.Fprintf(tw, "%s\t%s\n", r.Kind, r.Rel)
		}
		for _, c := range d.Shadowed {
			fmt.Fprintf(tw, "shadows\t%s (%s)\n", c.Dir, c.Root)
		}
		for _, c := range d.Skipped {
			fmt.Fprintf(tw, "skipped\t%s (%s): %s\n", c.Dir, c.Root, c.Problem)
		}
		return tw.Flush()
	case "profiles", "agents", "context", "tools", "modules", "search":
		var rs []query.ResourceInfo
		_ = json.Unmarshal(b, &rs)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		if header {
			fmt.Fprintln(tw, "REF\tKIND\tPATH\tDESCRIPTION")
		}
		for _, r := range rs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Ref, r.Kind, r.Path, oneLine(r.Description, 60))
		}
		return tw.Flush()
	case "profile":
		var p query.ProfileResult
		_ = json.Unmarshal(b, &p)
		fmt.Fprintf(w, "%s\t%s\n", p.Ref, p.Path)
		fmt.Fprintf(w, "chain: %s\n", strings.Join(p.Chain, " → "))
		if p.Merged != nil {
			fmt.Fprintln(w, "---")
			enc := yaml.NewEncoder(w)
			enc.SetIndent(2)
			if err := enc.Encode(p.Merged); err != nil {
				return err
			}
			if err := enc.Close(); err != nil {
				return err
			}
			fmt.Fprintln(w, "---")
		}
		return nil
	case "agent":
		var r query.AgentResult
		_ = json.Unmarshal(b, &r)
		fmt.Fprintf(w, "%s\t%s\n%s\n", r.Ref, r.Path, r.Description)
		return nil
	case "diagnostics":
		var d query.DiagnosticsResult
		_ = json.Unmarshal(b, &d)
		a.writeDiagnosticsText(w, d.Diagnostics)
		fmt.Fprintf(w, "%s, %s, %s in %s\n", plural(d.Summary.Errors, "error"), plural(d.Summary.Warnings, "warning"),
			plural(d.Summary.Infos, "note"), plural(d.Summary.Files, "file"))
		return nil
	case "deps":
		var d query.DepsResult
		_ = json.Unmarshal(b, &d)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "%s\t%s\n", d.Name, dash(d.Version))
		for _, r := range d.Requires {
			found := ""
			if r.FoundVersion != "" {
				found = r.FoundVersion + " at " + r.FoundDir
			}
			fmt.Fprintf(tw, "  requires\t%s %s\t%s\t%s\n", r.Name, r.Constraint, r.Status, found)
		}
		sort.Slice(d.RequiredBy, func(i, j int) bool { return d.RequiredBy[i].Name < d.RequiredBy[j].Name })
		for _, u := range d.RequiredBy {
			st := "ok"
			if !u.Satisfied {
				st = "unsatisfied"
			}
			fmt.Fprintf(tw, "  required by\t%s %s\t%s\n", u.Name, u.Constraint, st)
		}
		return tw.Flush()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(result)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) > n {
		return string([]rune(s)[:n-1]) + "…"
	}
	return s
}
