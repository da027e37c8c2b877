package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
	"github.com/spf13/cobra"
)

func newStatusCmd(a *App) *cobra.Command {
	var asJSON, wait bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the daemon: pid, version, uptime, roots and their health, projects, counts, clock, warnings (exit 3 when none runs)",
		Long: "status answers at once, during the daemon's first scan too: then it shows how far the scan got.\n" +
			"--wait waits for the scan to end first, with a progress line on a terminal.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runStatus(cmd.Context(), asJSON, wait)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the daemon's first scan has ended")
	return cmd
}

// noDaemon is what `status --json` prints when no daemon runs.
type noDaemon struct {
	Running bool   `json:"running"`
	Socket  string `json:"socket"`
	Message string `json:"message"`
}

func (a *App) runStatus(ctx context.Context, asJSON, wait bool) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	c, err := a.launcher().Dial(ctx, ws)
	if err != nil {
		return err
	}
	if c == nil {
		msg := fmt.Sprintf("no daemon is running (socket %s)", ws.Paths.Socket)
		if asJSON {
			if err := query.PrintJSON(a.Stdout, noDaemon{Running: false, Socket: ws.Paths.Socket, Message: msg}); err != nil {
				return err
			}
			fmt.Fprintf(a.Stderr, "amplidex: %s\n", msg)
			return exitCode(exitUnreachable)
		}
		return exitf(exitUnreachable, "%s", msg)
	}
	defer c.Close()
	st, err := a.launcher().DaemonStatus(ctx, c, wait, !asJSON)
	var ce *service.CallError
	if errors.As(err, &ce) {
		return daemonError(ce.Err)
	} else if err != nil {
		return err
	}
	if mine := query.ReadBuild(); !st.Build.Same(mine) {
		fmt.Fprintf(a.Stderr, "amplidex: the daemon runs another build: %s; this is %s\n", st.Build, mine)
	}
	if asJSON {
		return query.PrintJSON(a.Stdout, st)
	}
	return query.MethodStatus.Print(a.Stdout, st, a.printOptions())
}

// requireDaemon connects to the daemon, or fails with exit 3 naming what
// needed it.
func (a *App) requireDaemon(ctx context.Context, ws *lint.Workspace, what string) (*query.Client, error) {
	c, err := a.launcher().Dial(ctx, ws)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, exitf(exitUnreachable, "%s needs the daemon, and none is running (socket %s)", what, ws.Paths.Socket)
	}
	return c, nil
}
