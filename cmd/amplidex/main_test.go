package main

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(leakCheck{m}, map[string]func(){
		"amplidex":              main,
		"amplidex-signal-probe": signalProbe,
		"amplidex-flood":        floodProbe,
	})
}

// TestScripts runs the end-to-end scripts in testdata/script. Each runs in
// its own $WORK with HOME, AMPLIDEX_HOME and XDG_* inside it, and with
// $CORPUS set to $AMPLIDEX_CORPUS (scripts that need it skip without it).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			work := env.WorkDir
			env.Setenv("HOME", filepath.Join(work, "home"))
			env.Setenv("AMPLIDEX_HOME", filepath.Join(work, ".amplidex"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(work, ".config"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(work, ".state"))
			env.Setenv("XDG_RUNTIME_DIR", filepath.Join(work, ".run"))
			env.Setenv("AMPLIFIER_AGENT_HOME", filepath.Join(work, ".agent"))
			env.Setenv("NO_COLOR", "1")
			// Scripts that test auto-start clear it.
			env.Setenv("AMPLIDEX_NO_SPAWN", "1")
			env.Setenv(testRunEnv, testRun())
			env.Defer(func() { checkNoDaemonLeft(scriptErrorf(env.T()), env.Getenv) })
			env.Setenv("CORPUS", os.Getenv("AMPLIDEX_CORPUS"))
			return nil
		},
		Cmds: scriptCmds(),
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "corpus":
				return os.Getenv("AMPLIDEX_CORPUS") != "", nil
			case "root":
				return os.Geteuid() == 0, nil
			case "agent":
				return agentCmds() != nil, nil
			case "hangup":
				// A SIGHUP ignored here (nohup does this) is ignored by
				// every process a test starts, and no shell may undo it.
				return agentCmds() != nil && !signal.Ignored(syscall.SIGHUP), nil
			}
			return false, nil
		},
	})
}

// scriptCmds are the scripts' own commands.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"wait-daemon": waitDaemon,
		"wait-status": waitStatus,
		"hup-daemon":  hupDaemon,
		"chown":       chown,
		"filestat":    filestat,
		"wait-grep":   waitGrep,
		"exits":       exits,
		"run-hook":    runHook,
		"same-diags":  sameDiags,
		"grow":        grow,
	}
	maps.Copy(cmds, agentCmds())
	return cmds
}

// waitDaemon waits until the daemon of the script's AMPLIDEX_HOME answers
// on its socket (or, negated, until none does), for at most 20 seconds.
func waitDaemon(ts *testscript.TestScript, neg bool, args []string) {
	paths, err := query.DefaultPaths(ts.Getenv)
	ts.Check(err)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := query.Dial(ctx, paths.Socket)
		if err == nil {
			_, err = c.Call(ctx, "status", nil, nil)
			c.Close()
		}
		cancel()
		up := err == nil
		if up != neg {
			return
		}
		if time.Now().After(deadline) {
			if neg {
				ts.Fatalf("daemon still answers on %s", paths.Socket)
			}
			ts.Fatalf("no daemon answers on %s: %v", paths.Socket, err)
		}
		if err != nil && !errors.Is(err, query.ErrNoDaemon) && !neg {
			ts.Logf("waiting for the daemon: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitStatus waits (at most 20 seconds) until the text of the daemon's
// status matches REGEXP, without starting a process (which would be a
// client of its own). Usage: wait-status REGEXP.
func waitStatus(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: wait-status REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[0])
	ts.Check(err)
	paths, err := query.DefaultPaths(ts.Getenv)
	ts.Check(err)
	var text strings.Builder
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		text.Reset()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := query.Dial(ctx, paths.Socket)
		if err == nil {
			var st *query.Status
			if st, _, err = query.Call(ctx, c, query.MethodStatus, query.StatusParams{}); err == nil {
				err = query.MethodStatus.Print(&text, st, query.PrintOptions{})
			}
			c.Close()
		}
		cancel()
		if err == nil && re.MatchString(text.String()) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("status does not match %q after 20s (%v):\n%s", args[0], err, text.String())
		}
	}
}

// hupDaemon sends SIGHUP to the daemon named by the script's pid file.
func hupDaemon(ts *testscript.TestScript, neg bool, args []string) {
	paths, err := query.DefaultPaths(ts.Getenv)
	ts.Check(err)
	b, err := os.ReadFile(paths.PidFile)
	ts.Check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	ts.Check(err)
	ts.Check(hangUp(pid))
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

// diagLine is a diagnostic as check and query diagnostics print it.
var diagLine = regexp.MustCompile(`^\S+:\d+:\d+: (error|warning|info): .* \[[a-z]+/[a-z-]+\]$`)

// sameDiags fails unless two files, the text outputs of two surfaces,
// hold the same diagnostic lines (their summaries differ). Usage:
// same-diags FILE1 FILE2.
func sameDiags(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: same-diags FILE1 FILE2")
	}
	lines := func(name string) []string {
		var out []string
		for l := range strings.Lines(ts.ReadFile(name)) {
			if l = strings.TrimRight(l, "\n"); diagLine.MatchString(l) {
				out = append(out, l)
			}
		}
		return out
	}
	a, b := lines(args[0]), lines(args[1])
	if len(a) == 0 {
		ts.Fatalf("%s holds no diagnostic", args[0])
	}
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		ts.Fatalf("%s:\n%s\n%s:\n%s", args[0], strings.Join(a, "\n"), args[1], strings.Join(b, "\n"))
	}
}

// grow appends TOML comment lines to FILE until it holds at least BYTES
// bytes. Usage: grow FILE BYTES.
func grow(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: grow FILE BYTES")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	b := []byte(ts.ReadFile(args[0]))
	for len(b) < n {
		b = append(b, "# padding of a large pyproject.toml\n"...)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
}

// exits runs a command, keeping its stdout and stderr for the commands
// that follow, and fails unless it exits with CODE. Usage: exits CODE
// PROG [ARGS...].
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// chown gives a path to another user: chown UID PATH (needs root).
func chown(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: chown UID PATH")
	}
	uid, err := strconv.Atoi(args[0])
	ts.Check(err)
	ts.Check(os.Lchown(ts.MkAbs(args[1]), uid, uid))
}
