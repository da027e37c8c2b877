package service

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
	"github.com/amplidex/amplidex/watcher"
)

// defaultDebounce is the daemon's quiet period before a batch of changes
// is indexed, when the configuration does not set one.
const defaultDebounce = 20 * time.Millisecond

// defaultIdleExit is how long a daemon a client started stays without a
// client, when the configuration does not say.
const defaultIdleExit = 30 * time.Minute

// DaemonOptions turns the workspace's configuration into daemon options.
func DaemonOptions(ws *lint.Workspace, getenv func(string) string, log *slog.Logger) daemon.Options {
	w := ws.Config.Watch
	forgetAfter := time.Duration(0)
	if fa := ws.Config.Daemon.ForgetAfter; fa != nil {
		forgetAfter = fa.Duration
		if forgetAfter == 0 {
			forgetAfter = -1 // never
		}
	}
	return daemon.Options{
		ForgetAfter: forgetAfter,
		Paths:       ws.Paths,
		Home:        ws.Home,
		Bundled:     ws.Bundled,
		Schema:      ws.SchemaOptions(),
		Logger:      log,
		Watch: watcher.Options{
			Debounce: cmp.Or(w.Debounce.Duration, defaultDebounce), MaxWait: w.MaxWait.Duration,
			PollInterval: w.PollInterval.Duration, MaxWatches: w.MaxWatches,
			SyncDir: syncDir(getenv, ws.Paths.StateDir),
		},
	}
}

// IdleExit is how long a daemon a client started stays without a client:
// [daemon] idle_exit, 30 minutes when unset, 0 for never.
func IdleExit(ws *lint.Workspace) time.Duration {
	if ie := ws.Config.Daemon.IdleExit; ie != nil {
		return ie.Duration
	}
	return defaultIdleExit
}

// syncDir is where the watcher writes the cookie files that make queries
// read their writes: a memory file system when there is one
// ($XDG_RUNTIME_DIR, else /dev/shm), where a cookie costs tens of
// microseconds instead of the milliseconds of a disk, else the state
// directory.
func syncDir(getenv func(string) string, state string) string {
	for _, d := range []string{getenv("XDG_RUNTIME_DIR"), "/dev/shm"} {
		if d == "" {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && writable(d) {
			return d
		}
	}
	return state
}

// WatchInProcess follows paths as a daemon's subscription does, printing
// each update with print: it runs the daemon's engine in this process, with its own
// index in a temporary directory and no socket.
func WatchInProcess(ctx context.Context, ws *lint.Workspace, getenv func(string) string, log *slog.Logger, paths []string,
	print func(query.Update) error) error {
	tmp, err := os.MkdirTemp("", "amplidex-watch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	opts := DaemonOptions(ws, getenv, log)
	opts.Paths = query.Paths{Index: filepath.Join(tmp, "index.db"), PidFile: filepath.Join(tmp, "amplidex.pid"),
		Socket: filepath.Join(tmp, "amplidex.sock"), StateDir: tmp}
	opts.NoSocket, opts.NoSync = true, true
	d, err := daemon.Start(ctx, opts)
	if err != nil {
		return usageErrorf("watch: %v", err)
	}
	defer d.Close()
	err = d.FollowRoots(ctx, ws.Common(false), paths, print)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
