package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
	"github.com/spf13/cobra"
)

func newStatusCmd(a *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the daemon: pid, uptime, roots and their health, counts, clock, warnings (exit 3 when none runs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runStatus(cmd.Context(), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *App) runStatus(ctx context.Context, asJSON bool) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	c, err := a.requireDaemon(ctx, ws, "status")
	if err != nil {
		return err
	}
	defer c.Close()
	var st daemon.Status
	if err := callDaemon(ctx, c, "status", nil, &st); err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(a.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "pid\t%d\nuptime\t%s\nsocket\t%s\nindex\t%s\nclock\t%s\nfiles\t%d\n",
		st.PID, st.Uptime, st.Socket, st.Index, st.Clock, st.Files)
	for _, r := range st.Roots {
		fmt.Fprintf(tw, "root\t%s\t%s\t%s\t%d collections\t%d watches\n", r.Kind, r.State, r.Path, r.Collections, r.Watches)
		for _, w := range r.Warnings {
			fmt.Fprintf(tw, "\twarning: %s\n", w)
		}
	}
	for _, p := range st.Projects {
		fmt.Fprintf(tw, "project\t%s\n", p)
	}
	for _, b := range st.Bundles {
		fmt.Fprintf(tw, "bundle\t%s\t%s\t%s", b.State, b.Manifest, b.Key)
		if !b.LastBuild.IsZero() {
			fmt.Fprintf(tw, "\tbuilt %s in %s", b.LastBuild.Format(time.RFC3339), b.Took)
		}
		if b.Error != "" {
			fmt.Fprintf(tw, "\t%s", b.Error)
		}
		fmt.Fprintln(tw)
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(tw, "warning\t%s\n", w)
	}
	return tw.Flush()
}

// requireDaemon connects to the daemon, or fails with exit 3 naming what
// needed it.
func (a *App) requireDaemon(ctx context.Context, ws *workspace, what string) (*query.Client, error) {
	c, err := a.dial(ctx, ws)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, exitf(exitUnreachable, "%s needs the daemon, and none is running (socket %s)", what, ws.paths.Socket)
	}
	return c, nil
}

// callDaemon makes one call with a deadline; a failure exits 3.
func callDaemon(ctx context.Context, c *query.Client, method string, params, out any) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.Call(cctx, method, params, out); err != nil {
		return exitf(exitUnreachable, "daemon: %s: %v", method, err)
	}
	return nil
}

// dial connects to the daemon, or returns a nil client when none runs.
func (a *App) dial(ctx context.Context, ws *workspace) (*query.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := query.Dial(dctx, ws.paths.Socket)
	if errors.Is(err, query.ErrNoDaemon) {
		return nil, nil
	}
	if err != nil {
		if strings.Contains(err.Error(), "permission") {
			return nil, exitf(exitUnreachable, "daemon: %v", err)
		}
		return nil, nil
	}
	return c, nil
}
