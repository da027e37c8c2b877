package daemon_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/index"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// earlyNames are the names TestEarlyResolve asks about: one collection
// alone, one the project's shadows, one skipped as invalid, one the
// bundled root holds, and one nobody has.
var earlyNames = []string{"alone", "dup", "broken", "foundation", "nope"}

// earlyEnv writes the tree of the early-answer tests.
func earlyEnv(t *testing.T) *env {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "alone"), "alone", "1.0.0")
	e.collection(filepath.Join(e.userRoot(), "dup"), "dup", "1.0.0")
	e.collection(filepath.Join(e.projectRoot(), "dup"), "dup", "2.0.0")
	e.write(filepath.Join(e.userRoot(), "broken", "pyproject.toml"), "[project]\nversion = \"1.0.0\"\n") // names no collection
	e.collection(filepath.Join(e.bundled, "foundation"), "foundation", "1.0.0")
	return e
}

// startHeld starts a daemon whose first scan blocks on reading held until
// release is closed; it returns once the socket answers, and the daemon
// through done once Start returns.
func (e *env) startHeld(held string, release <-chan struct{}) <-chan *daemon.Daemon {
	e.t.Helper()
	done := make(chan *daemon.Daemon, 1)
	go func() {
		d, err := daemon.Start(context.Background(), daemon.Options{
			Paths: e.paths, Home: e.home, Bundled: []string{e.bundled}, NoSync: true,
			Watch: watcher.Options{Debounce: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond},
			ReadFile: func(p string) ([]byte, error) {
				if p == held {
					<-release
				}
				return os.ReadFile(p)
			},
		})
		if err != nil {
			e.t.Error(err)
		}
		done <- d
	}()
	// The socket's file appears as it is bound, a moment before it
	// listens: wait until a connection is taken.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := query.Dial(ctx, e.paths.Socket)
		cancel()
		if err == nil {
			c.Close()
			return done
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the socket did not open: %v", err)
		}
	}
}

// resolveNoSync asks for name without waiting for changes.
func (e *env) resolveNoSync(c *query.Client, wait time.Duration, name string) (*query.ResolveResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	r, _, err := query.Call(ctx, c, query.MethodResolve,
		query.NameParams{Common: query.Common{Project: e.project, NoSync: true}, Name: name})
	return r, err
}

// TestEarlyResolve: after a clean stop, the next run answers a no_sync
// resolve while its first scan is still running (held here on a file
// changed while the daemon was down), with what the finished scan would
// say, marked unverified; a resolve that waits for its writes waits for
// the scan, and once it ends answers are verified again.
func TestEarlyResolve(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := earlyEnv(t)
	d := e.start()
	c := e.client()
	want := map[string]*query.ResolveResult{}
	for _, n := range earlyNames {
		r, err := e.resolveNoSync(c, time.Minute, n)
		if err != nil {
			t.Fatal(err)
		}
		r.Unverified = true
		want[n] = r
	}
	if !want["dup"].Found || want["dup"].Winner.Version != "2.0.0" || len(want["dup"].Shadowed) != 1 ||
		len(want["broken"].Skipped) != 1 || want["nope"].Found {
		t.Fatalf("the fixture does not shadow and skip as meant: %+v %+v", want["dup"], want["broken"])
	}
	c.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	changed := filepath.Join(e.userRoot(), "alone", "agents", "helper.md")
	e.write(changed, agent("helper")+"changed\n")
	release := make(chan struct{})
	done := e.startHeld(changed, release)
	c = e.client()
	for _, n := range earlyNames {
		got, err := e.resolveNoSync(c, 10*time.Second, n)
		if err != nil {
			t.Fatalf("no_sync resolve %s during the first scan: %v", n, err)
		}
		if !reflect.DeepEqual(got, want[n]) {
			t.Errorf("early resolve %s =\n%+v\nwant\n%+v", n, got, want[n])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, _, err := query.Call(ctx, c, query.MethodResolve, query.NameParams{Common: query.Common{Project: e.project}, Name: "dup"})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a resolve that waits for its writes was answered during the first scan: %v", err)
	}
	close(release)
	d = <-done
	if d == nil {
		t.FailNow()
	}
	defer d.Close()
	got, err := e.resolveNoSync(c, 10*time.Second, "dup")
	if err != nil || got.Unverified || !got.Found {
		t.Errorf("after the first scan: %+v, %v", got, err)
	}
}

// TestEarlyResolveDistrustsAChangedIndex: a summary older than the index
// (the last run wrote after it and did not stop cleanly) is not used, and
// nor is one that does not hold the roots of the project asked about: the
// no_sync resolve waits for the scan.
func TestEarlyResolveDistrustsAChangedIndex(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := earlyEnv(t)
	d := e.start()
	c := e.client()
	if _, err := e.resolveNoSync(c, time.Minute, "dup"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(e.userRoot(), "alone", "agents", "helper.md")
	e.write(changed, agent("helper")+"changed\n")

	waits := func(project string) {
		t.Helper()
		release := make(chan struct{})
		done := e.startHeld(changed, release)
		c := e.client()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, _, err := query.Call(ctx, c, query.MethodResolve,
			query.NameParams{Common: query.Common{Project: project, NoSync: true}, Name: "dup"})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("no_sync resolve for project %q answered during the first scan: %v", project, err)
		}
		c.Close()
		close(release)
		if d := <-done; d != nil {
			d.Close()
		}
	}

	// A project the last run never saw.
	other := e.otherProject("other")
	waits(other)

	// An index written after its summary.
	s, err := index.Open(e.paths.Index, index.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	stray := index.File{Path: filepath.Join(e.userRoot(), "stray.md"), Root: e.userRoot(), Mode: 0o644}
	if _, err := s.Apply(index.Batch{Put: []index.File{stray}, Tick: s.Tick() + 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	e.write(changed, agent("helper")+"changed again\n")
	waits(e.project)
}
