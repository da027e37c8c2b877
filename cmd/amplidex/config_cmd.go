package main

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

// configOptions are the flags of `amplidex config`.
type configOptions struct {
	json     bool
	isolated bool
}

func newConfigCmd(a *App) *cobra.Command {
	opts := &configOptions{}
	cmd := &cobra.Command{
		Use:   "config [PATH]",
		Short: "Print the effective settings, each with where it comes from",
		Long: "config prints every setting as it applies to PATH (default: the working directory), with its origin,\n" +
			"as `git config --show-origin` does: a flag, the environment, the project's configuration nearest to PATH\n" +
			"(amplidex.toml, .amplidex.toml or [tool.amplidex] in pyproject.toml), the user's configuration, or the default.",
		Args: existingPath(maxArgs("PATH")),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) > 0 {
				path = args[0]
			}
			return a.runConfig(opts, path)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the settings as JSON: {path, settings: [{key, value, origin}]}")
	cmd.Flags().BoolVar(&opts.isolated, "isolated", false, "as check --isolated sees them: without the user's configuration, the user and bundled roots")
	return cmd
}

// configReport is what `amplidex config --json` prints.
type configReport struct {
	Path     string            `json:"path"`
	Settings []service.Setting `json:"settings"`
}

func (a *App) runConfig(opts *configOptions, path string) error {
	a.isolated = opts.isolated
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	if path == "" {
		if path, err = os.Getwd(); err != nil {
			return exitf(exitUsage, "working directory: %v", err)
		}
	}
	if path, err = filepath.Abs(path); err != nil {
		return exitf(exitUsage, "config: %v", err)
	}
	dir := path
	if !isDirAt(path) {
		dir = filepath.Dir(path)
	}
	pol, err := lint.NewPolicy(ws, lint.Selection{})
	if err != nil {
		return err
	}
	cs, err := pol.Lookup().Settings(dir)
	if err != nil {
		return configError(err)
	}
	report := configReport{Path: path, Settings: service.Settings(ws, cs, a.Getenv)}
	if opts.json {
		return query.PrintJSON(a.Stdout, report)
	}
	tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
	for _, s := range report.Settings {
		fmt.Fprintf(tw, "%s\t%s = %s\n", s.Origin, s.Key, service.TOMLText(s.Value))
	}
	return tw.Flush()
}
