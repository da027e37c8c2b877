package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
	"github.com/rogpeppe/go-internal/testscript"
)

// testRunEnv marks every process the tests start, and the daemons those
// start in turn, with the pid of the test binary: the leak check finds
// them by it.
const testRunEnv = "AMPLIDEX_TEST_RUN"

func testRun() string { return strconv.Itoa(os.Getpid()) }

// leakCheck runs the tests, then fails the run when a daemon one of them
// started is still running (and kills it).
type leakCheck struct{ m *testing.M }

func (l leakCheck) Run() int {
	// No test starts a daemon in the background unless it asks for that.
	os.Setenv(service.NoSpawnEnv, "1")
	os.Setenv(testRunEnv, testRun())
	code := l.m.Run()
	if pids := leakedDaemons(); len(pids) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the tests left amplidex daemons running: pids %v (killed now)\n", pids)
		for _, pid := range pids {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}

// leakedDaemons returns the amplidex daemons that carry this test binary's
// mark and are not its own children (testscript ends the background
// commands it started itself). It reads /proc, so it finds none where
// there is no /proc.
func leakedDaemons() []int {
	entries, _ := os.ReadDir("/proc")
	mark := []byte(testRunEnv + "=" + testRun() + "\x00")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append(env, 0), mark) {
			continue
		}
		if service.DaemonProcess(pid) && parentPid(pid) != os.Getpid() {
			out = append(out, pid)
		}
	}
	return out
}

// parentPid returns the parent of pid, from /proc, or -1.
func parentPid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return ppid
}

// checkNoDaemonLeft fails t when the daemon of the environment's paths
// still runs and is not a background command of the script (those are
// ended by testscript): a test that starts a daemon stops it. The daemon
// is killed, so that it outlives no test.
func checkNoDaemonLeft(errorf func(string, ...any), getenv func(string) string) {
	paths, err := query.DefaultPaths(getenv)
	if err != nil {
		return
	}
	pid := service.ReadPid(paths.PidFile)
	if pid <= 0 || !service.DaemonProcess(pid) || parentPid(pid) == os.Getpid() {
		return
	}
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
	for i := 0; i < 200 && service.ProcessAlive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	errorf("the test left a daemon running (pid %d, pid file %s); killed it", pid, paths.PidFile)
}

// scriptErrorf returns the Errorf of a script's test.
func scriptErrorf(t testscript.T) func(string, ...any) {
	if e, ok := t.(interface{ Errorf(string, ...any) }); ok {
		return e.Errorf
	}
	return func(format string, args ...any) { t.Fatal(fmt.Sprintf(format, args...)) }
}

// noDaemonLeft registers a cleanup that fails t when a daemon of getenv's
// paths still runs at its end, and kills it.
func noDaemonLeft(t *testing.T, getenv func(string) string) {
	t.Cleanup(func() { checkNoDaemonLeft(t.Errorf, getenv) })
}
