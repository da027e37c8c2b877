package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/amplidex/amplidex/discovery/config"
	"github.com/amplidex/amplidex/prepare"
	"github.com/spf13/cobra"
)

func newCacheCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Manage the prepared-bundle cache",
		Args:  noArgs,
	}
	cmd.AddCommand(newCacheClearCmd(a))
	return cmd
}

// cacheClearOptions are the flags of `amplidex cache clear`.
type cacheClearOptions struct {
	json bool
}

// cacheClearResult is what `cache clear --json` prints.
type cacheClearResult struct {
	Path    string `json:"path"`
	Existed bool   `json:"existed"`
}

func newCacheClearCmd(a *App) *cobra.Command {
	opts := &cacheClearOptions{}
	cmd := &cobra.Command{
		Use:   "clear",
		Short: "Remove the whole prepared/ root (every version and every hash) and print its path",
		Long: "cache clear removes <cache home>/cache/prepared, all versions and all hashes, and prints its path.\n" +
			"It exits 0 whether or not the directory existed. The module cache (cache/modules) stays.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runCacheClear(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the path and whether it existed as JSON")
	return cmd
}

func (a *App) runCacheClear(ctx context.Context, opts *cacheClearOptions) error {
	cfg, _, err := a.config()
	if err != nil {
		return err
	}
	configured := cfg.Prepare.CacheHome
	if configured != "" && cfg.Path() != "" {
		configured = config.ExpandPath(configured, filepath.Dir(cfg.Path()))
	}
	home, err := prepare.ResolveHome(a.Getenv, configured)
	if err != nil {
		return exitf(exitUsage, "cache clear: %v", err)
	}
	path, existed, err := prepare.Clear(ctx, home)
	switch {
	case errors.Is(err, prepare.ErrRefuseClear):
		return exitf(exitUsage, "cache clear: %v", err)
	case errors.Is(err, context.Canceled):
		return err
	case err != nil:
		return exitf(exitFailed, "cache clear: %v", err)
	}
	if opts.json {
		return writeJSON(a.Stdout, cacheClearResult{Path: path, Existed: existed})
	}
	fmt.Fprintln(a.Stdout, path)
	if existed {
		a.log.Info("removed the prepared-bundle cache", "path", path)
	} else {
		a.log.Info("nothing to remove: the prepared-bundle cache does not exist", "path", path)
	}
	return nil
}
