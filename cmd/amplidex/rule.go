package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/discovery/config"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

// ruleOptions are the flags of `amplidex rule`.
type ruleOptions struct {
	all  bool
	json bool
}

func newRuleCmd(a *App) *cobra.Command {
	opts := &ruleOptions{}
	cmd := &cobra.Command{
		Use:   "rule CODE|AREA",
		Short: "Explain a diagnostic code: what it means, an example, the fix, how to suppress it",
		Long: "rule explains a diagnostic code (schema/unknown-key), or every code of an area (schema/): what it means,\n" +
			"its default severity, an example that earns it, how to fix it, and how to suppress it. --all explains\n" +
			"every code. docs/diagnostics.md is made from the same text.",
		Args: maxArgs("CODE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runRule(opts, args)
		},
		ValidArgsFunction: func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeCodes(c, args, prefix)
		},
	}
	cmd.Flags().BoolVar(&opts.all, "all", false, "explain every code")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print {code, area, severity, summary, example, fix, suppress} for each code")
	return cmd
}

func (a *App) runRule(opts *ruleOptions, args []string) error {
	var docs []lint.Rule
	switch {
	case opts.all && len(args) > 0:
		return exitf(exitUsage, "rule: --all explains every code; it does not go with %s", args[0])
	case opts.all:
		for _, c := range diag.Codes {
			docs = append(docs, lint.NewRule(c))
		}
	case len(args) == 0:
		return exitf(exitUsage, "rule needs CODE (such as schema/unknown-key), an area (schema/) or --all")
	default:
		if err := config.CheckCode(args[0]); err != nil {
			return exitf(exitUsage, "rule: %v", err)
		}
		for _, c := range diag.Codes {
			if diag.MatchCode(args[0], c.Code) {
				docs = append(docs, lint.NewRule(c))
			}
		}
	}
	if opts.json {
		if opts.all || len(args) > 0 && len(docs) > 1 {
			return query.PrintJSON(a.Stdout, docs)
		}
		return query.PrintJSON(a.Stdout, docs[0])
	}
	for i, d := range docs {
		if i > 0 {
			fmt.Fprintln(a.Stdout)
		}
		lint.WriteRule(a.Stdout, d)
	}
	return nil
}
