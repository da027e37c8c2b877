//go:build unix

package prepare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/prepare"
)

// childDeadline bounds how long a test waits for a process to start or
// end.
const childDeadline = 10 * time.Second

// waitFor polls cond until it holds, and fails the test after
// childDeadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(childDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, childDeadline)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// slowGit writes a git that, asked to clone or fetch, records its pid in
// the returned file and sleeps in its place; it runs every other command
// with the real git. On cleanup every recorded process is killed.
func (f *fixture) slowGit(t *testing.T) (git, pids string) {
	t.Helper()
	dir := t.TempDir()
	git, pids = filepath.Join(dir, "slow-git"), filepath.Join(dir, "pids")
	script := "#!/bin/sh\nfor a in \"$@\"; do\n\tcase \"$a\" in\n\tclone|fetch) echo $$ >> '" + pids +
		"'; exec sleep 120 ;;\n\tesac\ndone\nexec git \"$@\"\n"
	if err := os.WriteFile(git, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range readPids(t, pids) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return git, pids
}

// readPids returns the pids recorded in path, one a line.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasSuffix(l, "\n") {
			break // still being written
		}
		pid, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// gone reports whether process pid has ended. A zombie has ended: its
// parent is gone and nothing may reap it here.
func gone(pid int) bool {
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		_, after, ok := bytes.Cut(stat, []byte(") "))
		return ok && len(after) > 0 && (after[0] == 'Z' || after[0] == 'X')
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// clonesIn returns the clones in progress under the module cache.
func clonesIn(t *testing.T, c *prepare.Cache) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(c.ModulesDir(), "git", "*", ".clone-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCancelKillsGit(t *testing.T) {
	f := newFixture(t)
	git, pids := f.slowGit(t)
	c, _ := f.cache(t, func(o *prepare.Options) { o.Git = git })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Ensure(ctx, f.manifest)
		errc <- err
	}()
	waitFor(t, "three clones", func() bool { return len(readPids(t, pids)) == 3 })
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Ensure: %v, want context.Canceled", err)
		}
	case <-time.After(childDeadline):
		t.Fatalf("Ensure did not return within %s of the cancel", childDeadline)
	}
	for _, pid := range readPids(t, pids) {
		if !gone(pid) {
			t.Errorf("git %d still runs after the cancel", pid)
		}
	}
	if left := clonesIn(t, c); len(left) > 0 {
		t.Errorf("a cancelled build left clones: %q", left)
	}
	if _, err := c.Lookup(f.manifest); !errors.Is(err, prepare.ErrMiss) {
		t.Errorf("Lookup after a cancelled build: %v, want ErrMiss", err)
	}
}

// TestKilledPrepareKillsGit kills a prepare (a child process running
// Ensure) with SIGKILL while it clones: its git processes must die with it,
// and the next build must remove the clone directories it left.
func TestKilledPrepareKillsGit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux has a parent-death signal")
	}
	f := newFixture(t)
	git, pids := f.slowGit(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	arg, _ := json.Marshal(childArgs{Home: f.home, Git: git, Manifest: f.manifest})
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(arg))
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

	waitFor(t, "three clones", func() bool { return len(readPids(t, pids)) == 3 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		exited <- nil // for the cleanup
	case <-time.After(childDeadline):
		t.Fatal("the killed prepare did not exit")
	}
	waitFor(t, "end of git after its prepare was killed", func() bool {
		for _, pid := range readPids(t, pids) {
			if !gone(pid) {
				return false
			}
		}
		return true
	})

	c, _ := f.cache(t)
	stale := clonesIn(t, c)
	if len(stale) != 3 {
		t.Fatalf("the killed prepare left %q, want three clones in progress", stale)
	}
	for _, s := range stale {
		if !strings.HasPrefix(filepath.Base(s), ".clone-"+strconv.Itoa(cmd.Process.Pid)+"-") {
			t.Errorf("clone %s does not name its process %d", s, cmd.Process.Pid)
		}
	}
	if e := ensure(t, c, f.manifest); e.State != prepare.StateCold {
		t.Errorf("state %s, want cold", e.State)
	}
	if left := clonesIn(t, c); len(left) > 0 {
		t.Errorf("the next build left the stale clones: %q", left)
	}
}
