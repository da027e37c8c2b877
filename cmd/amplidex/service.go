package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/lint"
	"github.com/amplidex/amplidex/query"
	"github.com/spf13/cobra"
)

// serviceOptions are the flags of `amplidex service`.
type serviceOptions struct {
	print bool
}

func newServiceCmd(a *App) *cobra.Command {
	opts := &serviceOptions{}
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Run the daemon as a user service: systemd socket activation on Linux, a launchd agent on macOS",
		Long: "service install writes a systemd user socket and service ($XDG_CONFIG_HOME/systemd/user/amplidex.socket\n" +
			"and amplidex.service): systemd makes the socket and starts the daemon on the first connection. On macOS\n" +
			"it writes a launchd agent (~/Library/LaunchAgents/" + service.LaunchdLabel + ".plist) that runs the daemon at login.\n" +
			"The files carry this shell's AMPLIDEX_HOME, AMPLIDEX_BUNDLED, AMPLIFIER_AGENT_HOME and XDG_* variables.",
	}
	install := &cobra.Command{
		Use:   "install",
		Short: "Write the service files and enable them (--print shows them instead)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runServiceInstall(cmd.Context(), opts)
		},
	}
	install.Flags().BoolVar(&opts.print, "print", false, "print the files instead of writing them")
	cmd.AddCommand(install, &cobra.Command{
		Use:   "uninstall",
		Short: "Disable the service and remove its files",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runServiceUninstall(cmd.Context())
		},
	}, &cobra.Command{
		Use:   "status",
		Short: "Show whether the service is installed and running (exit 1 when not installed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runServiceStatus(cmd.Context())
		},
	})
	return cmd
}

// serviceSetup returns the workspace and the files of this system's
// service manager.
func (a *App) serviceSetup() (*lint.Workspace, []service.File, error) {
	ws, err := a.workspace()
	if err != nil {
		return nil, nil, err
	}
	spec, err := a.launcher().Spec(ws)
	if err != nil {
		return nil, nil, exitf(exitUsage, "service: %v", err)
	}
	files, err := service.Files(runtime.GOOS, spec, a.Getenv)
	if err != nil {
		return nil, nil, exitf(exitUsage, "service: %v", err)
	}
	return ws, files, nil
}

func (a *App) runServiceInstall(ctx context.Context, opts *serviceOptions) error {
	ws, files, err := a.serviceSetup()
	if err != nil {
		return err
	}
	if opts.print {
		for i, f := range files {
			if i > 0 {
				fmt.Fprintln(a.Stdout)
			}
			fmt.Fprintf(a.Stdout, "# %s\n%s", f.Path, f.Content)
		}
		return nil
	}
	// Nothing changes unless the service manager can take over: a daemon
	// stopped for a manager that cannot start the service would leave
	// none running.
	if err := service.CheckManager(ctx); err != nil {
		return exitf(exitUsage, "service install: %v; nothing was changed, and a daemon that runs goes on", err)
	}
	// The service makes its own socket where a daemon in the background
	// has one: stop that daemon first.
	if c, _ := a.launcher().Dial(ctx, ws); c != nil {
		vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, _, err := query.Call(vctx, c, query.MethodVersion, query.VersionParams{})
		cancel()
		c.Close()
		if err == nil && info.Mode != query.ModeService {
			if _, err := a.launcher().Stop(ctx, ws); err != nil {
				return exitf(exitUsage, "service install: stop the running daemon: %v", err)
			}
			fmt.Fprintf(a.Stderr, "amplidex: stopped the daemon (pid %d); the service takes over its socket\n", info.PID)
		}
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			return exitf(exitUsage, "service install: %v", err)
		}
		if err := service.WriteFileAtomic(f.Path, []byte(f.Content), 0o644); err != nil {
			return exitf(exitUsage, "service install: %v", err)
		}
		fmt.Fprintf(a.Stdout, "wrote %s\n", f.Path)
	}
	return a.runManager(ctx, service.ManagerCommands(true, files), false)
}

func (a *App) runServiceUninstall(ctx context.Context) error {
	_, files, err := a.serviceSetup()
	if err != nil {
		return err
	}
	var present []service.File
	for _, f := range files {
		if _, err := os.Lstat(f.Path); err == nil {
			present = append(present, f)
		}
	}
	if len(present) == 0 {
		fmt.Fprintln(a.Stderr, "amplidex: the service is not installed")
		return nil
	}
	cmds := service.ManagerCommands(false, files)
	// Disable before the files go; reload the manager after.
	if err := a.runManager(ctx, cmds[:1], true); err != nil {
		return err
	}
	for _, f := range present {
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return exitf(exitUsage, "service uninstall: %v", err)
		}
		fmt.Fprintf(a.Stdout, "removed %s\n", f.Path)
	}
	return a.runManager(ctx, cmds[1:], true)
}

// runManager runs the service manager's commands when its program is on
// PATH, else prints them for the user to run. A failing command stops the
// rest; with lenient set it is only reported.
func (a *App) runManager(ctx context.Context, cmds [][]string, lenient bool) error {
	if len(cmds) == 0 {
		return nil
	}
	if _, err := exec.LookPath(cmds[0][0]); err != nil {
		fmt.Fprintf(a.Stderr, "amplidex: %s is not on PATH; run:\n", cmds[0][0])
		for _, c := range cmds {
			fmt.Fprintf(a.Stderr, "  %s\n", strings.Join(c, " "))
		}
		return nil
	}
	for i, c := range cmds {
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, c[0], c[1:]...)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if err == nil {
			continue
		}
		msg := strings.TrimSpace(out.String())
		if lenient {
			fmt.Fprintf(a.Stderr, "amplidex: %s: %v %s\n", strings.Join(c, " "), err, msg)
			continue
		}
		fmt.Fprintf(a.Stderr, "amplidex: %s failed: %v\n", strings.Join(c, " "), err)
		if msg != "" {
			fmt.Fprintf(a.Stderr, "%s\n", msg)
		}
		fmt.Fprintln(a.Stderr, "amplidex: the files are written; once the service manager answers, run:")
		for _, rest := range cmds[i:] {
			fmt.Fprintf(a.Stderr, "  %s\n", strings.Join(rest, " "))
		}
		return exitCode(exitUsage)
	}
	return nil
}

func (a *App) runServiceStatus(ctx context.Context) error {
	ws, files, err := a.serviceSetup()
	if err != nil {
		return err
	}
	var rows [][3]string
	installed := true
	for _, f := range files {
		state := "installed"
		if _, err := os.Lstat(f.Path); err != nil {
			state, installed = "missing", false
		}
		rows = append(rows, [3]string{"file", f.Path, state})
	}
	if runtime.GOOS == "linux" {
		if _, err := exec.LookPath("systemctl"); err == nil {
			for _, unit := range []string{service.SocketUnit, service.ServiceUnit} {
				active, _ := exec.CommandContext(ctx, "systemctl", "--user", "is-active", unit).Output()
				enabled, _ := exec.CommandContext(ctx, "systemctl", "--user", "is-enabled", unit).Output()
				rows = append(rows, [3]string{"unit", unit, service.OrUnknown(active) + ", " + service.OrUnknown(enabled)})
			}
		}
	}
	// A connection to a socket systemd holds would start the daemon: ask
	// only a daemon that runs.
	var c *query.Client
	if pid := service.ReadPid(ws.Paths.PidFile); pid > 0 && service.ProcessAlive(pid) {
		c, _ = a.launcher().Dial(ctx, ws)
	}
	daemonRow := [3]string{"daemon", "-", "not running"}
	if c != nil {
		vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, _, err := query.Call(vctx, c, query.MethodVersion, query.VersionParams{})
		cancel()
		c.Close()
		if err == nil {
			mode := string(info.Mode)
			if info.SocketActivated {
				mode += " (socket-activated)"
			}
			daemonRow = [3]string{"daemon", fmt.Sprintf("pid %d", info.PID), "running: " + mode + ", " + info.Build.Short()}
		}
	}
	rows = append(rows, daemonRow)
	if err := service.PrintStatus(a.Stdout, rows, isTerminal(a.Stdout)); err != nil {
		return err
	}
	if !installed {
		return exitCode(exitFailed)
	}
	return nil
}
