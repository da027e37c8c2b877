package service

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

// Detach is `amplidex daemon --detach`: it starts the daemon in the
// background unless one answers, and returns once it does.
func (l *Launcher) Detach(ctx context.Context, ws *lint.Workspace) error {
	c, info, err := l.Ensure(ctx, ws, false)
	if err != nil {
		return usageErrorf("daemon --detach: %v", err)
	}
	defer c.Close()
	if info == nil {
		vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		running, _, err := query.Call(vctx, c, query.MethodVersion, query.VersionParams{})
		cancel()
		if err == nil {
			fmt.Fprintf(l.Stderr, "amplidex: a daemon already runs (pid %d, %s)\n", running.PID, running.Mode)
		} else {
			fmt.Fprintln(l.Stderr, "amplidex: a daemon already runs")
		}
		return nil
	}
	fmt.Fprintf(l.Stderr, "amplidex: the daemon runs in the background (pid %d; log %s)\n",
		info.PID, filepath.Join(ws.Paths.StateDir, LogName))
	return nil
}

// Stop is `amplidex daemon stop`: it stops the daemon, waits until it
// has gone, and says so.
func (l *Launcher) Stop(ctx context.Context, ws *lint.Workspace) error {
	info, err := l.stop(ctx, ws)
	if err != nil {
		return usageErrorf("daemon stop: %v", err)
	}
	if info == nil {
		fmt.Fprintln(l.Stderr, "amplidex: no daemon was running")
		return nil
	}
	fmt.Fprintf(l.Stderr, "amplidex: the daemon (pid %d) stopped\n", info.PID)
	if info.SocketActivated {
		fmt.Fprintln(l.Stderr, "amplidex: systemd still holds the socket and starts the daemon on the next query; `systemctl --user stop amplidex.socket` stops that too")
	}
	return nil
}

// Restart is `amplidex daemon restart`: stop, then start in the
// background (a socket-activated daemon is started again by systemd on
// the first connection).
func (l *Launcher) Restart(ctx context.Context, ws *lint.Workspace) error {
	stopped, err := l.stop(ctx, ws)
	if err != nil {
		return usageErrorf("daemon restart: %v", err)
	}
	if stopped != nil {
		fmt.Fprintf(l.Stderr, "amplidex: the daemon (pid %d) stopped\n", stopped.PID)
	}
	// A daemon a client started is started again as one: it still goes
	// once idle.
	c, _, err := l.Ensure(ctx, ws, stopped != nil && stopped.Mode == query.ModeAutostart)
	if err != nil {
		return usageErrorf("daemon restart: %v", err)
	}
	defer c.Close()
	vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, _, err := query.Call(vctx, c, query.MethodVersion, query.VersionParams{})
	if err != nil {
		return &UnreachableError{Err: fmt.Errorf("daemon restart: %v", err)}
	}
	fmt.Fprintf(l.Stderr, "amplidex: the daemon runs (pid %d, %s, %s)\n", info.PID, info.Mode, info.Build.Short())
	return nil
}

// DaemonStatus asks the daemon behind c for its status; with wait set, again
// and again until its first scan has ended, showing how far it got on a
// terminal (show). A failed call is a *CallError.
func (l *Launcher) DaemonStatus(ctx context.Context, c *query.Client, wait, show bool) (*query.Status, error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	st, _, err := query.Call(cctx, c, query.MethodStatus, query.StatusParams{})
	if err != nil {
		return nil, &CallError{Err: err}
	}
	for wait && st.Scanning {
		if p := st.Progress; show && p != nil {
			l.status().Set("amplidex: the daemon's first scan (%s): %d files, %d collections, %s", p.Phase, p.Files, p.Collections, p.Elapsed)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
		st, _, err = query.Call(sctx, c, query.MethodStatus, query.StatusParams{})
		scancel()
		if err != nil {
			return nil, &CallError{Err: err}
		}
	}
	l.status().Clear()
	return st, nil
}
