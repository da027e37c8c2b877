package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

// errDaemonGone is returned by watchDaemon when the daemon went away
// (stopped, restarted, or replaced by a newer build): another may answer.
var errDaemonGone = errors.New("the daemon went away")

// followDaemon prints the updates of a subscription to the daemon behind
// c and, whenever that daemon goes away (it stopped, restarted, or a
// newer build replaced it), subscribes again to the one that answers
// next, saying so in one line on stderr. A subscription made again starts
// with every followed file's diagnostics, so what changed meanwhile, what
// cleared too, is printed. Every client it made is closed when it
// returns.
func (a *App) followDaemon(ctx context.Context, c *query.Client, ws *lint.Workspace, paths []string, pr *lint.Changes) error {
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
		if c, err = a.launcher().Rejoin(ctx, ws, err); c == nil {
			return err
		}
	}
}
