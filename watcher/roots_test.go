package watcher_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/watcher"
	"github.com/fsnotify/fsnotify"
)

func TestSymlinkedCollections(t *testing.T) {
	root := tempRoot(t)
	work := realTempDir(t) // an author's working copies, outside the root
	unpack(t, "collections.txtar", work)
	w, rec := start(t, watcher.Options{})

	link := filepath.Join(root, "linked")
	symlink(t, filepath.Join(work, "alpha"), link)
	addRoot(t, w, root)

	t.Run("changes in the real path are reported under the link", func(t *testing.T) {
		writeFile(t, filepath.Join(work, "alpha", "profiles", "base.md"), "edited")
		mkdirAll(t, filepath.Join(work, "alpha", "agents", "team"))
		writeFile(t, filepath.Join(work, "alpha", "agents", "team", "lead.md"), "x")
		flush(t, w)
		bs := rec.take()
		wantPaths(t, bs, root,
			filepath.Join(link, "profiles", "base.md"),
			filepath.Join(link, "agents", "team"),
			filepath.Join(link, "agents", "team", "lead.md"))
		for p := range changedPaths(bs, root) {
			if strings.HasPrefix(p, work) {
				t.Errorf("real path %s leaked into a batch", p)
			}
		}
	})

	t.Run("deeper directory symlinks are not followed", func(t *testing.T) {
		elsewhere := filepath.Join(work, "beta")
		deep := filepath.Join(work, "alpha", "context", "beta-link")
		symlink(t, elsewhere, deep)
		flush(t, w)
		wantPaths(t, rec.take(), root, filepath.Join(link, "context", "beta-link"))

		writeFile(t, filepath.Join(elsewhere, "profiles", "dev.md"), "not seen")
		flush(t, w)
		wantNoPaths(t, rec.take(), root, filepath.Join(link, "context", "beta-link", "profiles", "dev.md"))
	})

	t.Run("a link made later is walked", func(t *testing.T) {
		late := filepath.Join(root, "late")
		symlink(t, filepath.Join(work, "beta"), late)
		flush(t, w)
		wantPaths(t, rec.take(), root, late, filepath.Join(late, "profiles", "dev.md"))

		writeFile(t, filepath.Join(work, "beta", "profiles", "dev.md"), "seen")
		flush(t, w)
		wantPaths(t, rec.take(), root, filepath.Join(late, "profiles", "dev.md"))
	})

	t.Run("a removed link is no longer followed", func(t *testing.T) {
		before := statusOf(t, w, root).Watches
		late := filepath.Join(root, "late")
		remove(t, late)
		flush(t, w)
		wantPaths(t, rec.take(), root, late)
		if after := statusOf(t, w, root).Watches; after >= before {
			t.Errorf("watches = %d after removing the link, want fewer than %d", after, before)
		}
		writeFile(t, filepath.Join(work, "beta", "profiles", "dev.md"), "no longer seen")
		flush(t, w)
		if bs := rec.take(); len(changedPaths(bs, root)) != 0 {
			t.Errorf("batches after the link went: %v", bs)
		}
	})

	t.Run("a retargeted link follows its new target", func(t *testing.T) {
		tmp := filepath.Join(root, ".linked.tmp")
		symlink(t, filepath.Join(work, "beta"), tmp)
		rename(t, tmp, link) // ln -sfn
		flush(t, w)
		wantPaths(t, rec.take(), root, link, filepath.Join(link, "profiles", "dev.md"))

		writeFile(t, filepath.Join(work, "alpha", "profiles", "base.md"), "old target")
		writeFile(t, filepath.Join(work, "beta", "pyproject.toml"), "new target")
		flush(t, w)
		bs := rec.take()
		wantPaths(t, bs, root, filepath.Join(link, "pyproject.toml"))
		wantNoPaths(t, bs, root, filepath.Join(link, "profiles", "base.md"))
	})

	t.Run("a link whose target is removed and made again", func(t *testing.T) {
		target := filepath.Join(work, "beta")
		removeAll(t, target)
		flush(t, w)
		wantPaths(t, rec.take(), root, link)

		unpack(t, "collections.txtar", filepath.Join(work, "staging"))
		rename(t, filepath.Join(work, "staging", "beta"), target)
		flush(t, w)
		wantPaths(t, rec.take(), root, link, filepath.Join(link, "profiles", "dev.md"))

		writeFile(t, filepath.Join(target, "profiles", "dev.md"), "again")
		flush(t, w)
		wantPaths(t, rec.take(), root, filepath.Join(link, "profiles", "dev.md"))
	})

	t.Run("model stays exact", func(t *testing.T) {
		m := newModel(t, root)
		removeAll(t, filepath.Join(work, "alpha", "agents"))
		mkdirAll(t, filepath.Join(work, "beta", "agents", "new"))
		writeFile(t, filepath.Join(work, "beta", "agents", "new", "a.md"), "a")
		rename(t, filepath.Join(root, "beta"), filepath.Join(root, "gamma"))
		flush(t, w)
		for _, b := range rec.take() {
			m.apply(b)
		}
		m.check()
	})
}

func TestSymlinkLoops(t *testing.T) {
	root := tempRoot(t)
	symlink(t, root, filepath.Join(root, "self"))            // the root itself
	symlink(t, "loop-b", filepath.Join(root, "loop-a"))      // a → b → a
	symlink(t, "loop-a", filepath.Join(root, "loop-b"))      //
	symlink(t, "..", filepath.Join(root, "alpha", "parent")) // deeper: not followed
	symlink(t, "missing", filepath.Join(root, "dangling"))   // nothing yet
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)

	p := filepath.Join(root, "alpha", "profiles", "base.md")
	writeFile(t, p, "loops")
	flush(t, w)
	bs := rec.take()
	wantPaths(t, bs, root, p, filepath.Join(root, "self", "alpha", "profiles", "base.md"))
	wantNoPaths(t, bs, root, filepath.Join(root, "self", "self", "alpha", "profiles", "base.md"))

	// The dangling link's target appears.
	mkdirAll(t, filepath.Join(root, "missing", "profiles"))
	writeFile(t, filepath.Join(root, "missing", "profiles", "x.md"), "x")
	flush(t, w)
	wantPaths(t, rec.take(), root,
		filepath.Join(root, "missing", "profiles", "x.md"),
		filepath.Join(root, "dangling", "profiles", "x.md"))

	if s := statusOf(t, w, root); s.State != watcher.StateWatching {
		t.Errorf("state = %s, want watching", s.State)
	}
}

func TestMissingRoot(t *testing.T) {
	base := realTempDir(t)
	root := filepath.Join(base, "project", ".amplifier", "collections")
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)
	if s := statusOf(t, w, root); s.State != watcher.StateMissing || s.Watches != 1 {
		t.Fatalf("status = %+v, want missing with one (ancestor) watch", s)
	}

	// Unrelated changes next to the root's ancestors are not reported.
	writeFile(t, filepath.Join(base, "unrelated"), "x")
	flush(t, w)
	if bs := rec.take(); len(bs) > 0 {
		t.Errorf("batches for a missing root: %v", bs)
	}

	steps := []struct {
		name   string
		do     func(t *testing.T)
		reason watcher.Reason
		state  watcher.State
	}{
		{"appears with mkdir -p", func(t *testing.T) { mkdirAll(t, root) }, watcher.ReasonRootAppeared, watcher.StateWatching},
		{"removed with rm -rf", func(t *testing.T) {
			unpack(t, "collections.txtar", root)
			removeAll(t, filepath.Join(base, "project"))
		}, watcher.ReasonRootVanished, watcher.StateMissing},
		{"made again, level by level", func(t *testing.T) {
			mkdirAll(t, filepath.Join(base, "project"))
			mkdirAll(t, filepath.Join(base, "project", ".amplifier"))
			mkdirAll(t, root)
		}, watcher.ReasonRootAppeared, watcher.StateWatching},
		{"moved away", func(t *testing.T) {
			rename(t, root, root+".bak")
		}, watcher.ReasonRootVanished, watcher.StateMissing},
		{"moved back with contents", func(t *testing.T) {
			unpack(t, "collections.txtar", root+".bak")
			rename(t, root+".bak", root)
		}, watcher.ReasonRootAppeared, watcher.StateWatching},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			step.do(t)
			flush(t, w)
			wantRescan(t, rec.take(), root, step.reason)
			if s := statusOf(t, w, root); s.State != step.state {
				t.Errorf("state = %s, want %s", s.State, step.state)
			}
			if step.state != watcher.StateWatching {
				return
			}
			p := filepath.Join(root, "alpha.md")
			writeFile(t, p, step.name)
			flush(t, w)
			wantPaths(t, rec.take(), root, p)
		})
	}
}

// TestRootAncestorRenamed: renaming a directory above a root sends nothing
// to the root's own watches; the root must still be seen to go and come
// back.
func TestRootAncestorRenamed(t *testing.T) {
	base := realTempDir(t)
	project := filepath.Join(base, "project")
	root := filepath.Join(project, ".amplifier", "collections")
	unpack(t, "collections.txtar", root)
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)

	rename(t, project, project+"-renamed")
	flush(t, w)
	wantRescan(t, rec.take(), root, watcher.ReasonRootVanished)
	if s := statusOf(t, w, root); s.State != watcher.StateMissing {
		t.Errorf("state = %s, want missing", s.State)
	}

	// Changes in the moved tree no longer belong to the root.
	writeFile(t, filepath.Join(project+"-renamed", ".amplifier", "collections", "alpha", "x.md"), "x")
	flush(t, w)
	if bs := rec.take(); len(bs) > 0 {
		t.Errorf("batches after the root moved away: %s", summary(bs))
	}

	rename(t, project+"-renamed", project)
	flush(t, w)
	wantRescan(t, rec.take(), root, watcher.ReasonRootAppeared)
	p := filepath.Join(root, "beta", "y.md")
	writeFile(t, p, "y")
	flush(t, w)
	wantPaths(t, rec.take(), root, p)
}

// TestRootIsSymlink: a root that is itself a symlink is reported under the
// path it was added as.
func TestRootIsSymlink(t *testing.T) {
	real := tempRoot(t)
	root := filepath.Join(realTempDir(t), "collections")
	symlink(t, real, root)
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)
	writeFile(t, filepath.Join(real, "alpha", "agents", "x.md"), "x")
	flush(t, w)
	bs := rec.take()
	wantPaths(t, bs, root, filepath.Join(root, "alpha", "agents", "x.md"))
	wantNoPaths(t, bs, root, filepath.Join(real, "alpha", "agents", "x.md"))
}

// TestOverflow holds the drain back until the kernel queue overflows: every
// root is rescanned, a warning is kept, and a consumer ends exact.
func TestOverflow(t *testing.T) {
	root := fastTempDir(t)
	other := tempRoot(t)
	// fsnotify reads up to 4096 events at once and the kernel queues 16,384
	// (fs.inotify.max_queued_events) more: 24,000 is past both. The
	// directories exist, and are watched, before the burst.
	const files, dirs = 24000, 40
	for i := range dirs {
		mkdirAll(t, filepath.Join(root, fmt.Sprintf("c%02d", i)))
	}
	gate := make(chan struct{})
	rec := newRecorder()
	w, err := watcher.NewGated(watcher.Options{}, rec.handle, gate)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	addRoot(t, w, root)
	addRoot(t, w, other)
	m := newModel(t, root)

	for i := range files {
		writeFile(t, filepath.Join(root, fmt.Sprintf("c%02d", i%dirs), fmt.Sprintf("f%05d.md", i)), "")
	}
	mkdirAll(t, filepath.Join(root, "late", "deeper"))
	close(gate)
	flush(t, w)
	bs := rec.take()
	wantRescan(t, bs, root, watcher.ReasonOverflow)
	wantRescan(t, bs, other, watcher.ReasonOverflow)
	for _, b := range bs {
		m.apply(b)
	}
	m.check()
	for _, r := range []string{root, other} {
		s := statusOf(t, w, r)
		if s.State != watcher.StateWatching {
			t.Errorf("%s: state = %s, want watching", r, s.State)
		}
		if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "overflow") }) {
			t.Errorf("%s: warnings = %q, want an overflow warning", r, s.Warnings)
		}
	}

	// Watching goes on after the overflow, in directories whose creation
	// was lost with it too.
	p, q := filepath.Join(root, "c07", "after.md"), filepath.Join(root, "late", "deeper", "after.md")
	writeFile(t, p, "x")
	writeFile(t, q, "x")
	flush(t, w)
	wantPaths(t, rec.take(), root, p, q)
}

// TestOverflowWithRootAppeared: an overflow in the same debounce window as
// a root appearing gives one batch with both reasons, so that a consumer
// that takes a root appearing in its stride still sees the overflow.
func TestOverflowWithRootAppeared(t *testing.T) {
	root := filepath.Join(realTempDir(t), "root")
	// Batches wait for Flush.
	w, rec := start(t, watcher.Options{Debounce: time.Hour, MaxWait: time.Hour})
	addRoot(t, w, root)
	mkdirAll(t, root)
	waitStatus(t, w, root, "watching", func(s watcher.RootStatus) bool { return s.State == watcher.StateWatching })
	w.InjectError(fsnotify.ErrEventOverflow)
	flush(t, w)
	bs := rec.take()
	if len(bs) != 1 || !bs[0].Rescan {
		t.Fatalf("batches = %s, want one rescan", summary(bs))
	}
	want := watcher.ReasonOverflow | watcher.ReasonRootAppeared
	if got := bs[0].Reasons; got != want {
		t.Errorf("reasons = %q, want %q", got, want)
	}
	s := statusOf(t, w, root)
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "overflow") }) {
		t.Errorf("warnings = %q, want an overflow warning", s.Warnings)
	}
}

// TestTooManyOpenFiles: kqueue holds a descriptor per watched file and
// directory; a root for which adding a watch fails with EMFILE or ENFILE is
// polled, as when inotify runs out of watches, with a warning that names
// the limit.
func TestTooManyOpenFiles(t *testing.T) {
	tests := []struct {
		name    string
		errno   syscall.Errno
		warning string
	}{
		{"process", syscall.EMFILE, "raise ulimit -n"},
		{"system", syscall.ENFILE, "too many open files in the system"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := realTempDir(t)
			root, late := filepath.Join(base, "root"), filepath.Join(base, "late")
			unpack(t, "collections.txtar", root)
			unpack(t, "collections.txtar", late)
			var full atomic.Bool
			addWatch := func(dir string) error {
				if full.Load() && strings.HasPrefix(dir, base+"/") {
					// As fsnotify's kqueue backend reports it.
					return fmt.Errorf("%q: %w", dir, tc.errno)
				}
				return nil
			}
			rec := newRecorder()
			w, err := watcher.NewWithAddWatch(watcher.Options{PollInterval: 5 * time.Millisecond}, rec.handle, addWatch)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			addRoot(t, w, root)
			if s := statusOf(t, w, root); s.State != watcher.StateWatching {
				t.Fatalf("status = %+v, want watching", s)
			}

			wantPolled := func(t *testing.T, root string) {
				t.Helper()
				s := statusOf(t, w, root)
				if s.State != watcher.StatePolling || s.Watches != 0 {
					t.Errorf("status = %+v, want polling without watches", s)
				}
				if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, tc.warning) }) {
					t.Errorf("warnings = %q, want one saying %q", s.Warnings, tc.warning)
				}
			}

			t.Run("while watching", func(t *testing.T) {
				full.Store(true)
				dir := filepath.Join(root, "gamma")
				mkdirAll(t, dir)
				flush(t, w)
				bs := rec.take()
				reasons := rescanReasons(bs, root)
				if len(reasons) != 1 || reasons[0] != watcher.ReasonPolling|watcher.ReasonTooManyFiles {
					t.Errorf("rescans = %q, want one for %q", reasons, watcher.ReasonPolling|watcher.ReasonTooManyFiles)
				}
				wantPolled(t, root)

				p := filepath.Join(dir, "new.md")
				writeFile(t, p, "x")
				flush(t, w)
				wantPaths(t, rec.take(), root, p)
			})

			t.Run("when added", func(t *testing.T) {
				addRoot(t, w, late)
				wantPolled(t, late)
				p := filepath.Join(late, "alpha", "new.md")
				writeFile(t, p, "x")
				flush(t, w)
				wantPaths(t, rec.take(), late, p)
			})
		})
	}
}

// TestWatchBudget: a root that cannot get all the watches it needs is polled,
// with a warning, and its changes are still seen.
func TestWatchBudget(t *testing.T) {
	t.Run("exhausted while watching", func(t *testing.T) {
		root := realTempDir(t)
		mkdirAll(t, filepath.Join(root, "a"))
		mkdirAll(t, filepath.Join(root, "b"))
		w, rec := start(t, watcher.Options{MaxWatches: 3, PollInterval: 5 * time.Millisecond})
		addRoot(t, w, root)
		if s := statusOf(t, w, root); s.State != watcher.StateWatching || s.Watches != 3 {
			t.Fatalf("status = %+v, want watching with 3 watches", s)
		}

		mkdirAll(t, filepath.Join(root, "c"))
		flush(t, w)
		wantRescan(t, rec.take(), root, watcher.ReasonWatchLimit)
		s := statusOf(t, w, root)
		if s.State != watcher.StatePolling || s.Watches != 0 || len(s.Warnings) != 1 {
			t.Fatalf("status = %+v, want polling, no watches, one warning", s)
		}

		p := filepath.Join(root, "c", "new.md")
		writeFile(t, p, "x")
		flush(t, w)
		wantPaths(t, rec.take(), root, p)

		// Polling also runs on its own, without Flush.
		q := filepath.Join(root, "a", "other.md")
		writeFile(t, q, "y")
		rec.waitFor(t, q, func(bs []watcher.Batch) bool { return changedPaths(bs, root)[q] })
	})

	t.Run("exhausted when added", func(t *testing.T) {
		root := tempRoot(t)
		w, rec := start(t, watcher.Options{MaxWatches: 2})
		addRoot(t, w, root)
		if s := statusOf(t, w, root); s.State != watcher.StatePolling || len(s.Warnings) != 1 {
			t.Fatalf("status = %+v, want polling with a warning", s)
		}
		m := newModel(t, root)
		p := filepath.Join(root, "beta", "profiles", "dev.md")
		writeFile(t, p, "changed size")
		removeAll(t, filepath.Join(root, "alpha", "context"))
		mkdirAll(t, filepath.Join(root, "gamma", "agents"))
		writeFile(t, filepath.Join(root, "gamma", "agents", "g.md"), "g")
		flush(t, w)
		bs := rec.take()
		wantPaths(t, bs, root, p, filepath.Join(root, "alpha", "context"), filepath.Join(root, "gamma", "agents", "g.md"))
		for _, b := range bs {
			m.apply(b)
		}
		m.check()
	})

	t.Run("polled root removed and made again", func(t *testing.T) {
		base := realTempDir(t)
		root := filepath.Join(base, "root")
		unpack(t, "collections.txtar", root)
		w, rec := start(t, watcher.Options{MaxWatches: 1})
		addRoot(t, w, root)
		removeAll(t, root)
		flush(t, w)
		wantRescan(t, rec.take(), root, watcher.ReasonRootVanished)
		if s := statusOf(t, w, root); s.State != watcher.StateMissing {
			t.Errorf("state = %s, want missing", s.State)
		}
		mkdirAll(t, root)
		flush(t, w)
		wantRescan(t, rec.take(), root, watcher.ReasonRootAppeared)
	})
}

func TestSyncDirectoryRemoved(t *testing.T) {
	syncParent := realTempDir(t)
	root := tempRoot(t)
	w, rec := start(t, watcher.Options{SyncDir: syncParent})
	addRoot(t, w, root)
	entries, err := os.ReadDir(syncParent)
	if err != nil || len(entries) != 1 {
		t.Fatalf("sync directory: %v %v", entries, err)
	}
	removeAll(t, filepath.Join(syncParent, entries[0].Name()))
	p := filepath.Join(root, "alpha", "x.md")
	writeFile(t, p, "x")
	flush(t, w)
	flush(t, w)
	wantPaths(t, rec.take(), root, p)
}

// TestRootSwapped: the root is renamed away, made again, and part of the
// old tree moved back in. Events fsnotify reads in between still carry the
// old names; the watches must end up on the new tree.
func TestRootSwapped(t *testing.T) {
	root := fastTempDir(t)
	unpack(t, "collections.txtar", root)
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)
	m := newModel(t, root)

	rename(t, root, root+".old")
	mkdirAll(t, root)
	rename(t, filepath.Join(root+".old", "alpha"), filepath.Join(root, "alpha"))
	removeAll(t, root+".old")
	flush(t, w)
	bs := rec.take()
	wantRescan(t, bs, root, rootChanged)
	for _, b := range bs {
		m.apply(b)
	}
	m.check()

	deep := filepath.Join(root, "alpha", "context", "d", "e")
	mkdirAll(t, deep)
	writeFile(t, filepath.Join(deep, "f.md"), "")
	flush(t, w)
	bs = rec.take()
	// Late events from the old tree may ask for another rescan.
	wantSeen(t, bs, root, filepath.Join(deep, "f.md"))
	for _, b := range bs {
		m.apply(b)
	}
	m.check()
}

// TestInodeNumbersReused: a directory removed and made again at once often
// gets the inode number of the one removed (ext4 does this); the new one
// must be watched all the same.
func TestInodeNumbersReused(t *testing.T) {
	base := realTempDir(t)
	root := filepath.Join(base, "root")
	unpack(t, "collections.txtar", root)
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)

	t.Run("directory", func(t *testing.T) {
		dir := filepath.Join(root, "alpha", "profiles")
		for i := range 3 {
			removeAll(t, dir)
			mkdirAll(t, dir)
			flush(t, w)
			p := filepath.Join(dir, fmt.Sprintf("p%d.md", i))
			writeFile(t, p, "x")
			flush(t, w)
			wantPaths(t, rec.take(), root, p)
		}
	})
	t.Run("root", func(t *testing.T) {
		for i := range 3 {
			removeAll(t, root)
			mkdirAll(t, root)
			flush(t, w)
			wantRescan(t, rec.take(), root, rootChanged)
			p := filepath.Join(root, fmt.Sprintf("p%d.md", i))
			writeFile(t, p, "x")
			flush(t, w)
			wantPaths(t, rec.take(), root, p)
		}
	})
}
