package index_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/index"
)

// crashEnv names the database a re-executed test binary writes to until it
// is killed.
const crashEnv = "AMPLIDEX_INDEX_CRASH_CHILD"

// TestCrashConsistency kills a process with SIGKILL while it applies
// batches, three times over, and checks that the database reopens as it
// was after the last acknowledged batch or a later one, with every record
// readable.
func TestCrashConsistency(t *testing.T) {
	if path := os.Getenv(crashEnv); path != "" {
		crashChild(path)
		return
	}
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	path := filepath.Join(t.TempDir(), "index.db")
	for round := range 3 {
		acked := killWhileApplying(t, path)
		s, err := index.Open(path, index.Options{})
		if err != nil {
			t.Fatalf("round %d: Open after SIGKILL: %v", round, err)
		}
		t.Logf("round %d: killed after acknowledging tick %d; reopened at tick %d", round, acked, s.Tick())
		if w := s.Warnings(); len(w) != 0 {
			t.Errorf("round %d: Warnings() = %q, want none", round, w)
		}
		if s.Tick() < acked {
			t.Errorf("round %d: Tick() = %d, but tick %d was acknowledged", round, s.Tick(), acked)
		}
		n := 0
		err = s.Walk("", func(f index.File) error {
			n++
			if !strings.HasPrefix(string(f.Data), "tick ") {
				return fmt.Errorf("%s: payload %q", f.Path, f.Data)
			}
			return nil
		})
		if err != nil {
			t.Errorf("round %d: Walk: %v", round, err)
		}
		if l, err := s.Len(); err != nil || l != n {
			t.Errorf("round %d: Len() = %d, %v; Walk saw %d", round, l, err, n)
		}
		if _, _, err := s.Changes(0); err != nil {
			t.Errorf("round %d: Changes: %v", round, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// killWhileApplying runs crashChild on path, kills it with SIGKILL once it
// has acknowledged twenty batches, and returns the last acknowledged tick.
func killWhileApplying(t *testing.T, path string) uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashConsistency$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ticks := make(chan uint64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "applied "); ok {
				tick, _ := strconv.ParseUint(v, 10, 64)
				ticks <- tick
			}
		}
		close(ticks)
	}()

	var acked uint64
	deadline := time.After(time.Minute)
	for seen := 0; seen < 20; seen++ {
		select {
		case tick, ok := <-ticks:
			if !ok {
				t.Fatal("child exited before it was killed")
			}
			acked = tick
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatal("child acknowledged no batch within a minute")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Acknowledgements still in the pipe count too.
	for tick := range ticks {
		acked = tick
	}
	<-done
	_ = cmd.Wait()
	return acked
}

// crashChild applies batches to the store at path until it is killed,
// printing each tick once Apply has returned.
func crashChild(path string) {
	s, err := index.Open(path, index.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	start := s.Tick()
	for i := start + 1; i < start+100_000; i++ {
		var b index.Batch
		for j := range 300 {
			b.Put = append(b.Put, file(fmt.Sprintf("/r/c%03d/agents/%d.md", j, (i+uint64(j))%7), fmt.Sprint("tick ", i)))
		}
		b.DeletePrefix = []string{fmt.Sprintf("/r/c%03d", i%300)}
		tick, err := s.Apply(b)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("applied %d\n", tick)
	}
	os.Exit(0)
}
