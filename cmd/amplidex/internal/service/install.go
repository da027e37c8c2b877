package service

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
	"strings"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

// Install installs files, the service of ws's daemon: once the service
// manager answers, it stops a daemon that runs in the background (the
// service takes over its socket), writes the files, saying each on
// stdout, and enables the
func (l *Launcher) Install(ctx context.Context, ws *lint.Workspace, files []File, stdout io.Writer) error {
	// Nothing changes unless the service manager can take over: a daemon
	// stopped for a manager that cannot start the service would leave
	// none running.
	if err := checkManager(ctx); err != nil {
		return usageErrorf("service install: %v; nothing was changed, and a daemon that runs goes on", err)
	}
	// The service makes its own socket where a daemon in the background
	// has one: stop that daemon first.
	if c, _ := l.Dial(ctx, ws); c != nil {
		vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, _, err := query.Call(vctx, c, query.MethodVersion, query.VersionParams{})
		cancel()
		c.Close()
		if err == nil && info.Mode != query.ModeService {
			if _, err := l.stop(ctx, ws); err != nil {
				return usageErrorf("service install: stop the running daemon: %v", err)
			}
			fmt.Fprintf(l.Stderr, "amplidex: stopped the daemon (pid %d); the service takes over its socket\n", info.PID)
		}
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			return usageErrorf("service install: %v", err)
		}
		if err := writeFileAtomic(f.Path, []byte(f.Content), 0o644); err != nil {
			return usageErrorf("service install: %v", err)
		}
		fmt.Fprintf(stdout, "wrote %s\n", f.Path)
	}
	return l.runManager(ctx, managerCommands(true, files), false)
}

// Uninstall disables the service and removes its files, saying each on
// stdout; it says so when the service is not installed.
func (l *Launcher) Uninstall(ctx context.Context, files []File, stdout io.Writer) error {
	var present []File
	for _, f := range files {
		if _, err := os.Lstat(f.Path); err == nil {
			present = append(present, f)
		}
	}
	if len(present) == 0 {
		fmt.Fprintln(l.Stderr, "amplidex: the service is not installed")
		return nil
	}
	cmds := managerCommands(false, files)
	// Disable before the files go; reload the manager after.
	if err := l.runManager(ctx, cmds[:1], true); err != nil {
		return err
	}
	for _, f := range present {
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return usageErrorf("service uninstall: %v", err)
		}
		fmt.Fprintf(stdout, "removed %s\n", f.Path)
	}
	return l.runManager(ctx, cmds[1:], true)
}

// runManager runs the service manager's commands when its program is on
// PATH, else prints them for the user to run. A failing command stops the
// rest; with lenient set it is only reported.
func (l *Launcher) runManager(ctx context.Context, cmds [][]string, lenient bool) error {
	if len(cmds) == 0 {
		return nil
	}
	if _, err := exec.LookPath(cmds[0][0]); err != nil {
		fmt.Fprintf(l.Stderr, "amplidex: %s is not on PATH; run:\n", cmds[0][0])
		for _, c := range cmds {
			fmt.Fprintf(l.Stderr, "  %s\n", strings.Join(c, " "))
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
			fmt.Fprintf(l.Stderr, "amplidex: %s: %v %s\n", strings.Join(c, " "), err, msg)
			continue
		}
		fmt.Fprintf(l.Stderr, "amplidex: %s failed: %v\n", strings.Join(c, " "), err)
		if msg != "" {
			fmt.Fprintf(l.Stderr, "%s\n", msg)
		}
		fmt.Fprintln(l.Stderr, "amplidex: the files are written; once the service manager answers, run:")
		for _, rest := range cmds[i:] {
			fmt.Fprintf(l.Stderr, "  %s\n", strings.Join(rest, " "))
		}
		return &UsageError{}
	}
	return nil
}

// ServiceStatus lists the rows of `service status`: each file, installed or
// missing, each systemd unit's state, and the daemon; installed says
// whether every file is there.
func (l *Launcher) ServiceStatus(ctx context.Context, ws *lint.Workspace, files []File) (rows [][3]string, installed bool) {
	installed = true
	for _, f := range files {
		state := "installed"
		if _, err := os.Lstat(f.Path); err != nil {
			state, installed = "missing", false
		}
		rows = append(rows, [3]string{"file", f.Path, state})
	}
	if runtime.GOOS == "linux" {
		if _, err := exec.LookPath("systemctl"); err == nil {
			for _, unit := range []string{SocketUnit, ServiceUnit} {
				active, _ := exec.CommandContext(ctx, "systemctl", "--user", "is-active", unit).Output()
				enabled, _ := exec.CommandContext(ctx, "systemctl", "--user", "is-enabled", unit).Output()
				rows = append(rows, [3]string{"unit", unit, orUnknown(active) + ", " + orUnknown(enabled)})
			}
		}
	}
	// A connection to a socket systemd holds would start the daemon: ask
	// only a daemon that runs.
	var c *query.Client
	if pid := ReadPid(ws.Paths.PidFile); pid > 0 && ProcessAlive(pid) {
		c, _ = l.Dial(ctx, ws)
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
	return rows, installed
}
