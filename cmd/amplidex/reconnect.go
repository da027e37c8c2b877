package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/amplidex/amplidex/query"
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

// errDaemonGone is returned by watchDaemon when the daemon went away
// (stopped, restarted, or replaced by a newer build): another may answer.
var errDaemonGone = errors.New("the daemon went away")

// redialOnce looks once for the daemon a client whose connection was lost
// (watch, lsp) goes on with: the one that answers now, whatever its build
// (a newer build that replaced the last is not replaced back), else, with
// auto-start on and the last one gone for spawnGrace since lostAt, a new
// one started in the background. It returns nil when there is none yet.
func (a *App) redialOnce(ctx context.Context, ws *workspace, lostAt time.Time) (*query.Client, error) {
	c, err := a.dial(ctx, ws)
	if err != nil || c != nil {
		return c, err
	}
	if !a.autostart(ws) || time.Since(lostAt) < spawnGrace {
		return nil, nil
	}
	c, info, err := a.ensureDaemon(ctx, ws, true)
	if err != nil {
		return nil, err
	}
	if info != nil {
		fmt.Fprintf(a.Stderr, "amplidex: started the daemon in the background (pid %d; log %s)\n",
			info.PID, filepath.Join(ws.paths.StateDir, daemonLogName))
	}
	return c, nil
}

// rejoin finds the daemon watch goes on with once its own went away
// (why), looking again and again, the pauses growing, and showing how
// long it has waited on a terminal. It gives up, with exit 3, after
// rejoinLimit without a daemon; it returns nil, nil when ctx ends.
func (a *App) rejoin(ctx context.Context, ws *workspace, why error) (*query.Client, error) {
	limit := cmp.Or(a.rejoinLimit, rejoinLimit)
	lostAt := time.Now()
	pause := 50 * time.Millisecond
	defer a.line.Clear()
	var last error
	for {
		c, err := a.redialOnce(ctx, ws, lostAt)
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
			return nil, exitf(exitUnreachable, "%s", msg)
		}
		if waited > 500*time.Millisecond {
			a.line.Set("amplidex: waiting for the daemon (%s)", waited.Round(100*time.Millisecond))
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

// followDaemon prints the updates of a subscription to the daemon behind
// c and, whenever that daemon goes away (it stopped, restarted, or a
// newer build replaced it), subscribes again to the one that answers
// next, saying so in one line on stderr. A subscription made again starts
// with every followed file's diagnostics, so what changed meanwhile, what
// cleared too, is printed. Every client it made is closed when it
// returns.
func (a *App) followDaemon(ctx context.Context, c *query.Client, ws *workspace, paths []string, pr *watchPrinter) error {
	// rejoined is set from the daemon's going until a subscription is
	// taken again: only then is it said, once, however many daemons were
	// tried (one on its way out may still take a connection).
	rejoined := false
	subscribed := func() {
		if !rejoined {
			return
		}
		rejoined = false
		vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, _, err := query.Call(vctx, c, query.MethodVersion, query.VersionParams{})
		cancel()
		if err != nil {
			fmt.Fprintln(a.Stderr, "amplidex: the daemon went away; watching again through a new one")
			return
		}
		fmt.Fprintf(a.Stderr, "amplidex: the daemon went away; watching again through the daemon of pid %d\n", info.PID)
	}
	for {
		err := a.watchDaemon(ctx, c, ws, paths, pr, subscribed)
		c.Close()
		if !errors.Is(err, errDaemonGone) || ctx.Err() != nil {
			return err
		}
		rejoined = true
		if c, err = a.rejoin(ctx, ws, err); c == nil {
			return err
		}
	}
}

// lspRedial is the language server's lsp.DaemonAnalyzer.Redial: it looks
// for the daemon (see redialOnce) again and again for spawnGrace, the
// time a restart or an upgrade takes to bring the next one up, and then
// once more, starting one when auto-start is on. It returns nil when
// none answered.
func (a *App) lspRedial(ws *workspace) func(context.Context) (*query.Client, error) {
	return func(ctx context.Context) (*query.Client, error) {
		lostAt := time.Now()
		pause := 50 * time.Millisecond
		for {
			c, err := a.redialOnce(ctx, ws, lostAt)
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
