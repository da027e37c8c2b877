package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

const (
	// spawnGrace is how long a client whose daemon went away only looks
	// for the next one before it starts one itself: `daemon restart`, an
	// upgrade or another client is usually bringing one up.
	spawnGrace = 2 * time.Second
	// rejoinLimit is how long watch looks for a daemon, once its own went
	// away, before it gives up.
	rejoinLimit = 30 * time.Second
	// rejoinMaxPause is the longest pause between two looks.
	rejoinMaxPause = time.Second
)

// Redial looks once for the daemon a client whose connection was lost
// (watch, lsp) goes on with: the one that answers now, whatever its build
// (a newer build that replaced the last is not replaced back), else, with
// auto-start on and the last one gone for spawnGrace since lostAt, a new
// one started in the background. It returns nil when there is none yet.
func (l *Launcher) Redial(ctx context.Context, ws *lint.Workspace, lostAt time.Time) (*query.Client, error) {
	c, err := l.Dial(ctx, ws)
	if err != nil || c != nil {
		return c, err
	}
	if !l.autostart(ws) || time.Since(lostAt) < spawnGrace {
		return nil, nil
	}
	c, info, err := l.Ensure(ctx, ws, true)
	if err != nil {
		return nil, err
	}
	if info != nil {
		fmt.Fprintf(l.Stderr, "amplidex: started the daemon in the background (pid %d; log %s)\n",
			info.PID, filepath.Join(ws.Paths.StateDir, LogName))
	}
	return c, nil
}

// Rejoin finds the daemon watch goes on with once its own went away
// (why), looking again and again, the pauses growing, and showing how
// long it has waited on a terminal. It gives up, with exit 3, after
// rejoinLimit without a daemon; it returns nil, nil when ctx ends.
func (l *Launcher) Rejoin(ctx context.Context, ws *lint.Workspace, why error) (*query.Client, error) {
	limit := cmp.Or(l.RejoinLimit, rejoinLimit)
	lostAt := time.Now()
	pause := 50 * time.Millisecond
	defer l.status().Clear()
	var last error
	for {
		c, err := l.Redial(ctx, ws, lostAt)
		if c != nil {
			return c, nil
		}
		if err != nil {
			last = err
		}
		waited := time.Since(lostAt)
		if waited > limit {
			msg := fmt.Sprintf("watch: no daemon answered for %s after %v", limit, why)
			if last != nil {
				msg += fmt.Sprintf(" (the last attempt: %v)", last)
			}
			return nil, &UnreachableError{Err: errors.New(msg)}
		}
		if waited > 500*time.Millisecond {
			l.status().Set("amplidex: waiting for the daemon (%s)", waited.Round(100*time.Millisecond))
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-t.C:
		}
		pause = min(2*pause, rejoinMaxPause)
	}
}

// Redialer is the language server's lsp.DaemonAnalyzer.Redial: it looks
// for the daemon (see Redial) again and again for spawnGrace, the
// time a restart or an upgrade takes to bring the next one up, and then
// once more, starting one when auto-start is on. It returns nil when
// none answered.
func (l *Launcher) Redialer(ws *lint.Workspace) func(context.Context) (*query.Client, error) {
	return func(ctx context.Context) (*query.Client, error) {
		lostAt := time.Now()
		pause := 50 * time.Millisecond
		for {
			c, err := l.Redial(ctx, ws, lostAt)
			if c != nil || err != nil || time.Since(lostAt) > spawnGrace {
				return c, err
			}
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
			pause = min(2*pause, 500*time.Millisecond)
		}
	}
}
