package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
	"github.com/spf13/cobra"
)

// checkOptions are the flags of `amplidex check`.
type checkOptions struct {
	paths         []string
	json          bool
	format        string
	selects       []string
	ignores       []string
	severity      string
	ignoreUnknown bool
	whole         bool
	baseline      string
	writeBaseline string
	allRoots      bool
	isolated      bool
	with          []string
	exitZero      bool
	statistics    bool
	outputFile    string
	fix           bool
	diff          bool
	unsafeFixes   bool
}

func newCheckCmd(a *App) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Validate collections, roots or single files once, without a daemon",
		Long: "check validates the project's own collections (those of .amplifier/collections) or, without a project, the\n" +
			"collection it is run in; or what the paths name: a file, a collection, a directory inside one (agents/,\n" +
			"profiles/), a root holding collections, a project directory or its .amplifier directory. The user and\n" +
			"bundled roots are resolved against and reported only when named or with --all-roots. It exits 1 when\n" +
			"errors remain after suppression, selection and the baseline.",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			return a.runCheck(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print diagnostics and a summary as JSON (--format json)")
	f.StringVar(&opts.format, "format", "text", "output format: text, json, github (GitHub Actions annotations) or sarif (SARIF 2.1.0)")
	f.StringSliceVar(&opts.selects, "select", nil, "report only these codes or areas (schema/, ref/agent-unknown); repeat or separate with commas")
	f.StringSliceVar(&opts.ignores, "ignore", nil, "do not report these codes or areas; repeat or separate with commas")
	f.StringVar(&opts.severity, "severity", "", "report only diagnostics of this severity or above: error, warning (warn) or info (default: [check] severity, else info)")
	f.BoolVar(&opts.ignoreUnknown, "ignore-unknown", false, "skip files of kinds amplidex does not check (for pre-commit) instead of failing")
	f.BoolVar(&opts.whole, "whole", false, "check the whole collection of each PATH inside one, not just the files named: a rename is checked from the files that name it (for pre-commit)")
	f.StringVar(&opts.baseline, "baseline", "", "report only diagnostics that are not in this baseline file")
	f.StringVar(&opts.writeBaseline, "write-baseline", "", "record today's diagnostics in this file, report nothing, and exit 0")
	f.BoolVar(&opts.allRoots, "all-roots", false, "report every root's collections: the project's, the user's and the bundled ones (default: the project's, else the collection here)")
	f.BoolVar(&opts.isolated, "isolated", false, "ignore the user's configuration, the user and bundled roots and $AMPLIDEX_BUNDLED: the answer depends on the paths checked and the project's committed files alone")
	f.StringArrayVar(&opts.with, "with", nil, "resolve against this collection, or directory of collections, too (after the paths checked, ahead of every root; not reported); repeatable")
	f.BoolVar(&opts.exitZero, "exit-zero", false, "exit 0 even when errors are reported")
	f.BoolVar(&opts.statistics, "statistics", false, "print how many diagnostics of each code, not the diagnostics")
	f.StringVar(&opts.outputFile, "output-file", "", "write the report to this file instead of stdout")
	f.BoolVar(&opts.fix, "fix", false, "apply the fixes that need no choice (a misspelt key renamed, a reference with one close candidate corrected), then report what remains")
	f.BoolVar(&opts.diff, "diff", false, "print the fixes --fix would make as a unified diff, writing nothing; exit 1 when there is one")
	f.BoolVar(&opts.unsafeFixes, "unsafe-fixes", false, "with --fix or --diff, make the unsafe fixes too: those that would write an item of a list twice or a key twice")
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion(lint.Formats...))
	_ = cmd.RegisterFlagCompletionFunc("severity", fixedCompletion("error", "warning", "info"))
	_ = cmd.RegisterFlagCompletionFunc("select", completeCodes)
	_ = cmd.RegisterFlagCompletionFunc("ignore", completeCodes)
	return cmd
}

func (a *App) runCheck(ctx context.Context, opts *checkOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	a.checkMemory().Set()
	a.isolated = opts.isolated
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	res, err := lint.Check(ctx, ws, lint.Options{
		Paths: opts.paths, AllRoots: opts.allRoots, With: opts.with, Whole: opts.whole, IgnoreUnknown: opts.ignoreUnknown,
		Selection: lint.Selection{Select: opts.selects, Ignore: opts.ignores, Severity: opts.severity},
		Baseline:  opts.baseline, WriteBaseline: opts.writeBaseline, Stderr: a.Stderr, Log: a.log,
	})
	if err != nil {
		return err
	}
	if opts.writeBaseline != "" {
		fmt.Fprintf(a.Stderr, "amplidex: recorded %s in %s\n", query.Plural(res.Recorded, "diagnostic"), opts.writeBaseline)
		return nil
	}
	report := res.Report
	if opts.fix || opts.diff {
		return a.checkFix(ctx, res, opts)
	}
	out, done, err := a.checkOutput(opts)
	if err != nil {
		return err
	}
	err = a.printCheck(out, opts, report, res.Sources)
	if derr := done(); err == nil && derr != nil {
		return derr
	}
	if err != nil {
		return err
	}
	if report.Summary.Errors > 0 && !opts.exitZero {
		return exitCode(exitFailed)
	}
	return nil
}

// checkFix applies the fixes of what check reports that need no choice
// (--fix) and checks again, its exit code counting what remains (and 1
// at least when a file was left unfixed: one the user may not write, or
// one that changed since it was read, each said on stderr); or
// prints them as a unified diff without writing (--diff), exiting 1 when
// there is something to fix. An unsafe fix (one that would make a
// duplicate or break a file's structure) is said and left out, unless
// --unsafe-fixes asks for it.
func (a *App) checkFix(ctx context.Context, res *lint.Result, opts *checkOptions) error {
	all, err := res.Fixes(ctx, opts.unsafeFixes)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return exitf(exitFailed, "check: %v", err)
	}
	n := 0
	var fixes []lint.FileFix // the files that change
	for _, f := range all {
		n += f.Fixed
		if f.Fixed > 0 {
			fixes = append(fixes, f)
		}
	}
	lint.WriteUnsafe(a.Stderr, all)
	if opts.diff {
		out, done, err := a.checkOutput(opts)
		if err != nil {
			return err
		}
		lint.WriteDiff(out, fixes)
		if err := done(); err != nil {
			return err
		}
		if n == 0 {
			fmt.Fprintln(a.Stderr, "amplidex: nothing to fix")
			return nil
		}
		fmt.Fprintf(a.Stderr, "amplidex: would fix %s in %s\n", query.Plural(n, "problem"), query.Plural(len(fixes), "file"))
		return exitCode(exitFailed)
	}
	written := lint.WriteFixes(fixes, a.fixOpened, func(err error) { fmt.Fprintf(a.Stderr, "amplidex: %v\n", err) })
	n = 0
	for _, f := range written {
		n += f.Fixed
	}
	if n > 0 {
		fmt.Fprintf(a.Stderr, "amplidex: fixed %s in %s\n", query.Plural(n, "problem"), query.Plural(len(written), "file"))
	}
	again := *opts
	again.fix, again.unsafeFixes = false, false
	err = a.runCheck(ctx, &again)
	if err == nil && len(written) < len(fixes) {
		return exitCode(exitFailed) // a file was left unfixed: said above
	}
	return err
}

// checkOutput returns where check's report goes: stdout, or the file of
// --output-file, and what to call once it is written (which says whether
// the file was).
func (a *App) checkOutput(opts *checkOptions) (io.Writer, func() error, error) {
	if opts.outputFile == "" {
		return a.Stdout, func() error { return nil }, nil
	}
	f, err := os.Create(opts.outputFile)
	if err != nil {
		return nil, nil, exitf(exitUsage, "check: --output-file: %v", err)
	}
	return f, func() error {
		if err := f.Close(); err != nil {
			return exitf(exitFailed, "check: --output-file: %v", err)
		}
		return nil
	}, nil
}

// validate checks the flags that go together and the values of --format.
func (opts *checkOptions) validate() error {
	if opts.json {
		opts.format = "json"
	}
	if !slices.Contains(lint.Formats, opts.format) {
		return exitf(exitUsage, "check: unknown --format %q: want %s%s", opts.format, oneOf(lint.Formats), didYouMean(opts.format, lint.Formats))
	}
	if opts.baseline != "" && opts.writeBaseline != "" {
		return exitf(exitUsage, "check: --baseline and --write-baseline do not go together")
	}
	if opts.allRoots && len(opts.paths) > 0 {
		return exitf(exitUsage, "check: --all-roots checks every root; it does not go with a PATH")
	}
	if opts.diff && (opts.format != "text" || opts.statistics || opts.writeBaseline != "") {
		return exitf(exitUsage, "check: --diff prints a diff; it does not go with --format %s, --statistics or --write-baseline", opts.format)
	}
	if opts.unsafeFixes && !opts.fix && !opts.diff {
		return exitf(exitUsage, "check: --unsafe-fixes goes with --fix or --diff")
	}
	if opts.fix && opts.writeBaseline != "" {
		return exitf(exitUsage, "check: --fix does not go with --write-baseline: fix first, then record what remains")
	}
	if opts.statistics && (opts.format == "github" || opts.format == "sarif") {
		return exitf(exitUsage, "check: --statistics prints text or JSON, not --format %s", opts.format)
	}
	return nil
}

// printCheck prints the report to out in the format asked for.
func (a *App) printCheck(out io.Writer, opts *checkOptions, report lint.Report, src *lint.Sources) error {
	f := lint.Format{Name: opts.format, Statistics: opts.statistics, Text: a.diagnosticPrinter(out), Version: buildVersion()}
	if isTerminal(out) {
		f.Sources = src
	}
	return lint.Write(out, report, f)
}
