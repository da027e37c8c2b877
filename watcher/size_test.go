package watcher_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/watcher"
)

// dirs makes n directories below dir.
func dirs(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		mkdirAll(t, filepath.Join(dir, fmt.Sprintf("d%d", i)))
	}
}

// TestRootTooLarge: a root with more directories than MaxRootDirs is
// neither watched nor polled, AddRoot says so each time it is asked, and
// status tells it; one that grows past the bound is given up, the
// consumer asked to rescan it once.
func TestRootTooLarge(t *testing.T) {
	t.Run("when added", func(t *testing.T) {
		root := realTempDir(t)
		dirs(t, root, 10)
		w, _ := start(t, watcher.Options{MaxRootDirs: 5})
		for range 2 {
			err := w.AddRoot(root)
			if !errors.Is(err, watcher.ErrTooLarge) || !strings.Contains(err.Error(), root) {
				t.Fatalf("AddRoot = %v, want ErrTooLarge naming the root", err)
			}
		}
		s := statusOf(t, w, root)
		if s.State != watcher.StateTooLarge || s.Watches != 0 || !strings.Contains(strings.Join(s.Warnings, "\n"), "more than 5 directories") {
			t.Fatalf("status = %+v, want too large, no watch, a warning naming the bound", s)
		}
	})
	t.Run("as it grows", func(t *testing.T) {
		root := realTempDir(t)
		dirs(t, root, 3)
		w, rec := start(t, watcher.Options{MaxRootDirs: 5})
		addRoot(t, w, root)
		dirs(t, filepath.Join(root, "more"), 4)
		flush(t, w)
		wantRescan(t, rec.take(), root, watcher.ReasonTooLarge)
		if s := statusOf(t, w, root); s.State != watcher.StateTooLarge || s.Watches != 0 {
			t.Fatalf("status = %+v, want too large and no watch", s)
		}
		writeFile(t, filepath.Join(root, "d0", "x.md"), "x")
		flush(t, w)
		if bs := rec.take(); len(bs) != 0 {
			t.Fatalf("a root given up still reports: %s", summary(bs))
		}
	})
	t.Run("when polled", func(t *testing.T) {
		root := realTempDir(t)
		dirs(t, root, 2)
		// Out of watches at once: the root is polled.
		w, rec := start(t, watcher.Options{MaxRootDirs: 5, MaxWatches: 1, PollInterval: 5 * time.Millisecond})
		addRoot(t, w, root)
		if s := statusOf(t, w, root); s.State != watcher.StatePolling {
			t.Fatalf("status = %+v, want polling", s)
		}
		dirs(t, filepath.Join(root, "more"), 6)
		rec.waitFor(t, "the polled root given up", func(bs []watcher.Batch) bool {
			for _, b := range bs {
				if b.Root == root && b.Rescan && b.Reasons.Has(watcher.ReasonTooLarge) {
					return true
				}
			}
			return false
		})
		if s := statusOf(t, w, root); s.State != watcher.StateTooLarge {
			t.Fatalf("status = %+v, want too large", s)
		}
	})
}

// TestLinkedCollectionBounds: a collection linked into a root is not
// followed when it holds more directories than MaxLinkDirs, or when
// FollowLink refuses it; the root's own tree is watched all the same, the
// refusal is in its warnings, and a link changed to lead elsewhere is
// judged again.
func TestLinkedCollectionBounds(t *testing.T) {
	root := realTempDir(t)
	work := realTempDir(t)
	big, small, banned := filepath.Join(work, "big"), filepath.Join(work, "small"), filepath.Join(work, "banned")
	dirs(t, big, 10)
	dirs(t, small, 2)
	dirs(t, banned, 1)
	mkdirAll(t, filepath.Join(root, "own"))
	symlink(t, big, filepath.Join(root, "big"))
	symlink(t, banned, filepath.Join(root, "banned"))
	w, rec := start(t, watcher.Options{MaxLinkDirs: 5, FollowLink: func(link, real string) error {
		if real == banned {
			return errors.New("not this one")
		}
		return nil
	}})
	addRoot(t, w, root)
	s := statusOf(t, w, root)
	warnings := strings.Join(s.Warnings, "\n")
	if s.State != watcher.StateWatching || !strings.Contains(warnings, "link big") || !strings.Contains(warnings, "not this one") {
		t.Fatalf("status = %+v; want watching, with warnings about both links", s)
	}
	writeFile(t, filepath.Join(big, "d0", "x.md"), "x")
	writeFile(t, filepath.Join(banned, "d0", "x.md"), "x")
	own := filepath.Join(root, "own", "x.md")
	writeFile(t, own, "x")
	flush(t, w)
	bs := rec.take()
	wantPaths(t, bs, root, own)
	wantNoPaths(t, bs, root, filepath.Join(root, "big", "d0", "x.md"), filepath.Join(root, "banned", "d0", "x.md"))

	// The refused link made to lead to a small collection is followed.
	removeAll(t, filepath.Join(root, "big"))
	symlink(t, small, filepath.Join(root, "big"))
	flush(t, w)
	rec.take()
	p := filepath.Join(small, "d1", "y.md")
	writeFile(t, p, "y")
	flush(t, w)
	wantPaths(t, rec.take(), root, filepath.Join(root, "big", "d1", "y.md"))
}

// TestPollDelay: a polled root is walked again no sooner than its poll
// interval, nor than 20 times its last walk took, so that polling a large
// tree costs a small share of a core.
func TestPollDelay(t *testing.T) {
	for _, tc := range []struct{ interval, took, want time.Duration }{
		{time.Second, time.Millisecond, time.Second},
		{time.Second, 200 * time.Millisecond, 4 * time.Second},
		{20 * time.Millisecond, 5 * time.Second, 100 * time.Second},
	} {
		if got := watcher.PollDelay(tc.interval, tc.took); got != tc.want {
			t.Errorf("PollDelay(%v, %v) = %v, want %v", tc.interval, tc.took, got, tc.want)
		}
	}
}
