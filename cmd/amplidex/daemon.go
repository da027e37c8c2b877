package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/config"
	"github.com/amplidex/amplidex/lint"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// defaultDebounce is the daemon's quiet period before a batch of changes
// is indexed, when the configuration does not set one.
const defaultDebounce = 20 * time.Millisecond

// defaultIdleExit is how long a daemon a client started stays without a
// client, when the configuration does not say.
const defaultIdleExit = 30 * time.Minute

// daemonFlags are the flags of `amplidex daemon`.
type daemonFlags struct {
	// detach starts a daemon in the background and returns.
	detach bool
	// detached is set on a daemon in the background (`daemon --detach`,
	// or one a client started): it logs to daemon.log in the state
	// directory.
	detached bool
	// autostarted is set, with detached, on the daemon a client started
	// because none ran: it exits once idle ([daemon] idle_exit).
	autostarted bool
	// service is set by the service manager's unit: clients leave the
	// daemon alone.
	service bool
	// LogFile is where the log goes instead of stderr.
	LogFile string
}

func newDaemonCmd(a *App) *cobra.Command {
	flags := &daemonFlags{}
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the background agent: watch, index, serve queries (stops on SIGINT/SIGTERM, reloads on SIGHUP)",
		Long: "daemon runs the background agent in the foreground, logging to stderr. With --detach it starts it\n" +
			"in the background instead, as query, watch and lsp do when none runs, and returns once it answers;\n" +
			"that daemon logs to daemon.log in the state directory. `daemon stop` stops it, `daemon restart`\n" +
			"replaces it.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if flags.detach {
				return a.runDetach(cmd.Context())
			}
			return a.runDaemon(cmd.Context(), flags)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&flags.detach, "detach", false, "start the daemon in the background and return once it answers")
	f.StringVar(&flags.LogFile, "log-file", "", "write the log to this file, rotated at 10 MiB (one FILE.1 kept), instead of stderr")
	f.BoolVar(&flags.detached, "detached", false, "run in the background, as --detach starts it (logs to daemon.log in the state directory)")
	f.BoolVar(&flags.service, "service", false, "run as a daemon the service manager started (clients leave it alone)")
	f.BoolVar(&flags.autostarted, "autostarted", false, "run as a daemon a client started because none ran (exits once idle)")
	_ = f.MarkHidden("detached")
	_ = f.MarkHidden("autostarted")
	_ = f.MarkHidden("service")
	cmd.AddCommand(&cobra.Command{
		Use:   "stop",
		Short: "Stop the daemon and wait until it has gone (exit 0 when none ran)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runStop(cmd.Context())
		},
	}, &cobra.Command{
		Use:   "restart",
		Short: "Stop the daemon, then start one in the background",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runRestart(cmd.Context())
		},
	})
	return cmd
}

// daemonOptions turns the workspace's configuration into daemon options.
func daemonOptions(ws *lint.Workspace, a *App) daemon.Options {
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
		Logger:      a.log,
		Watch: watcher.Options{
			Debounce: cmp.Or(w.Debounce.Duration, defaultDebounce), MaxWait: w.MaxWait.Duration,
			PollInterval: w.PollInterval.Duration, MaxWatches: w.MaxWatches,
			SyncDir: syncDir(a.Getenv, ws.Paths.StateDir),
		},
	}
}

// idleExit is how long a daemon a client started stays without a client:
// [daemon] idle_exit, 30 minutes when unset, 0 for never.
func idleExit(ws *lint.Workspace) time.Duration {
	if ie := ws.Config.Daemon.IdleExit; ie != nil {
		return ie.Duration
	}
	return defaultIdleExit
}

// daemonBundles returns the prepared-bundle cache and the manifests the
// daemon keeps warm: [prepare] manifest and manifests. Without a usable
// version or cache home it keeps none, and says why.
func (a *App) daemonBundles(ws *lint.Workspace) (*prepare.Cache, []string) {
	base := "."
	if ws.Config.Path() != "" {
		base = filepath.Dir(ws.Config.Path())
	}
	var manifests []string
	for _, m := range append([]string{ws.Config.Prepare.Manifest}, ws.Config.Prepare.Manifests...) {
		if m != "" {
			manifests = append(manifests, config.ExpandPath(m, base))
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

func (a *App) runDaemon(ctx context.Context, flags *daemonFlags) error {
	// Every handler is in place before the socket is bound: a reload
	// (`systemctl --user reload`, a client's) may come as soon as the
	// socket answers, and SIGHUP's default action ends the process. One
	// that comes during the start is taken once the daemon runs.
	// (SIGINT and SIGTERM are main's, from the first instruction on.)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	logPath := flags.LogFile
	if flags.detached && logPath == "" {
		logPath = filepath.Join(ws.Paths.StateDir, service.LogName)
	}
	if logPath != "" {
		if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
			return exitf(exitUsage, "daemon: %v", err)
		}
		// In the background, stdout and stderr follow the log file too.
		lf, err := service.OpenLogFile(logPath, service.MaxLogSize, flags.detached || flags.service)
		if err != nil {
			return exitf(exitUsage, "daemon: %v", err)
		}
		defer lf.Close()
		a.logTo(lf, false)
	}
	opts := daemonOptions(ws, a)
	opts.Prepare, opts.Manifests = a.daemonBundles(ws)
	switch {
	case flags.service:
		opts.Mode = query.ModeService
	case flags.detached && flags.autostarted:
		// Only a daemon a client started goes once idle: one started on
		// purpose, in the foreground, with --detach or by the service
		// manager, stays.
		opts.Mode, opts.IdleExit = query.ModeAutostart, idleExit(ws)
	case flags.detached:
		opts.Mode = query.ModeDetached
	}
	ln, err := service.ActivationListener()
	if err != nil {
		return exitf(exitUsage, "daemon: %v", err)
	}
	if ln != nil {
		opts.Listener, opts.Mode, opts.IdleExit = ln, query.ModeService, 0
		if got := ln.Addr().String(); got != ws.Paths.Socket {
			a.log.Warn("the socket handed over is not where clients look for it", "handed", got, "clients", ws.Paths.Socket)
		}
	}
	opts.Memory = a.daemonMemory()
	d, err := daemon.Start(ctx, opts)
	if errors.Is(err, daemon.ErrRunning) {
		return exitf(exitUsage, "%v", err)
	}
	if err != nil {
		return exitf(exitUsage, "daemon: %v", err)
	}
	for {
		select {
		case <-ctx.Done():
			a.log.Info("stopping")
			return d.Close()
		case <-d.StopRequested():
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
			nopts := daemonOptions(nws, a)
			nopts.Prepare, nopts.Manifests = a.daemonBundles(nws)
			if opts.Mode == query.ModeAutostart {
				nopts.IdleExit = idleExit(nws)
			}
			if err := d.Reload(nopts); err != nil {
				a.log.Error("configuration reload incomplete", "err", err)
			}
		}
	}
}

// runDetach is `amplidex daemon --detach`: it starts the daemon in the
// background unless one answers, and returns once it does.
func (a *App) runDetach(ctx context.Context) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	c, info, err := a.launcher().Ensure(ctx, ws, false)
	if err != nil {
		return exitf(exitUsage, "daemon --detach: %v", err)
	}
	defer c.Close()
	if info == nil {
		vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		running, _, err := query.Call(vctx, c, query.MethodVersion, query.VersionParams{})
		cancel()
		if err == nil {
			fmt.Fprintf(a.Stderr, "amplidex: a daemon already runs (pid %d, %s)\n", running.PID, running.Mode)
		} else {
			fmt.Fprintln(a.Stderr, "amplidex: a daemon already runs")
		}
		return nil
	}
	fmt.Fprintf(a.Stderr, "amplidex: the daemon runs in the background (pid %d; log %s)\n",
		info.PID, filepath.Join(ws.Paths.StateDir, service.LogName))
	return nil
}

// runStop is `amplidex daemon stop`.
func (a *App) runStop(ctx context.Context) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	info, err := a.launcher().Stop(ctx, ws)
	if err != nil {
		return exitf(exitUsage, "daemon stop: %v", err)
	}
	if info == nil {
		fmt.Fprintln(a.Stderr, "amplidex: no daemon was running")
		return nil
	}
	fmt.Fprintf(a.Stderr, "amplidex: the daemon (pid %d) stopped\n", info.PID)
	if info.SocketActivated {
		fmt.Fprintln(a.Stderr, "amplidex: systemd still holds the socket and starts the daemon on the next query; `systemctl --user stop amplidex.socket` stops that too")
	}
	return nil
}

// runRestart is `amplidex daemon restart`: stop, then start in the
// background (a socket-activated daemon is started again by systemd on
// the first connection).
func (a *App) runRestart(ctx context.Context) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	stopped, err := a.launcher().Stop(ctx, ws)
	if err != nil {
		return exitf(exitUsage, "daemon restart: %v", err)
	}
	if stopped != nil {
		fmt.Fprintf(a.Stderr, "amplidex: the daemon (pid %d) stopped\n", stopped.PID)
	}
	// A daemon a client started is started again as one: it still goes
	// once idle.
	c, _, err := a.launcher().Ensure(ctx, ws, stopped != nil && stopped.Mode == query.ModeAutostart)
	if err != nil {
		return exitf(exitUsage, "daemon restart: %v", err)
	}
	defer c.Close()
	vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, _, err := query.Call(vctx, c, query.MethodVersion, query.VersionParams{})
	if err != nil {
		return exitf(exitUnreachable, "daemon restart: %v", err)
	}
	fmt.Fprintf(a.Stderr, "amplidex: the daemon runs (pid %d, %s, %s)\n", info.PID, info.Mode, info.Build.Short())
	return nil
}
