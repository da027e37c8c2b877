package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// agentCmds are the testscript commands of the background agent's
// scripts.
func agentCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"daemon-procs":  daemonProcs,
		"daemon-stays":  daemonStays,
		"gen-tree":      genTree,
		"copy-amplidex": copyAmplidex,
		"hangup":        hangup,
	}
}

// daemonProcs waits (at most 10 seconds, or TIMEOUT) until exactly N
// amplidex daemons of the script run: live processes marked by this test
// binary whose AMPLIDEX_HOME is the script's. Usage: daemon-procs N
// [TIMEOUT].
func daemonProcs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 || neg {
		ts.Fatalf("usage: daemon-procs N [TIMEOUT]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	timeout := 10 * time.Second
	if len(args) == 2 {
		timeout, err = time.ParseDuration(args[1])
		ts.Check(err)
	}
	home := []byte("AMPLIDEX_HOME=" + ts.Getenv("AMPLIDEX_HOME") + "\x00")
	mark := []byte(testRunEnv + "=" + testRun() + "\x00")
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		var pids []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			env = append(env, 0)
			if err == nil && bytes.Contains(env, home) && bytes.Contains(env, mark) && service.DaemonProcess(pid) {
				pids = append(pids, pid)
			}
		}
		if len(pids) == want {
			ts.Logf("%d daemons run after %s", want, time.Since(start).Round(10*time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%d daemons run (pids %v) after %s, want %d", len(pids), pids, timeout, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// daemonStays checks, for DURATION, that the daemon of the pid file keeps
// running: that something does not happen can only be seen over time.
// Usage: daemon-stays DURATION.
func daemonStays(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: daemon-stays DURATION")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	paths, err := query.DefaultPaths(ts.Getenv)
	ts.Check(err)
	pid := service.ReadPid(paths.PidFile)
	if pid <= 0 || !service.DaemonProcess(pid) {
		ts.Fatalf("no daemon runs (pid file %s)", paths.PidFile)
	}
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if !service.DaemonProcess(pid) {
			ts.Fatalf("the daemon (pid %d) went", pid)
		}
	}
}

// genTree writes N collections into DIR, each a pyproject.toml, two
// profiles, two agents and a context file. Usage: gen-tree DIR N.
func genTree(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: gen-tree DIR N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	ts.Check(writeTree(ts.MkAbs(args[0]), 0, n))
}

// writeTree writes collections from..to-1 into root, each a
// pyproject.toml, two profiles, two agents and a context file.
func writeTree(root string, from, to int) error {
	for i := from; i < to; i++ {
		name := fmt.Sprintf("c%04d", i)
		dir := filepath.Join(root, name)
		files := map[string]string{
			"pyproject.toml":   fmt.Sprintf("[project]\nname = %q\nversion = \"1.0.%d\"\ndescription = \"Collection %d\"\n", name, i, i),
			"context/guide.md": "# Guide\n\nSee @" + name + ":context/guide.md.\n",
		}
		for j := range 2 {
			files[fmt.Sprintf("profiles/p%d.md", j)] = fmt.Sprintf("---\nprofile:\n  name: p%d\n  version: 1.0.0\n  description: Profile %d\nsession:\n  orchestrator:\n    module: loop-basic\n  context:\n    module: context-simple\n---\nBody.\n", j, j)
			files[fmt.Sprintf("agents/a%d.md", j)] = fmt.Sprintf("---\nmeta:\n  name: a%d\n  description: Agent %d\n---\nYou help.\n", j, j)
		}
		for rel, content := range files {
			p := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyAmplidex copies the amplidex program on PATH to DST, dated an hour
// later: another build, as far as a daemon can tell. Usage: copy-amplidex
// DST.
func copyAmplidex(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: copy-amplidex DST")
	}
	src := lookPath(ts, "amplidex")
	dst := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(dst), 0o755))
	in, err := os.Open(src)
	ts.Check(err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	ts.Check(err)
	_, err = io.Copy(out, in)
	ts.Check(err)
	ts.Check(out.Close())
	later := time.Now().Add(time.Hour)
	ts.Check(os.Chtimes(dst, later, later))
	// A process this test forked while the copy was open for writing holds
	// it so until that process execs: until then, running the copy fails
	// with "text file busy". Wait for that to pass.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := exec.Command(dst, "--help").Run()
		if !errors.Is(err, syscall.ETXTBSY) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lookPath finds name on the script's PATH.
func lookPath(ts *testscript.TestScript, name string) string {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	ts.Fatalf("%s is not on PATH", name)
	return ""
}

// hangup runs a shell command line in a session of its own whose
// controlling terminal is a new pseudo-terminal, as a login shell runs in
// a terminal window. Once the command line has run, the shell stays (as a
// user's would), and the terminal is closed: the kernel hangs up the
// session. hangup waits until the shell is gone. The command line's
// output must go to files. Usage: hangup 'CMDLINE'.
func hangup(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: hangup 'CMDLINE'")
	}
	master, slave, err := openPTY()
	ts.Check(err)
	defer slave.Close()
	done := filepath.Join(ts.Getenv("WORK"), ".hangup-done")
	os.Remove(done)
	cmd := exec.Command("/bin/sh", "-c", args[0]+"; touch "+done+"; exec sleep 600")
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	ts.Check(cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Nobody reads the terminal: a read in flight would keep the master
	// open past its Close, and the command line writes nothing to it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(done); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			ts.Fatalf("the command line did not finish within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	slave.Close()
	master.Close() // the hangup
	select {
	case err := <-exited:
		ts.Logf("the shell ended on the hangup: %v", err)
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		ts.Fatalf("the shell survived the hangup")
	}
}

// scriptEnv is the script's environment, for commands the test starts
// itself.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"WORK", "PATH", "HOME", "AMPLIDEX_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
		"AMPLIFIER_AGENT_HOME", "AMPLIDEX_BUNDLED", "AMPLIDEX_NO_SPAWN", "NO_COLOR", testRunEnv, "TMPDIR"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// openPTY opens a new pseudo-terminal pair.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("pty number: %w", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

// agentEnv runs the amplidex program (the copy testscript put on PATH)
// in a home of its own, auto-start on, marked for the leak check.
type agentEnv struct {
	t   *testing.T
	dir string
	env map[string]string
}

func newAgentEnv(t *testing.T) *agentEnv {
	if _, err := exec.LookPath("amplidex"); err != nil {
		t.Skipf("no amplidex on PATH: %v", err)
	}
	dir := t.TempDir()
	e := &agentEnv{t: t, dir: dir, env: map[string]string{
		"PATH":                 os.Getenv("PATH"),
		"HOME":                 filepath.Join(dir, "home"),
		"AMPLIDEX_HOME":        filepath.Join(dir, ".amplidex"),
		"XDG_CONFIG_HOME":      filepath.Join(dir, ".config"),
		"XDG_STATE_HOME":       filepath.Join(dir, ".state"),
		"XDG_RUNTIME_DIR":      filepath.Join(dir, ".run"),
		"AMPLIFIER_AGENT_HOME": filepath.Join(dir, ".agent"),
		"NO_COLOR":             "1",
		testRunEnv:             testRun(),
	}}
	// What makes a test binary's children behave as under go test, as
	// testscript passes them on: without GOCOVERDIR, a binary built with
	// -cover warns on stderr as it exits.
	for _, k := range []string{"GOCOVERDIR", "GORACE"} {
		if v := os.Getenv(k); v != "" {
			e.env[k] = v
		}
	}
	noDaemonLeft(t, e.getenv)
	return e
}

func (e *agentEnv) getenv(k string) string { return e.env[k] }

func (e *agentEnv) environ() []string {
	var out []string
	for k, v := range e.env {
		out = append(out, k+"="+v)
	}
	return out
}

// run runs amplidex with args and returns its output and exit code.
func (e *agentEnv) run(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command("amplidex", args...)
	cmd.Dir, cmd.Env = e.dir, e.environ()
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		e.t.Fatalf("amplidex %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// mustRun runs amplidex with args and fails the test unless it exits 0.
func (e *agentEnv) mustRun(args ...string) (stdout, stderr string) {
	e.t.Helper()
	out, errOut, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("amplidex %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out, errOut
}

// TestStatusDuringFirstScan: while a daemon reads a tree of 2,000
// collections for the first time, status exits 0 and shows how far it
// got, in text and JSON, and a query waits for the scan and answers.
// Should a fast machine end the scan before status asks, the tree doubles
// and the daemon starts again without its index.
func TestStatusDuringFirstScan(t *testing.T) {
	e := newAgentEnv(t)
	tree := filepath.Join(e.dir, "tree")
	e.env["AMPLIDEX_BUNDLED"] = tree
	n := 2000
	if err := writeTree(tree, 0, n); err != nil {
		t.Fatal(err)
	}
	scanLine := regexp.MustCompile(`(?m)^scanning\s+[a-z, ]+: \d+ files, \d+ collections, [0-9.]+m?s$`)
	for attempt := 1; ; attempt++ {
		_, errOut := e.mustRun("daemon", "--detach")
		if !strings.Contains(errOut, "runs in the background") {
			t.Fatalf("daemon --detach: %s", errOut)
		}
		text, _ := e.mustRun("status")
		js, _ := e.mustRun("status", "--json")
		answer, qerr := e.mustRun("query", "resolve", "c0007")
		e.mustRun("daemon", "stop")
		if !regexp.MustCompile(`(?m)^c0007\s+1\.0\.7\s+bundled`).MatchString(answer) || strings.Contains(qerr, "in-process") {
			t.Fatalf("query during the scan:\n%s%s", answer, qerr)
		}
		var st query.Status
		if err := json.Unmarshal([]byte(js), &st); err != nil {
			t.Fatal(err)
		}
		if scanLine.MatchString(text) && st.Scanning {
			if st.Progress == nil || st.Progress.Phase == "" || st.Progress.Elapsed == "" || st.Mode != query.ModeDetached {
				t.Fatalf("status --json during the scan: %s", js)
			}
			t.Logf("during the scan of %d collections:\n%s", n, text)
			return
		}
		if attempt == 3 {
			t.Fatalf("status never saw the first scan; the last said:\n%s\n%s", text, js)
		}
		t.Logf("the scan of %d collections ended before status asked; again with %d", n, 2*n)
		if err := os.Remove(filepath.Join(e.env["AMPLIDEX_HOME"], "index.db")); err != nil {
			t.Fatal(err)
		}
		if err := writeTree(tree, n, 2*n); err != nil {
			t.Fatal(err)
		}
		n *= 2
	}
}

// TestSocketActivation hands the daemon a listening socket as systemd
// does (fd 3, LISTEN_FDS=1, LISTEN_PID its own pid): a query is answered
// through it, status says so, and `daemon stop` leaves the socket to its
// owner.
func TestSocketActivation(t *testing.T) {
	e := newAgentEnv(t)
	e.env[service.NoSpawnEnv] = "1" // nothing may start a daemon of its own
	e.env["AMPLIDEX_BUNDLED"] = filepath.Join(e.dir, "bundled")
	if err := writeTree(e.env["AMPLIDEX_BUNDLED"], 0, 3); err != nil {
		t.Fatal(err)
	}
	paths, err := query.DefaultPaths(e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(paths.Socket), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: paths.Socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	logPath := filepath.Join(e.dir, "daemon.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	// The shell sets LISTEN_PID to its pid, which exec hands to amplidex.
	cmd := exec.Command("/bin/sh", "-c", `LISTEN_PID=$$ exec amplidex daemon`)
	cmd.Env = append(e.environ(), "LISTEN_FDS=1")
	cmd.ExtraFiles = []*os.File{f}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	defer func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
		if b, _ := os.ReadFile(logPath); t.Failed() {
			t.Logf("daemon log:\n%s", b)
		}
	}()

	out, errOut := e.mustRun("query", "resolve", "c0001")
	if !strings.HasPrefix(out, "c0001 ") || errOut != "" {
		t.Fatalf("query through the handed socket:\n%s%s", out, errOut)
	}
	status, _ := e.mustRun("status")
	if !regexp.MustCompile(`(?m)^mode\s+service \(socket-activated\)$`).MatchString(status) {
		t.Errorf("status of a socket-activated daemon:\n%s", status)
	}
	_, errOut = e.mustRun("daemon", "stop")
	if !strings.Contains(errOut, "systemd still holds the socket") {
		t.Errorf("daemon stop: %s", errOut)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("the daemon exited with %v", waitErr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not stop")
	}
	if fi, err := os.Lstat(paths.Socket); err != nil || fi.Mode().Type() != fs.ModeSocket {
		t.Errorf("the handed socket is gone: %v", err)
	}
	if _, err := os.Stat(paths.PidFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pid file left behind: %v", err)
	}
}
