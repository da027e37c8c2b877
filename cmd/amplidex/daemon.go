package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/watcher"
	"github.com/spf13/cobra"
)

// defaultDebounce is the daemon's quiet period before a batch of changes
// is indexed, when the configuration does not set one.
const defaultDebounce = 20 * time.Millisecond

func newDaemonCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "daemon",
		Short: "Run the background agent: watch, index, serve queries (stops on SIGINT/SIGTERM, reloads on SIGHUP)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runDaemon(cmd.Context())
		},
	}
}

// daemonOptions turns the workspace's configuration into daemon options.
func (ws *workspace) daemonOptions(a *App) daemon.Options {
	w := ws.cfg.Watch
	return daemon.Options{
		Paths:   ws.paths,
		Home:    ws.home,
		Bundled: ws.bundled,
		Schema:  ws.schemaOptions(),
		Logger:  a.log,
		Watch: watcher.Options{
			Debounce: cmp.Or(w.Debounce.Duration, defaultDebounce), MaxWait: w.MaxWait.Duration,
			PollInterval: w.PollInterval.Duration, MaxWatches: w.MaxWatches,
			SyncDir: syncDir(a.Getenv, ws.paths.StateDir),
		},
	}
}

// daemonBundles returns the prepared-bundle cache and the manifests the
// daemon keeps warm: [prepare] manifest and manifests. Without a usable
// version or cache home it keeps none, and says why.
func (a *App) daemonBundles(ws *workspace) (*prepare.Cache, []string) {
	base := "."
	if ws.cfg.path != "" {
		base = filepath.Dir(ws.cfg.path)
	}
	var manifests []string
	for _, m := range append([]string{ws.cfg.Prepare.Manifest}, ws.cfg.Prepare.Manifests...) {
		if m != "" {
			manifests = append(manifests, expandPath(m, base))
		}
	}
	if len(manifests) == 0 {
		return nil, nil
	}
	s, err := a.prepareSetup(prepareFlags{manifest: manifests[0]})
	if err != nil {
		a.log.Warn("prepared bundles are not kept warm", "err", err)
		return nil, nil
	}
	return s.cache, manifests
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

func (a *App) runDaemon(ctx context.Context) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	opts := ws.daemonOptions(a)
	opts.Prepare, opts.Manifests = a.daemonBundles(ws)
	// The first scan allocates much and keeps little: collect less often
	// while it runs (the daemon gives the memory back when it is done).
	gogc := a.Getenv("GOGC") == ""
	if gogc {
		debug.SetGCPercent(200)
	}
	d, err := daemon.Start(ctx, opts)
	if errors.Is(err, daemon.ErrRunning) {
		return exitf(exitUsage, "%v", err)
	}
	if err != nil {
		return exitf(exitUsage, "daemon: %v", err)
	}
	// Once the first scan is done the daemon is idle most of the time:
	// trade a little CPU for a smaller heap, unless GOGC says otherwise.
	if gogc {
		debug.SetGCPercent(50)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			a.log.Info("stopping")
			return d.Close()
		case <-hup:
			a.log.Info("reloading configuration")
			nws, err := a.workspace()
			if err != nil {
				a.log.Error("configuration not reloaded", "err", err)
				d.Warn(fmt.Sprintf("configuration not reloaded: %v", err))
				continue
			}
			nopts := nws.daemonOptions(a)
			nopts.Prepare, nopts.Manifests = a.daemonBundles(nws)
			if err := d.Reload(nopts); err != nil {
				a.log.Error("configuration reload incomplete", "err", err)
			}
		}
	}
}
