package daemon_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// TestOutOfFilesShowsInStatus plays macOS's kqueue running out of file
// descriptors (EMFILE) under the user root: the daemon polls that root,
// still sees what changes in it, and `status` says why and names the
// limit to raise, in JSON and in text.
func TestOutOfFilesShowsInStatus(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	e.collection(filepath.Join(e.projectRoot(), "p"), "p", "1.0.0")
	user := e.userRoot()
	d, err := daemon.Start(context.Background(), daemon.Options{Paths: e.paths, Home: e.home, NoSync: true,
		Watch: watcher.Options{Debounce: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond,
			BeforeWatch: func(dir string) error {
				if dir == filepath.Join(user, "a", "agents") {
					return fmt.Errorf("watch %s: %w", dir, syscall.EMFILE)
				}
				return nil
			}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	c := e.client()
	if r := e.resolve(c, "a"); r == nil || !r.Found {
		t.Fatalf("a does not resolve: %+v", r)
	}

	status := func() query.Status {
		t.Helper()
		var st query.Status
		if err := e.call(c, "status", nil, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	deadline := time.Now().Add(30 * time.Second)
	var st query.Status
	var root query.RootStatus
	for {
		st = status()
		for _, r := range st.Roots {
			if r.Path == user {
				root = r
			}
		}
		if root.State == string(watcher.StatePolling) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if root.State != string(watcher.StatePolling) {
		t.Fatalf("the user root is %q, want polling: %+v", root.State, st.Roots)
	}
	if w := strings.Join(root.Warnings, "\n"); !strings.Contains(w, "too many open files") || !strings.Contains(w, "ulimit -n") {
		t.Errorf("the user root's warnings do not name the limit: %q", root.Warnings)
	}
	for _, r := range st.Roots {
		if r.Path != user && r.State == string(watcher.StatePolling) {
			t.Errorf("root %s polls too: %+v", r.Path, r)
		}
	}
	var b strings.Builder
	if err := query.MethodStatus.Print(&b, &st, query.PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "polling") || !strings.Contains(out, "warning: too many open files: raise ulimit -n") {
		t.Errorf("status as text does not warn about the limit:\n%s", out)
	}

	// Polled, the root still sees new collections.
	e.collection(filepath.Join(user, "b"), "b", "1.0.0")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for r := e.resolve(c, "b"); r == nil || !r.Found; r = e.resolve(c, "b") {
		if ctx.Err() != nil {
			t.Fatal("a collection made in the polled root was never seen")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
