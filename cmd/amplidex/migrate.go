package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/bundle/migrate"
	"github.com/amplidex/amplidex/query"
	"github.com/spf13/cobra"
)

// migrateOptions are the flags of `amplidex migrate`.
type migrateOptions struct {
	out      string
	diff     bool
	profiles []string
}

func newMigrateCmd(a *App) *cobra.Command {
	opts := &migrateOptions{}
	cmd := &cobra.Command{
		Use:   "migrate [DIR] (--out DIR | --diff) [--profile NAME]...",
		Short: "Turn a collection (default: this directory) into a bundle repository",
		Long: "migrate writes the bundle repository of a collection: bundle.md from pyproject.toml, behaviors/P.yaml\n" +
			"and bundles/P.md for each profile P (extends as includes), agents with meta:, context with its mentions\n" +
			"rewritten, scenario tools and modules, and MIGRATION.md, which lists every note: what was not carried\n" +
			"over, or was carried in another form. The notes go to stderr too.\n\n" +
			"--out DIR writes into a new or empty directory, or into an earlier migration of the same collection\n" +
			"whose files are unchanged since; anything else is refused. --diff prints what would change as a\n" +
			"unified diff against --out, or against the collection's directory, and writes nothing. One of them\n" +
			"is needed. --profile (repeatable) chooses the profiles bundle.md includes; by default the only\n" +
			"profile, else all of them.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runMigrate(args, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.out, "out", "", "write the bundle repository into `DIR`")
	f.BoolVar(&opts.diff, "diff", false, "print what would be written as a unified diff, and write nothing")
	f.StringArrayVar(&opts.profiles, "profile", nil, "a profile bundle.md includes, by `NAME` (repeatable; default: every profile)")
	return cmd
}

func (a *App) runMigrate(args []string, opts *migrateOptions) error {
	if opts.out == "" && !opts.diff {
		return exitf(exitUsage, "migrate: say where the bundle repository goes: --out DIR (a new or empty directory), or --diff to see it first")
	}
	dir := "."
	if len(args) > 0 {
		dir = args[0]
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return exitf(exitUsage, "migrate: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return exitf(exitUsage, "migrate: %s: not a directory", dir)
	}
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	col := ws.Loader().Load(discovery.Root{Kind: discovery.RootArgument, Path: filepath.Dir(dir)}, dir)
	if col == nil {
		return exitf(exitUsage, "migrate: %s holds no collection: no pyproject.toml, and none of profiles/, agents/, context/, scenario-tools/ or modules/", dir)
	}
	var installed []*discovery.Collection
	if v, _ := ws.View(); v != nil && v.Set != nil {
		installed = v.Set.Winners()
	}
	res, err := migrate.Migrate(col, migrate.Options{Profiles: opts.profiles, Installed: installed})
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	wd, _ := os.Getwd()
	for _, n := range res.Notes {
		if n.Path == "" {
			fmt.Fprintf(a.Stderr, "%s: note: %s\n", query.DisplayPath(wd, dir), n.Message)
		} else {
			at := query.DisplayPath(wd, filepath.Join(dir, filepath.FromSlash(n.Path)))
			if n.Line > 0 {
				at = fmt.Sprintf("%s:%d", at, n.Line)
			}
			fmt.Fprintf(a.Stderr, "%s: note: %s\n", at, n.Message)
		}
	}
	if opts.diff {
		target := dir
		if opts.out != "" {
			if target, err = filepath.Abs(opts.out); err != nil {
				return exitf(exitUsage, "migrate: --out: %v", err)
			}
		}
		plan, err := res.Plan(target)
		if err != nil {
			return exitf(exitUsage, "migrate: %v", err)
		}
		if opts.out != "" && plan.Refused != "" {
			fmt.Fprintf(a.Stderr, "amplidex: migrate: --out would be refused: %s\n", plan.Refused)
		}
		return plan.Diff(a.Stdout)
	}
	plan, err := res.Write(opts.out)
	if errors.Is(err, migrate.ErrRefused) {
		return exitf(exitUsage, "migrate: %s", plan.Refused)
	} else if err != nil {
		return exitf(exitUsage, "migrate: %v", err)
	}
	fmt.Fprintf(a.Stderr, "amplidex: migrate: %s: %d of %d files written, %d removed; %d notes, in MIGRATION.md\n",
		query.DisplayPath(wd, opts.out), plan.Written(), len(res.Files), plan.Removed(), len(res.Notes))
	return nil
}
