package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

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
			"it writes a launchd agent (~/Library/LaunchAgents/" + launchdLabel + ".plist) that runs the daemon at login.\n" +
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
func (a *App) serviceSetup() (*workspace, []serviceFile, error) {
	ws, err := a.workspace()
	if err != nil {
		return nil, nil, err
	}
	spec, err := a.serviceSpecOf(ws)
	if err != nil {
		return nil, nil, exitf(exitUsage, "service: %v", err)
	}
	files, err := serviceFiles(runtime.GOOS, spec, a.Getenv)
	if err != nil {
		return nil, nil, exitf(exitUsage, "service: %v", err)
	}
	return ws, files, nil
}

// managerCommands are the commands that enable (or disable) the service.
func managerCommands(install bool, files []serviceFile) [][]string {
	if runtime.GOOS == "darwin" {
		domain := "gui/" + strconv.Itoa(os.Getuid())
		if install {
			return [][]string{{"launchctl", "bootstrap", domain, files[0].path}}
		}
		return [][]string{{"launchctl", "bootout", domain + "/" + launchdLabel}}
	}
	if install {
		return [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", socketUnit}}
	}
	return [][]string{{"systemctl", "--user", "disable", "--now", socketUnit, serviceUnit}, {"systemctl", "--user", "daemon-reload"}}
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
			fmt.Fprintf(a.Stdout, "# %s\n%s", f.path, f.content)
		}
		return nil
	}
	// Nothing changes unless the service manager can take over: a daemon
	// stopped for a manager that cannot start the service would leave
	// none running.
	if err := checkManager(ctx); err != nil {
		return exitf(exitUsage, "service install: %v; nothing was changed, and a daemon that runs goes on", err)
	}
	// The service makes its own socket where a daemon in the background
	// has one: stop that daemon first.
	if c, _ := a.dial(ctx, ws); c != nil {
		vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, _, err := query.Call(vctx, c, query.MethodVersion, query.VersionParams{})
		cancel()
		c.Close()
		if err == nil && info.Mode != query.ModeService {
			if _, err := a.stopDaemon(ctx, ws); err != nil {
				return exitf(exitUsage, "service install: stop the running daemon: %v", err)
			}
			fmt.Fprintf(a.Stderr, "amplidex: stopped the daemon (pid %d); the service takes over its socket\n", info.PID)
		}
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return exitf(exitUsage, "service install: %v", err)
		}
		if err := writeFileAtomic(f.path, []byte(f.content), 0o644); err != nil {
			return exitf(exitUsage, "service install: %v", err)
		}
		fmt.Fprintf(a.Stdout, "wrote %s\n", f.path)
	}
	return a.runManager(ctx, managerCommands(true, files), false)
}

// checkManager checks that the service manager answers, before anything
// is written or stopped: on Linux, that `systemctl --user show-environment`
// succeeds (it fails without a user bus, over ssh or in a container, say).
// A manager that is not on PATH is no error: the commands to run are
// printed instead.
func checkManager(ctx context.Context) error {
	if runtime.GOOS != "linux" {
		return nil
	}
	if _, err := exec.LookPath("systemctl"); err != nil {
		return nil
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "systemctl", "--user", "show-environment")
	cmd.Stdout, cmd.Stderr = io.Discard, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("systemctl --user does not work (%s): the user's service manager does not answer; "+
			"log in anew, or run `loginctl enable-linger $USER` as root, then try again", msg)
	}
	return nil
}

func (a *App) runServiceUninstall(ctx context.Context) error {
	_, files, err := a.serviceSetup()
	if err != nil {
		return err
	}
	var present []serviceFile
	for _, f := range files {
		if _, err := os.Lstat(f.path); err == nil {
			present = append(present, f)
		}
	}
	if len(present) == 0 {
		fmt.Fprintln(a.Stderr, "amplidex: the service is not installed")
		return nil
	}
	cmds := managerCommands(false, files)
	// Disable before the files go; reload the manager after.
	if err := a.runManager(ctx, cmds[:1], true); err != nil {
		return err
	}
	for _, f := range present {
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return exitf(exitUsage, "service uninstall: %v", err)
		}
		fmt.Fprintf(a.Stdout, "removed %s\n", f.path)
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
		if _, err := os.Lstat(f.path); err != nil {
			state, installed = "missing", false
		}
		rows = append(rows, [3]string{"file", f.path, state})
	}
	if runtime.GOOS == "linux" {
		if _, err := exec.LookPath("systemctl"); err == nil {
			for _, unit := range []string{socketUnit, serviceUnit} {
				active, _ := exec.CommandContext(ctx, "systemctl", "--user", "is-active", unit).Output()
				enabled, _ := exec.CommandContext(ctx, "systemctl", "--user", "is-enabled", unit).Output()
				rows = append(rows, [3]string{"unit", unit, orUnknown(active) + ", " + orUnknown(enabled)})
			}
		}
	}
	// A connection to a socket systemd holds would start the daemon: ask
	// only a daemon that runs.
	var c *query.Client
	if pid := readPid(ws.paths.PidFile); pid > 0 && processAlive(pid) {
		c, _ = a.dial(ctx, ws)
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
	if err := printServiceStatus(a.Stdout, rows, isTerminal(a.Stdout)); err != nil {
		return err
	}
	if !installed {
		return exitCode(exitFailed)
	}
	return nil
}

// printServiceStatus prints the rows of `service status` in columns, under
// a header on a terminal.
func printServiceStatus(w io.Writer, rows [][3]string, header bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if header {
		fmt.Fprintln(tw, "WHAT\tNAME\tSTATE")
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r[0], query.Clean(r[1]), query.Clean(r[2]))
	}
	return tw.Flush()
}

func orUnknown(b []byte) string {
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return "unknown"
}

// writeFileAtomic writes data to path through a temporary file and a
// rename.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
