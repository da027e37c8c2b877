package main

import (
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

// checkFormats are the values of --format.
var checkFormats = []string{"text", "json", "github", "sarif"}

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
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion(checkFormats...))
	_ = cmd.RegisterFlagCompletionFunc("severity", fixedCompletion("error", "warning", "info"))
	_ = cmd.RegisterFlagCompletionFunc("select", completeCodes)
	_ = cmd.RegisterFlagCompletionFunc("ignore", completeCodes)
	return cmd
}
