package main

import (
	"context"
	"path/filepath"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
	"github.com/spf13/cobra"
)

func newForgetCmd(a *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "forget [DIR]",
		Short: "Make the daemon forget a project (default: this one); exit 1 when it was not registered",
		Long: "forget drops a registered project from the daemon: its view, the watches of its roots, and its\n" +
			"place in the list kept across restarts. DIR may be gone. The daemon also forgets, on its own,\n" +
			"projects whose directory is gone and those nobody asked about for [daemon] forget_after.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runForget(cmd.Context(), args, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *App) runForget(ctx context.Context, args []string, asJSON bool) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	dir := ws.Project
	if len(args) > 0 {
		if dir, err = filepath.Abs(args[0]); err != nil {
			return exitf(exitUsage, "forget: %v", err)
		}
	}
	c, err := a.requireDaemon(ctx, ws, "forget")
	if err != nil {
		return err
	}
	defer c.Close()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, _, err := query.Call(cctx, c, query.MethodForget, query.ForgetParams{Dir: dir})
	if err != nil {
		if service.IsAnswerError(err) {
			return exitf(exitUsage, "forget: %v", err)
		}
		return daemonError(err)
	}
	if asJSON {
		err = query.PrintJSON(a.Stdout, res)
	} else {
		err = query.MethodForget.Print(a.Stdout, res, a.printOptions())
	}
	if err == nil && !res.Forgotten {
		return exitCode(exitFailed)
	}
	return err
}
