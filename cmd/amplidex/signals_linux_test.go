package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
)

// TestEarlyHangup: a SIGHUP that comes as soon as the socket answers (a
// `systemctl --user reload`, or the bar's own reload, racing the start)
// reloads the daemon and never ends it: every signal handler is in place
// before the socket is bound. Each start is hung up on at the first
// connection the socket takes.
func TestEarlyHangup(t *testing.T) {
	e := newAgentEnv(t)
	e.env[service.NoSpawnEnv] = "1"
	paths, err := query.DefaultPaths(e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	const starts = 20
	for i := range starts {
		cmd := exec.Command("amplidex", "daemon")
		cmd.Dir, cmd.Env = e.dir, e.environ()
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		ended := func(err error) {
			t.Helper()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					t.Fatalf("start %d: the daemon was killed by %v\n%s", i+1, ws.Signal(), errOut.String())
				}
			}
			t.Fatalf("start %d: the daemon ended: %v\n%s", i+1, err, errOut.String())
		}
		// Hang up at the first connection the socket takes.
		deadline := time.Now().Add(20 * time.Second)
		for {
			c, err := net.Dial("unix", paths.Socket)
			if err == nil {
				c.Close()
				break
			}
			select {
			case err := <-exited:
				ended(err)
			default:
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("start %d: the socket never answered: %v\n%s", i+1, err, errOut.String())
			}
			time.Sleep(100 * time.Microsecond)
		}
		if err := hangUp(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		// It still answers, and stops cleanly when asked.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		answered := make(chan error, 1)
		go func() {
			for {
				c, err := query.Dial(ctx, paths.Socket)
				if err == nil {
					_, err = c.Call(ctx, "status", nil, nil)
					c.Close()
				}
				if err == nil || ctx.Err() != nil {
					answered <- err
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		select {
		case err := <-exited:
			cancel()
			ended(err)
		case err := <-answered:
			cancel()
			if err != nil {
				cmd.Process.Kill()
				t.Fatalf("start %d: no answer after the hang-up: %v\n%s", i+1, err, errOut.String())
			}
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := <-exited; err != nil {
			ended(err)
		}
	}
}

// TestWatchInterrupted: watch, stopped by Ctrl-C (SIGINT), exits 130 as
// every command stopped so does, in process and following a daemon.
func TestWatchInterrupted(t *testing.T) {
	e := newAgentEnv(t)
	e.env[service.NoSpawnEnv] = "1"
	coll := filepath.Join(e.dir, "project", ".amplifier", "collections", "team")
	writeFile(t, filepath.Join(coll, "pyproject.toml"), "[project]\nname = \"team\"\nversion = \"1.0.0\"\ndescription = \"Team\"\n")
	writeFile(t, filepath.Join(coll, "agents", "a.md"), "---\nname: a\ndescription: A\ncolour: red\n---\n")
	for _, withDaemon := range []bool{false, true} {
		if withDaemon {
			e.mustRun("daemon", "--detach")
			defer e.run("daemon", "stop")
		}
		cmd := exec.Command("amplidex", "watch")
		cmd.Dir, cmd.Env = filepath.Join(e.dir, "project"), e.environ()
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Once it follows the project: its first line, the error there.
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() || !strings.Contains(sc.Text(), "colour") {
			cmd.Process.Kill()
			t.Fatalf("watch (daemon %v) printed %q first", withDaemon, sc.Text())
		}
		go io.Copy(io.Discard, stdout)
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("watch (daemon %v) after SIGINT: %v, want exit code 130", withDaemon, err)
		}
	}
}
