package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

const (
	// NoSpawnEnv turns auto-start off when set to anything but "" or "0".
	NoSpawnEnv = "AMPLIDEX_NO_SPAWN"
	// LogName is the log of a daemon in the background, in the
	// state directory.
	LogName = "daemon.log"
	// spawnLockName is the lock a client holds while it starts or replaces
	// the daemon, in the state directory.
	spawnLockName = "daemon.start.lock"
	// startTimeout bounds the wait for a new daemon's first answer.
	startTimeout = 15 * time.Second
	// exitGrace is how long a client keeps looking for a daemon after the
	// one it started exited: the winner of a race may still be coming up.
	exitGrace = 2 * time.Second
	// stopTimeout bounds the wait for a daemon to go (its first scan ends
	// before it stops).
	stopTimeout = 60 * time.Second
)

// autostart reports whether query, watch and lsp may start the daemon:
// not with AMPLIDEX_NO_SPAWN set, nor with [daemon] autostart = false.
func (l *Launcher) autostart(ws *lint.Workspace) bool {
	if v := l.Getenv(NoSpawnEnv); v != "" && v != "0" {
		return false
	}
	return ws.Config.Daemon.Autostart == nil || *ws.Config.Daemon.Autostart
}

// Connect returns a client of the daemon, starting one in the background
// when none runs and auto-start is on. It returns nil when no daemon can
// be had: the caller answers in process. A daemon of another build is
// named on stderr, and replaced when a client started it. A command that
// asks one question uses ConnectToAsk and Ask instead, which spend no
// round trip on the build.
func (l *Launcher) Connect(ctx context.Context, ws *lint.Workspace) (*query.Client, error) {
	c, running, err := l.reach(ctx, ws)
	if c != nil && running {
		c, _ = l.checkBuild(ctx, ws, c)
	}
	return c, err
}

// ConnectToAsk is Connect for a command that asks the daemon one question
// (with ask): the client asks one question at a time on the calling
// goroutine, and the build is not asked for first: every request names
// this build instead, and a daemon of another build refuses it.
func (l *Launcher) ConnectToAsk(ctx context.Context, ws *lint.Workspace) (*query.SyncClient, error) {
	s, err := l.DialSync(ctx, ws)
	if s == nil && err == nil && l.autostart(ws) {
		var c *query.Client
		if c, _, err = l.reach(ctx, ws); c != nil {
			c.Close()
			s, err = l.DialSync(ctx, ws)
		}
	}
	if s != nil {
		s.RequireBuild(query.ReadBuild())
	}
	return s, err
}

// Ask runs call, a question to the daemon behind s, a client of
// ConnectToAsk. The daemon answers only when it is of this build. One of
// another build refuses the question (other-build, or invalid-request from
// a daemon older than that check): ask then does what connect does, naming
// it on stderr and replacing it when a client started it, and asks again,
// the daemon it kept or the one it started. It returns the client to
// close, s or another, and nil when no daemon is left: the caller then
// answers in process.
func (l *Launcher) Ask(ctx context.Context, ws *lint.Workspace, s *query.SyncClient, call func(*query.SyncClient) error) (*query.SyncClient, error) {
	err := call(s)
	var qe *query.Error
	if !errors.As(err, &qe) || (qe.Code != query.CodeOtherBuild && qe.Code != query.CodeInvalidRequest) {
		return s, err
	}
	c, derr := l.Dial(ctx, ws)
	if c == nil {
		s.Close()
		return nil, derr
	}
	c, same := l.checkBuild(ctx, ws, c)
	if c != nil {
		c.Close()
	}
	if same {
		return s, err // a request this build's daemon found invalid
	}
	// Ask again, without the build, on a connection of the daemon that
	// runs now.
	s.Close()
	if s, err = l.DialSync(ctx, ws); s == nil {
		return nil, err
	}
	return s, call(s)
}

// reach returns a client of the daemon, starting one in the background
// when none answers and auto-start is on; nil when no daemon can be had.
// running says that the daemon answered at once: a daemon this client
// did not start, whose build it does not know.
func (l *Launcher) reach(ctx context.Context, ws *lint.Workspace) (c *query.Client, running bool, err error) {
	c, err = l.Dial(ctx, ws)
	if err != nil || c != nil {
		return c, c != nil, err
	}
	if !l.autostart(ws) {
		return nil, false, nil
	}
	c, info, err := l.Ensure(ctx, ws, true)
	if err != nil {
		fmt.Fprintf(l.Stderr, "amplidex: the daemon did not start: %v\n", err)
		return nil, false, nil
	}
	if info != nil {
		fmt.Fprintf(l.Stderr, "amplidex: started the daemon in the background (pid %d; log %s)\n",
			info.PID, filepath.Join(ws.Paths.StateDir, LogName))
	}
	return c, false, nil
}

// Ensure returns a client of the daemon, starting one in the
// background when none answers: one that exits once idle when auto is
// set (a client needs one), one that stays when not (the user asked for
// one). info is set when this call started it. Clients that race here
// take turns: the first starts the daemon, the others find it.
func (l *Launcher) Ensure(ctx context.Context, ws *lint.Workspace, auto bool) (c *query.Client, info *query.DaemonInfo, err error) {
	unlock, err := lockSpawn(ctx, ws.Paths.StateDir)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	if c, err := l.Dial(ctx, ws); err != nil || c != nil {
		return c, nil, err
	}
	return l.spawn(ctx, ws, auto)
}

// lockSpawn takes the lock clients hold while they start the daemon,
// waiting for it at most startTimeout.
func lockSpawn(ctx context.Context, dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, spawnLockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(startTimeout + stopTimeout)
	for {
		locked, err := tryLockFile(f)
		if locked {
			return func() { f.Close() }, nil
		}
		if err != nil || time.Now().After(deadline) {
			if err == nil {
				err = errors.New("held by another process")
			}
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// spawn starts `amplidex daemon --detached` in a session of its own (so a
// terminal's hangup never reaches it), with stdin from /dev/null and its
// output in daemon.log, and waits until it answers. With auto set it is a
// daemon a client started (--autostarted), which exits once idle.
func (l *Launcher) spawn(ctx context.Context, ws *lint.Workspace, auto bool) (*query.Client, *query.DaemonInfo, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	// A Go test binary would run its tests, not the daemon.
	if strings.HasSuffix(filepath.Base(exe), ".test") {
		return nil, nil, fmt.Errorf("%s is a test binary; set %s=1 in tests", exe, NoSpawnEnv)
	}
	logPath := filepath.Join(ws.Paths.StateDir, LogName)
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	defer log.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, nil, err
	}
	defer null.Close()
	args := []string{"daemon", "--detached"}
	if auto {
		args = append(args, "--autostarted")
	} else if l.LogLevel != "" {
		// Started on purpose (daemon --detach, daemon restart): the
		// daemon logs at the level asked for. One a query, watch or lsp
		// starts keeps its own default.
		args = append(args, "--log-level", l.LogLevel)
	}
	if l.ConfigPath != "" {
		cfg, err := filepath.Abs(l.ConfigPath)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "--config", cfg)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = "/"
	cmd.Env = daemonEnv(os.Environ(), ws)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, log, log
	cmd.SysProcAttr = detachedProcess()
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	c, err := l.await(ctx, ws, exited, logPath)
	if err != nil {
		return nil, nil, err
	}
	return c, &query.DaemonInfo{PID: cmd.Process.Pid}, nil
}

// daemonEnv is the environment of a daemon a client starts: the client's,
// with AMPLIDEX_BUNDLED made absolute (the daemon runs in /) and without
// what belongs to the client alone.
func daemonEnv(environ []string, ws *lint.Workspace) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "NOTIFY_SOCKET", NoSpawnEnv:
			continue
		case "AMPLIDEX_BUNDLED":
			kv = k + "=" + strings.Join(ws.Bundled, string(filepath.ListSeparator))
		}
		out = append(out, kv)
	}
	return out
}

// await waits until a daemon answers, showing a progress line on a
// terminal. exited reports the exit of the process this client started;
// after it, another client's daemon has exitGrace to answer.
func (l *Launcher) await(ctx context.Context, ws *lint.Workspace, exited <-chan error, logPath string) (*query.Client, error) {
	deadline := time.Now().Add(startTimeout)
	var (
		exitErr  error
		exitedAt time.Time
		begin    = time.Now()
	)
	defer l.status().Clear()
	for {
		c, err := l.Dial(ctx, ws)
		if err != nil {
			return nil, err
		}
		if c != nil {
			return c, nil
		}
		if time.Since(begin) > 500*time.Millisecond {
			l.status().Set("amplidex: starting the daemon (%s)", time.Since(begin).Round(100*time.Millisecond))
		}
		select {
		case exitErr = <-exited:
			exited, exitedAt = nil, time.Now()
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		switch {
		case exited == nil && time.Since(exitedAt) > exitGrace:
			why := lastLogLine(logPath)
			if why == "" {
				why = "nothing in " + logPath
			}
			return nil, fmt.Errorf("it exited (%v): %s", exitErr, why)
		case time.Now().After(deadline):
			return nil, fmt.Errorf("no answer on %s within %s; see %s", ws.Paths.Socket, startTimeout, logPath)
		}
	}
}

// checkBuild asks the daemon who it is. When it runs another build, it
// says so in one line on stderr, and replaces a daemon a client started
// (when auto-start is on) that is older than this build (see
// query.Build.Newer); a service's or a foreground one is left alone with
// a hint. A daemon that is not older (a newer build, or one no rule
// orders) is never replaced: this client asks it, saying so once per run,
// so that two builds on one machine (an editor's and a shell's) do not
// replace each other's daemon in turn. It returns the client to use, and
// same when the daemon said it is of this build.
func (l *Launcher) checkBuild(ctx context.Context, ws *lint.Workspace, c *query.Client) (nc *query.Client, same bool) {
	vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	info, _, err := query.Call(vctx, c, query.MethodVersion, query.VersionParams{})
	cancel()
	var qe *query.Error
	switch {
	case errors.As(err, &qe) && qe.Code == query.CodeUnknownMethod:
		fmt.Fprintln(l.Stderr, "amplidex: the daemon is of an older build; `amplidex daemon restart` replaces it")
		return c, false
	case err != nil:
		return c, false
	}
	mine := query.ReadBuild()
	if info.Build.Same(mine) {
		return c, true
	}
	what := fmt.Sprintf("the daemon (pid %d) runs another build: %s; this is %s", info.PID, info.Build, mine)
	if !mine.Newer(info.Build) {
		why := "a newer one"
		if !info.Build.Newer(mine) {
			why = "one not older than this"
		}
		l.older.Do(func() {
			fmt.Fprintf(l.Stderr, "amplidex: %s; it is %s, so it stays and answers (only an older daemon is replaced)\n", what, why)
		})
		return c, false
	}
	switch {
	case info.Mode == query.ModeService:
		fmt.Fprintf(l.Stderr, "amplidex: %s; the service manager runs it: %s\n", what, restartHint())
		return c, false
	case info.Mode != query.ModeDetached && info.Mode != query.ModeAutostart:
		fmt.Fprintf(l.Stderr, "amplidex: %s; restart it to use this one\n", what)
		return c, false
	case !l.autostart(ws):
		fmt.Fprintf(l.Stderr, "amplidex: %s; auto-start is off, so it stays (`amplidex daemon restart` replaces it)\n", what)
		return c, false
	}
	fmt.Fprintf(l.Stderr, "amplidex: %s; replacing it\n", what)
	nc, err = l.replace(ctx, ws, c, info)
	if err != nil {
		fmt.Fprintf(l.Stderr, "amplidex: the daemon was not replaced: %v\n", err)
		if nc, _ = l.Dial(ctx, ws); nc == nil {
			return nil, false
		}
	}
	return nc, false
}

// replaceDaemon asks the daemon behind c to stop once it has answered what
// is in flight, waits until it has gone, and starts a new one, of the
// same mode. c is closed.
func (l *Launcher) replace(ctx context.Context, ws *lint.Workspace, c *query.Client, old *query.DaemonInfo) (*query.Client, error) {
	unlock, err := lockSpawn(ctx, ws.Paths.StateDir)
	if err != nil {
		c.Close()
		return nil, err
	}
	defer unlock()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, _, err = query.Call(sctx, c, query.MethodShutdown, query.ShutdownParams{})
	cancel()
	c.Close()
	if err != nil && !errors.Is(err, query.ErrNoDaemon) {
		return nil, fmt.Errorf("shutdown: %w", err)
	}
	if err := l.waitGone(ctx, ws, old.PID, false); err != nil {
		return nil, err
	}
	nc, _, err := l.spawn(ctx, ws, old.Mode == query.ModeAutostart)
	return nc, err
}

// stop stops the daemon and waits until it has gone: process, socket
// and pid file. It asks the daemon over the socket; when none answers
// there but the pid file names a live amplidex daemon of the user's, it
// sends that process SIGTERM. It returns what it stopped, nil when no
// daemon ran (then it removes a pid file and a socket left behind).
func (l *Launcher) stop(ctx context.Context, ws *lint.Workspace) (*query.DaemonInfo, error) {
	c, err := l.Dial(ctx, ws)
	if err != nil {
		return nil, err
	}
	if c != nil {
		vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, _, verr := query.Call(vctx, c, query.MethodVersion, query.VersionParams{})
		res, _, err := query.Call(vctx, c, query.MethodShutdown, query.ShutdownParams{})
		cancel()
		c.Close()
		if err == nil {
			if verr != nil {
				info = &query.DaemonInfo{PID: res.PID}
			}
			return info, l.waitGone(ctx, ws, res.PID, info.SocketActivated)
		}
		var qe *query.Error
		if !errors.As(err, &qe) || qe.Code != query.CodeUnknownMethod {
			return nil, fmt.Errorf("shutdown: %w", err)
		}
		// A daemon of an older build: stop it by its pid file.
	}
	pid := ReadPid(ws.Paths.PidFile)
	if pid <= 0 || !DaemonProcess(pid) {
		removeLeftovers(ws, c != nil)
		return nil, nil
	}
	if err := terminate(pid); err != nil {
		return nil, fmt.Errorf("stop pid %d: %w", pid, err)
	}
	return &query.DaemonInfo{PID: pid}, l.waitGone(ctx, ws, pid, c != nil)
}

// waitGone waits until process pid has exited, and removes its pid file
// and socket when it died without doing so. The socket of a
// socket-activated daemon (keepSocket) is the service manager's: it stays,
// and is not even probed, since a connection would start the daemon again.
func (l *Launcher) waitGone(ctx context.Context, ws *lint.Workspace, pid int, keepSocket bool) error {
	begin := time.Now()
	defer l.status().Clear()
	for ProcessAlive(pid) {
		if time.Since(begin) > stopTimeout {
			return fmt.Errorf("the daemon (pid %d) did not stop within %s", pid, stopTimeout)
		}
		if time.Since(begin) > 500*time.Millisecond {
			l.status().Set("amplidex: waiting for the daemon (pid %d) to stop (%s)", pid, time.Since(begin).Round(100*time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	removeLeftovers(ws, keepSocket)
	return nil
}

// removeLeftovers removes the pid file when it names no live process, and
// unless keepSocket is set, the socket when nothing listens on it (a
// daemon killed without its Close). A socket something answers on stays.
func removeLeftovers(ws *lint.Workspace, keepSocket bool) {
	if pid := ReadPid(ws.Paths.PidFile); pid > 0 && !ProcessAlive(pid) {
		os.Remove(ws.Paths.PidFile)
	}
	if keepSocket {
		return
	}
	if fi, err := os.Lstat(ws.Paths.Socket); err == nil && fi.Mode().Type() == fs.ModeSocket {
		nc, err := net.DialTimeout("unix", ws.Paths.Socket, time.Second)
		if err == nil {
			nc.Close()
		} else if errors.Is(err, syscall.ECONNREFUSED) {
			os.Remove(ws.Paths.Socket)
		}
	}
}

// ReadPid returns the pid in the pid file, or 0.
func ReadPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// Dial connects to the daemon, or returns a nil client when none runs.
func (l *Launcher) Dial(ctx context.Context, ws *lint.Workspace) (*query.Client, error) {
	return dialDaemon(ctx, ws, query.Dial)
}

// DialSync connects to the daemon for questions asked one at a time, or
// returns a nil client when none runs.
func (l *Launcher) DialSync(ctx context.Context, ws *lint.Workspace) (*query.SyncClient, error) {
	return dialDaemon(ctx, ws, query.DialSync)
}

// dialDaemon connects to the daemon's socket with dial, or returns nil
// when none runs; a socket this user may not use is an error.
func dialDaemon[C any](ctx context.Context, ws *lint.Workspace, dial func(context.Context, string) (*C, error)) (*C, error) {
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := dial(dctx, ws.Paths.Socket)
	if errors.Is(err, query.ErrNoDaemon) {
		return nil, nil
	}
	if err != nil {
		if strings.Contains(err.Error(), "permission") {
			return nil, &UnreachableError{Err: fmt.Errorf("daemon: %v", err)}
		}
		return nil, nil
	}
	return c, nil
}
