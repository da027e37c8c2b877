package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
)

// TestEarlyHangup: a SIGHUP that comes as soon as the socket answers (a
// `systemctl --user reload`, or the bar's own reload, racing the start)
// reloads the daemon and never ends it: every signal handler is in place
// before the socket is bound. Each start is hung up on at the first
// connection the socket takes.
func TestEarlyHangup(t *testing.T) {
	e := newAgentEnv(t)
	e.env[noSpawnEnv] = "1"
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
