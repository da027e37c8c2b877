package daemon

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
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
	deadline(t, time.Minute)
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

// TestListingsRealPath: during the first scan a collection's real path is
// its parent's, resolved once, and its name when the parent's listing
// shows a directory; a link, or a directory no listing shows, is resolved
// whole. (A directory made a link after its parent was listed keeps the
// listing's answer until the change is applied: that shows the listing is
// what answers.)
func TestListingsRealPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("on Windows every path is resolved whole")
	}
	base := t.TempDir()
	real := filepath.Join(base, "real")
	for _, d := range []string{"real/a", "real/b", "elsewhere/c"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	via := filepath.Join(base, "via") // the root, reached through a link
	if err := os.Symlink(real, via); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "elsewhere", "c"), filepath.Join(real, "c")); err != nil {
		t.Fatal(err)
	}
	l := newListings()
	l.record(via, via, listDir(t, via))
	resolved, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"a": filepath.Join(resolved, "a"),
		"c": filepath.Join(filepath.Dir(resolved), "elsewhere", "c"),
	} {
		if got, err := l.realPath(filepath.Join(via, name)); err != nil || got != want {
			t.Errorf("realPath(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	// b becomes a link after the listing was made.
	if err := os.Rename(filepath.Join(real, "b"), filepath.Join(base, "elsewhere", "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "elsewhere", "b"), filepath.Join(real, "b")); err != nil {
		t.Fatal(err)
	}
	if got, err := l.realPath(filepath.Join(via, "b")); err != nil || got != filepath.Join(resolved, "b") {
		t.Errorf("realPath(b) = %q, %v; want the listing's %q", got, err, filepath.Join(resolved, "b"))
	}
	if _, err := l.realPath(filepath.Join(via, "missing")); err == nil {
		t.Error("a directory no listing shows and that does not exist resolved")
	}
}
