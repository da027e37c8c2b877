package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
)

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
	opts := service.DaemonOptions(ws, a.Getenv, a.log)
	opts.Prepare, opts.Manifests = service.DaemonBundles(ws, a.Getenv, a.log)
	switch {
	case flags.service:
		opts.Mode = query.ModeService
	case flags.detached && flags.autostarted:
		// Only a daemon a client started goes once idle: one started on
		// purpose, in the foreground, with --detach or by the service
		// manager, stays.
		opts.Mode, opts.IdleExit = query.ModeAutostart, service.IdleExit(ws)
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
			nopts := service.DaemonOptions(nws, a.Getenv, a.log)
			nopts.Prepare, nopts.Manifests = service.DaemonBundles(nws, a.Getenv, a.log)
			if opts.Mode == query.ModeAutostart {
				nopts.IdleExit = service.IdleExit(nws)
			}
			if err := d.Reload(nopts); err != nil {
				a.log.Error("configuration reload incomplete", "err", err)
			}
		}
	}
}

// runDetach is `amplidex daemon --detach`.
func (a *App) runDetach(ctx context.Context) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	return a.launcher().Detach(ctx, ws)
}

// runStop is `amplidex daemon stop`.
func (a *App) runStop(ctx context.Context) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	return a.launcher().Stop(ctx, ws)
}

// runRestart is `amplidex daemon restart`.
func (a *App) runRestart(ctx context.Context) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	return a.launcher().Restart(ctx, ws)
}
