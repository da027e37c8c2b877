package prepare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/prepare"
)

// proc is a process as /proc shows it.
type proc struct {
	pid, pgid int
	cmdline   string // arguments joined by spaces
}

// procs returns the live processes (not zombies) that /proc lists.
func procs(t *testing.T) []proc {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err1 := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		cmdline, err2 := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err1 != nil || err2 != nil {
			continue // ended meanwhile, or not ours to read
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ")".
		i := bytes.LastIndexByte(stat, ')')
		fields := strings.Fields(string(stat[i+1:]))
		if i < 0 || len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		pgid, _ := strconv.Atoi(fields[2])
		out = append(out, proc{pid: pid, pgid: pgid, cmdline: string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))})
	}
	return out
}

// procsWith returns the live processes whose command line holds s.
func procsWith(t *testing.T, s string) []proc {
	t.Helper()
	var out []proc
	for _, p := range procs(t) {
		if strings.Contains(p.cmdline, s) {
			out = append(out, p)
		}
	}
	return out
}

// TestKilledPrepareKillsGitHelpers kills a prepare (a child process running
// Ensure) with SIGKILL while git's HTTP helper waits on a remote that never
// answers: nothing git started may outlive it, neither git nor its remote
// helper, which git starts and the parent-death signal does not reach.
func TestKilledPrepareKillsGitHelpers(t *testing.T) {
	addr, accepted := stallServer(t)
	f := newFixture(t)
	url := stallURL(addr)
	f.replaceSource(t, "git+file://"+f.repos["a"], "git+"+url)
	// Whatever survives is killed, by pid, so that a failure leaves nothing.
	t.Cleanup(func() {
		for _, p := range procsWith(t, url) {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
	})

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	arg, _ := json.Marshal(childArgs{Home: f.home, Git: "git", Manifest: f.manifest})
	cmd := exec.Command(exe, "-test.run=^$")
	// The helper must not end by itself during the test: the low-speed
	// bound is left at the cache's own, far longer than childDeadline.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_HTTP_LOW_SPEED_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"="+string(arg), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	cmd.Stdin = strings.NewReader("go\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})

	select {
	case <-accepted:
	case err := <-exited:
		exited <- err
		t.Fatalf("the prepare ended before it reached the remote: %v\n%s", err, stderr.String())
	case <-time.After(childDeadline):
		t.Fatalf("git did not reach the remote within %s", childDeadline)
	}
	waitFor(t, "git's HTTP helper", func() bool {
		for _, p := range procsWith(t, url) {
			if strings.Contains(p.cmdline, "remote-http") {
				return true
			}
		}
		return false
	})
	before := procsWith(t, url)
	groups := make(map[int]bool)
	for _, p := range before {
		if p.pgid != syscall.Getpgrp() {
			groups[p.pgid] = true
		}
	}
	t.Logf("before the kill: %+v", before)

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
	case <-time.After(childDeadline):
		t.Fatal("the killed prepare did not exit")
	}
	deadline := time.Now().Add(childDeadline)
	for {
		var left []proc
		for _, p := range procs(t) {
			if strings.Contains(p.cmdline, url) || groups[p.pgid] {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after the prepare was killed, these still run: %+v", childDeadline, left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCancelKillsGitHelpers cancels a build while git's HTTP helper waits
// on a remote that never answers: the helper must end with git.
func TestCancelKillsGitHelpers(t *testing.T) {
	addr, accepted := stallServer(t)
	f := newFixture(t)
	url := stallURL(addr)
	f.replaceSource(t, "git+file://"+f.repos["a"], "git+"+url)
	t.Cleanup(func() {
		for _, p := range procsWith(t, url) {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
	})
	// The helper must not end by itself during the test: the low-speed
	// bound is left at the cache's own, far longer than childDeadline.
	for _, name := range []string{"GIT_HTTP_LOW_SPEED_LIMIT", "GIT_HTTP_LOW_SPEED_TIME"} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	c, _ := f.cache(t, func(o *prepare.Options) { o.Git = "git" })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Ensure(ctx, f.manifest)
		errc <- err
	}()
	select {
	case <-accepted:
	case err := <-errc:
		t.Fatalf("Ensure ended before it reached the remote: %v", err)
	case <-time.After(childDeadline):
		t.Fatalf("git did not reach the remote within %s", childDeadline)
	}
	waitFor(t, "git's HTTP helper", func() bool {
		for _, p := range procsWith(t, url) {
			if strings.Contains(p.cmdline, "remote-http") {
				return true
			}
		}
		return false
	})
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Ensure: %v, want context.Canceled", err)
		}
	case <-time.After(childDeadline):
		t.Fatalf("Ensure did not return within %s of the cancel", childDeadline)
	}
	waitFor(t, "end of git's helpers after the cancel", func() bool { return len(procsWith(t, url)) == 0 })
}
