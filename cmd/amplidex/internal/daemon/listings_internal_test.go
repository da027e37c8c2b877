package daemon

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// listDir lists dir, as the watcher hands a listing over.
func listDir(t *testing.T, dir string) []fs.DirEntry {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// takeLater takes dir on another goroutine once it waits for it, and
// returns what the take returns when it ends.
func takeLater(t *testing.T, l *listings, dir string) <-chan bool {
	t.Helper()
	got := make(chan bool, 1)
	go func() {
		_, ok := l.take(dir)
		got <- ok
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		_, waits := l.waiting[dir]
		l.mu.Unlock()
		if waits {
			return got
		}
		select {
		case ok := <-got:
			t.Fatalf("take(%s) returned %v at once, want it to wait for the walk", dir, ok)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("take(%s) does not wait", dir)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestListingsFollowTheWalk: a reader of the first scan waits for a
// listing that the walk has not made yet but will, takes each listing
// once, does not wait for a directory that a listing above it rules out,
// and stops waiting when the walks end.
func TestListingsFollowTheWalk(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/agents", "b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	l := newListings()

	waited := takeLater(t, l, root)
	l.record(root, root, listDir(t, root))
	if !<-waited {
		t.Fatal("the root's listing, recorded while it was waited for, was not handed over")
	}
	if _, ok := l.take(root); ok {
		t.Fatal("a listing was handed over twice")
	}

	// Not in the root's listing: the walk will never list it.
	if _, ok := l.take(filepath.Join(root, "missing", "agents")); ok {
		t.Fatal("a directory the root's listing rules out was handed over")
	}

	waited = takeLater(t, l, filepath.Join(a, "agents"))
	l.record(root, a, listDir(t, a))
	l.record(root, filepath.Join(a, "agents"), listDir(t, filepath.Join(a, "agents")))
	if !<-waited {
		t.Fatal("a listing made after its reader began to wait was not handed over")
	}

	waited = takeLater(t, l, b)
	l.stopRecording()
	if <-waited {
		t.Fatal("a listing never made was handed over")
	}
	if _, ok := l.take(a); !ok {
		t.Fatal("a listing made before the walks ended is lost once they end")
	}
}
