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
	baseline      string
	writeBaseline string
}

// checkFormats are the values of --format.
var checkFormats = []string{"text", "json", "github", "sarif"}

func newCheckCmd(a *App) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Validate collections, roots or single files once, without a daemon",
		Long: "check validates every collection of the project's roots, or what the paths name: a file, a collection,\n" +
			"a directory inside one (agents/, profiles/), a root holding collections, a project directory or its\n" +
			".amplifier directory. It exits 1 when errors remain after suppression, selection and the baseline.",
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
	f.StringVar(&opts.baseline, "baseline", "", "report only diagnostics that are not in this baseline file")
	f.StringVar(&opts.writeBaseline, "write-baseline", "", "record today's diagnostics in this file, report nothing, and exit 0")
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion(checkFormats...))
	_ = cmd.RegisterFlagCompletionFunc("severity", fixedCompletion("error", "warning", "info"))
	_ = cmd.RegisterFlagCompletionFunc("select", completeCodes)
	_ = cmd.RegisterFlagCompletionFunc("ignore", completeCodes)
	return cmd
}
