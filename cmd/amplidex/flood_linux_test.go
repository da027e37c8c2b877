//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/server"
)

// answerDeadline is how long the other client's question may take at
// most: a generous bound on "answered at all", never what is measured.
const answerDeadline = 60 * time.Second

// TestHangUpFlood: another process floods the daemon from 16 threads
// with requests it hangs up on at once, each naming a new set of a
// client's roots (or none), for 6 seconds (2 in -short). Meanwhile
// another client's every question is answered, the daemon's descriptors
// stay within its bound of connections, the sets of a client's roots
// within theirs, its memory under 1 GB, and the first SIGTERM, sent while
// the flood goes on, ends it cleanly. The figures (the other client's
// answer times, memory, descriptors) are logged.
func TestHangUpFlood(t *testing.T) {
	for _, mode := range []string{"roots", "plain"} {
		t.Run(mode, func(t *testing.T) { hangUpFlood(t, mode) })
	}
}

func hangUpFlood(t *testing.T, mode string) {
	floodFor := 6 * time.Second
	if testing.Short() {
		floodFor = 2 * time.Second
	}
	work := t.TempDir()
	home := filepath.Join(work, "home")
	col := filepath.Join(home, ".amplifier", "collections", "x")
	if err := os.MkdirAll(col, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(col, "pyproject.toml"), []byte("[project]\nname = \"x\"\nversion = \"1.0.0\"\ndescription = \"X\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"HOME": home, "AMPLIDEX_HOME": filepath.Join(work, "amplidex"), "XDG_RUNTIME_DIR": filepath.Join(work, "run"),
		"XDG_STATE_HOME": filepath.Join(work, "state"), "XDG_CONFIG_HOME": filepath.Join(work, "config"),
		"AMPLIDEX_NO_SPAWN": "1", "NO_COLOR": "1", testRunEnv: testRun(), "PATH": os.Getenv("PATH"),
	}
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	paths, err := query.DefaultPaths(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}

	log, err := os.Create(filepath.Join(work, "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	d := exec.Command("amplidex", "daemon")
	d.Env, d.Stdout, d.Stderr = env, log, log
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- d.Wait() }()
	defer func() {
		d.Process.Kill()
		select {
		case <-exited:
		case <-time.After(answerDeadline):
		}
	}()
	ask := func() (time.Duration, error) {
		began := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), answerDeadline)
		defer cancel()
		c, err := query.Dial(ctx, paths.Socket)
		if err != nil {
			return time.Since(began), err
		}
		defer c.Close()
		r, _, err := query.Call(ctx, c, query.MethodResolve, query.NameParams{Name: "x"})
		if err == nil && !r.Found {
			err = errors.New("x does not resolve")
		}
		return time.Since(began), err
	}
	deadline := time.Now().Add(answerDeadline)
	for _, err := ask(); err != nil; _, err = ask() {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never answered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	baseFDs := fdCount(d.Process.Pid)

	flood := exec.Command("amplidex-flood", paths.Socket, filepath.Join(work, "flood"), mode, "16")
	flood.Env = env
	stop, err := flood.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := flood.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	flood.Stderr = os.Stderr
	if err := flood.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	floodDone := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // only the latest matters
				select {
				case <-lines:
				default:
				}
				lines <- sc.Text()
			}
		}
		floodDone <- flood.Wait()
	}()
	defer func() {
		stop.Close()
		flood.Process.Kill()
		<-floodDone
	}()
	select {
	case <-lines:
	case <-time.After(answerDeadline):
		t.Fatal("the flood never started")
	}

	var worst, total time.Duration
	var asked, peakFDs, peakRSS, peakSets int
	sample := func() {
		peakFDs = max(peakFDs, fdCount(d.Process.Pid))
		peakRSS = max(peakRSS, rssMiB(d.Process.Pid))
	}
	end := time.Now().Add(floodFor)
	for time.Now().Before(end) {
		sample()
		took, err := ask()
		if err != nil {
			t.Fatalf("another client's question during the flood: %v (after %v)", err, took)
		}
		asked++
		worst, total = max(worst, took), total+took
		var st query.Status
		if _, err := askStatus(paths.Socket, &st); err != nil {
			t.Fatalf("status during the flood: %v", err)
		}
		sets := 0
		for _, p := range st.Projects {
			if p.Roots != nil {
				sets++
			}
		}
		peakSets = max(peakSets, sets)
		sample()
	}

	// The first SIGTERM, the flood still going, ends the daemon cleanly.
	began := time.Now()
	if err := d.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the daemon ended with %v after the first SIGTERM; want a clean exit", err)
		}
		exited <- nil // for the deferred wait
	case <-time.After(answerDeadline):
		t.Fatalf("the daemon still runs %v after the first SIGTERM", answerDeadline)
	}
	stopped := time.Since(began)
	sent := ""
	select {
	case sent = <-lines:
	default:
	}
	t.Logf("%s flood, %s: another client asked %d times, answered in %v at worst (%v on average); daemon peak RSS %d MiB, descriptors %d (%d before), sets of a client's roots %d; stopped %v after SIGTERM",
		mode, sent, asked, worst.Round(time.Millisecond), (total / time.Duration(max(asked, 1))).Round(time.Millisecond),
		peakRSS, peakFDs, baseFDs, peakSets, stopped.Round(time.Millisecond))
	if limit := baseFDs + server.DefaultMaxConns + 32; peakFDs > limit {
		t.Errorf("the daemon held %d descriptors; want at most %d (its own, and its bound of connections)", peakFDs, limit)
	}
	if peakSets > daemon.DefaultMaxRootSets {
		t.Errorf("%d sets of a client's roots registered at once; want at most %d", peakSets, daemon.DefaultMaxRootSets)
	}
	if peakRSS >= 1024 {
		t.Errorf("the daemon's RSS reached %d MiB; want under 1 GB", peakRSS)
	}
}

// askStatus asks the daemon on socket for its status.
func askStatus(socket string, st *query.Status) (time.Duration, error) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), answerDeadline)
	defer cancel()
	c, err := query.Dial(ctx, socket)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_, err = c.Call(ctx, "status", nil, st)
	return time.Since(began), err
}

// fdCount counts the open descriptors of process pid.
func fdCount(pid int) int {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0
	}
	return len(entries)
}

// rssMiB is the resident memory of process pid, in MiB.
func rssMiB(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return kb / 1024
		}
	}
	return 0
}
