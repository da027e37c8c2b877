package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// agentCmds are the testscript commands of the background agent's
// scripts.
func agentCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"daemon-procs":  daemonProcs,
		"gen-tree":      genTree,
		"copy-amplidex": copyAmplidex,
		"hangup":        hangup,
		"wait-grep":     waitGrep,
	}
}

// waitGrep waits (at most 10 seconds) until FILE matches REGEXP. Usage:
// wait-grep REGEXP FILE.
func waitGrep(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: wait-grep REGEXP FILE")
	}
	re, err := regexp.Compile("(?m)" + args[0])
	ts.Check(err)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(ts.MkAbs(args[1]))
		if re.Match(b) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s does not match %q after 10s:\n%s", args[1], args[0], b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// daemonProcs waits (at most 10 seconds) until exactly N amplidex daemons
// of the script run: live processes marked by this test binary whose
// AMPLIDEX_HOME is the script's. Usage: daemon-procs N.
func daemonProcs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: daemon-procs N")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	home := []byte("AMPLIDEX_HOME=" + ts.Getenv("AMPLIDEX_HOME") + "\x00")
	mark := []byte(testRunEnv + "=" + testRun() + "\x00")
	deadline := time.Now().Add(10 * time.Second)
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
			if err == nil && bytes.Contains(env, home) && bytes.Contains(env, mark) && daemonProcess(pid) {
				pids = append(pids, pid)
			}
		}
		if len(pids) == want {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%d daemons run (pids %v), want %d", len(pids), pids, want)
		}
		time.Sleep(20 * time.Millisecond)
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
