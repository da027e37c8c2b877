package main

import (
	"github.com/spf13/cobra"
)

// checkOptions are the flags of `amplidex check`.
type checkOptions struct {
	paths  []string
	json   bool
	format string
}

func newCheckCmd(a *App) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Validate collections, roots or single files once, without a daemon",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			return a.runCheck(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print diagnostics and a summary as JSON")
	cmd.Flags().StringVar(&opts.format, "format", "text", "output format: text, json or github (GitHub Actions annotations)")
	return cmd
}
