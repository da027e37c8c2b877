package prepare_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/amplidex/amplidex/prepare"
)

// childEnv switches the test binary into one process of
// TestProcessesBuildOnce; its value is a JSON childArgs.
const childEnv = "AMPLIDEX_PREPARE_TEST_CHILD"

type childArgs struct {
	Home, Git, Manifest string
}

// childResult is what a child prints.
type childResult struct {
	State    prepare.State
	Dir      string
	Artifact string // SHA-256 of prepared.json as read after Ensure
}

func TestMain(m *testing.M) {
	if args := os.Getenv(childEnv); args != "" {
		os.Exit(runChild(args))
	}
	os.Exit(m.Run())
}

// runChild waits for a line on standard input, so that every child starts
// together, then prepares and prints a childResult.
func runChild(arg string) int {
	var args childArgs
	if err := json.Unmarshal([]byte(arg), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Fprintln(os.Stderr, "waiting for the start line:", err)
		return 2
	}
	c, err := prepare.New(prepare.Options{Home: args.Home, Version: testVersion, Git: args.Git})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	e, err := c.Ensure(context.Background(), args.Manifest)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	data, err := os.ReadFile(e.Artifact)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sum := sha256.Sum256(data)
	if err := json.NewEncoder(os.Stdout).Encode(childResult{State: e.State, Dir: e.Dir, Artifact: hex.EncodeToString(sum[:])}); err != nil {
		return 1
	}
	return 0
}

func TestProcessesBuildOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 8 processes")
	}
	f := newFixture(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	arg, _ := json.Marshal(childArgs{Home: f.home, Git: f.git, Manifest: f.manifest})
	raw, _ := os.ReadFile(f.manifest)
	key, _ := prepare.NewKey(testVersion, raw)
	dir := filepath.Join(f.home, "cache", "prepared", key.Version, key.Hash)

	const n = 8
	type child struct {
		cmd            *exec.Cmd
		stdin          io.WriteCloser
		stdout, stderr bytes.Buffer
	}
	children := make([]*child, n)
	for i := range children {
		ch := &child{cmd: exec.Command(exe, "-test.run=^$")}
		ch.cmd.Env = append(os.Environ(), childEnv+"="+string(arg))
		ch.cmd.Stdout, ch.cmd.Stderr = &ch.stdout, &ch.stderr
		if ch.stdin, err = ch.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := ch.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children[i] = ch
	}

	// A reader polls the entry for the whole build: whenever the marker is
	// there, the artifact must be there and whole.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var torn []string
	reads := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := os.Stat(filepath.Join(dir, prepare.MarkerFile)); err != nil {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, prepare.ArtifactFile))
			reads++
			if err != nil || !json.Valid(data) {
				torn = append(torn, fmt.Sprintf("read %d bytes, %v", len(data), err))
			}
		}
	}()

	for _, ch := range children {
		if _, err := io.WriteString(ch.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
		ch.stdin.Close()
	}
	results := make([]childResult, n)
	for i, ch := range children {
		if err := ch.cmd.Wait(); err != nil {
			t.Errorf("child %d: %v\n%s", i, err, ch.stderr.String())
			continue
		}
		if err := json.Unmarshal(ch.stdout.Bytes(), &results[i]); err != nil {
			t.Errorf("child %d printed %q: %v", i, ch.stdout.String(), err)
		}
	}
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}

	cold := 0
	for i, r := range results {
		if r.State == prepare.StateCold {
			cold++
		}
		if r.Dir != dir || r.Artifact != results[0].Artifact {
			t.Errorf("child %d: %+v, want the entry %s with artifact %s", i, r, dir, results[0].Artifact)
		}
	}
	if cold != 1 {
		t.Errorf("%d cold builds, want exactly 1: %+v", cold, results)
	}
	if got := len(f.gitCalls(t, "clone")); got != 3 {
		t.Errorf("%d clones, want 3 (one per repository)", got)
	}
	if len(torn) > 0 {
		t.Errorf("a reader saw torn files: %q", torn)
	}
	t.Logf("the reader read the artifact %d times during the build", reads)
	c, _ := f.cache(t)
	if e, err := c.Lookup(f.manifest); err != nil || e.Dir != dir {
		t.Errorf("Lookup after the build: %v", err)
	}
}
