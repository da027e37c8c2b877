package watcher_test

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/amplidex/amplidex/watcher"
)

// listings keeps what a Watcher hands to Options.OnListing.
type listings struct {
	mu      sync.Mutex          // guards fields below
	latest  map[string][]string // directory → sorted names of its latest listing
	types   map[string]fs.FileMode
	roots   map[string]bool // the roots listings came with
	entries map[string][]fs.DirEntry
	order   []string         // the directories, in the order listed
	after   func(dir string) // called after each listing is recorded
}

func newListings() *listings {
	return &listings{
		latest:  make(map[string][]string),
		types:   make(map[string]fs.FileMode),
		roots:   make(map[string]bool),
		entries: make(map[string][]fs.DirEntry),
	}
}

func (l *listings) record(root, dir string, entries []fs.DirEntry) {
	l.mu.Lock()
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
		l.types[filepath.Join(dir, e.Name())] = e.Type()
	}
	slices.Sort(names)
	l.latest[dir] = names
	l.roots[root] = true
	l.entries[dir] = entries
	l.order = append(l.order, dir)
	after := l.after
	l.mu.Unlock()
	if after != nil {
		after(dir)
	}
}

// dirs returns the directories listed so far.
func (l *listings) dirs() map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	set := make(map[string]bool)
	for d := range l.latest {
		set[d] = true
	}
	return set
}

func (l *listings) names(dir string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.latest[dir]
}

// readEntries lists dir, sorted by name.
func readEntries(t testing.TB, dir string) []fs.DirEntry {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// readNames lists dir's names, sorted.
func readNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestOnListingCoversTheTree: by the time AddRoot returns, every directory
// the Watcher watches has been listed, spelled under the root (a linked
// collection under its link), with what a fresh listing holds; skipped
// directories are named in their parent's listing but not listed.
func TestOnListingCoversTheTree(t *testing.T) {
	root := tempRoot(t)
	work := realTempDir(t)
	unpack(t, "collections.txtar", work)
	symlink(t, filepath.Join(work, "alpha"), filepath.Join(root, "linked"))
	mkdirAll(t, filepath.Join(root, "beta", ".git", "objects"))
	mkdirAll(t, filepath.Join(root, "node_modules", "left-pad"))
	mkdirAll(t, filepath.Join(root, "alpha", "empty"))

	l := newListings()
	w, _ := start(t, watcher.Options{OnListing: l.record})
	addRoot(t, w, root)

	want := map[string]bool{root: true}
	for p := range scanTree(t, root) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() && !skippedDir(filepath.Base(p)) {
			want[p] = true
		}
	}
	got := l.dirs()
	if !maps.Equal(got, want) {
		t.Errorf("listed %q,\nwant %q", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for d := range want {
		if names := l.names(d); !slices.Equal(names, readNames(t, d)) {
			t.Errorf("listing of %s = %q, want %q", d, names, readNames(t, d))
		}
	}
	if !maps.Equal(l.roots, map[string]bool{root: true}) {
		t.Errorf("roots of the listings: %v, want only %s", l.roots, root)
	}
	for d := range got {
		if strings.HasPrefix(d, work) {
			t.Errorf("real path %s listed", d)
		}
	}
	for p, typ := range map[string]fs.FileMode{
		filepath.Join(root, "beta", ".git"):            fs.ModeDir,
		filepath.Join(root, "linked"):                  fs.ModeSymlink,
		filepath.Join(root, "alpha", "pyproject.toml"): 0,
		filepath.Join(root, "linked", "agents"):        fs.ModeDir,
	} {
		if l.types[p] != typ {
			t.Errorf("type of %s in its listing = %v, want %v", p, l.types[p], typ)
		}
	}
}

// TestOnListingInNameOrder: a walk hands each listing over sorted by name
// and lists the tree depth first in name order, a directory before its
// subdirectories and each subtree before the next sibling's, so that a
// reader of the tree in that order can follow it.
func TestOnListingInNameOrder(t *testing.T) {
	root := tempRoot(t)
	for _, d := range []string{"b/z", "b/a/y", "a/c", "a/b", "c", "a/b/x"} {
		mkdirAll(t, filepath.Join(root, filepath.FromSlash(d)))
	}
	for _, f := range []string{"b/2", "b/1", "a/3"} {
		writeFile(t, filepath.Join(root, filepath.FromSlash(f)), "x")
	}
	l := newListings()
	w, _ := start(t, watcher.Options{OnListing: l.record})
	addRoot(t, w, root)

	// os.ReadDir lists in name order: a recursive walk with it is the
	// order wanted.
	var want []string
	var walk func(dir string)
	walk = func(dir string) {
		want = append(want, dir)
		for _, e := range readEntries(t, dir) {
			if e.IsDir() && !skippedDir(e.Name()) {
				walk(filepath.Join(dir, e.Name()))
			}
		}
	}
	walk(root)
	if len(want) < 10 {
		t.Fatalf("the tree has %d directories, want the 10 made and more", len(want))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Equal(l.order, want) {
		t.Errorf("listed in the order %q,\nwant %q", l.order, want)
	}
	for dir, entries := range l.entries {
		if !slices.IsSortedFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }) {
			t.Errorf("listing of %s not sorted by name", dir)
		}
	}
}

// TestOnListingMissesNothing makes a file in every directory just before
// its watch is added, and another just after its listing is handed over:
// each must be in the directory's listing or in a batch. Were a directory
// listed before its watch were in place, a change made in between would
// be in neither.
func TestOnListingMissesNothing(t *testing.T) {
	root := tempRoot(t)
	mkdirAll(t, filepath.Join(root, "gamma", "agents", "deep"))
	under := func(dir string) bool {
		return dir == root || strings.HasPrefix(dir, root+string(filepath.Separator))
	}
	var mu sync.Mutex // guards made
	made := make(map[string]bool)
	makeOne := func(dir, name string) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		made[p] = true
		mu.Unlock()
	}
	l := newListings()
	l.after = func(dir string) { makeOne(dir, "after-listing.md") }
	w, rec := start(t, watcher.Options{
		OnListing: l.record,
		BeforeWatch: func(dir string) error {
			if under(dir) {
				makeOne(dir, "before-watch.md")
			}
			return nil
		},
	})
	addRoot(t, w, root)
	flush(t, w)
	reported := changedPaths(rec.take(), root)

	mu.Lock()
	defer mu.Unlock()
	if len(made) < 2*8 {
		t.Fatalf("only %d files made; the hooks were not called for every directory", len(made))
	}
	for p := range made {
		if !reported[p] && !slices.Contains(l.names(filepath.Dir(p)), filepath.Base(p)) {
			t.Errorf("%s is neither in its directory's listing nor reported", p)
		}
	}
}

// TestOnListingBeforeBatches: a directory that appears is walked, and its
// listings are handed over before the batch reporting it is delivered.
func TestOnListingBeforeBatches(t *testing.T) {
	root := tempRoot(t)
	l := newListings()
	var mu sync.Mutex // guards unlisted
	var unlisted []string
	rec := newRecorder()
	w, err := watcher.New(watcher.Options{OnListing: l.record}, func(b watcher.Batch) {
		listed := l.dirs()
		for _, p := range b.Paths {
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() && !listed[p] {
				mu.Lock()
				unlisted = append(unlisted, p)
				mu.Unlock()
			}
		}
		rec.handle(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	addRoot(t, w, root)
	dirs := []string{
		filepath.Join(root, "gamma"),
		filepath.Join(root, "gamma", "agents"),
		filepath.Join(root, "gamma", "agents", "team"),
	}
	mkdirAll(t, dirs[2])
	writeFile(t, filepath.Join(dirs[2], "lead.md"), "x")
	flush(t, w)
	wantPaths(t, rec.take(), root, append(dirs, filepath.Join(dirs[2], "lead.md"))...)
	listed := l.dirs()
	for _, d := range dirs {
		if !listed[d] {
			t.Errorf("%s appeared but was not listed", d)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(unlisted) > 0 {
		t.Errorf("directories delivered in a batch before their listing: %q", unlisted)
	}
}

// TestOnListingPolledWhenAdded: when AddRoot runs out of watches part way,
// the listings it handed over may have missed changes, so the root gets a
// rescan; without OnListing it gets none, as the caller scans it anyway.
func TestOnListingPolledWhenAdded(t *testing.T) {
	for _, withListings := range []bool{true, false} {
		t.Run(map[bool]string{true: "with listings", false: "without"}[withListings], func(t *testing.T) {
			root := tempRoot(t)
			l := newListings()
			opts := watcher.Options{MaxWatches: 6}
			if withListings {
				opts.OnListing = l.record
			}
			w, rec := start(t, opts)
			addRoot(t, w, root)
			if s := statusOf(t, w, root); s.State != watcher.StatePolling {
				t.Fatalf("status = %+v, want polling", s)
			}
			if withListings && len(l.dirs()) == 0 {
				t.Fatal("nothing listed before the watches ran out; the test needs a larger budget")
			}
			flush(t, w)
			reasons := rescanReasons(rec.take(), root)
			want := []watcher.Reason(nil)
			if withListings {
				want = []watcher.Reason{watcher.ReasonPolling | watcher.ReasonWatchLimit}
			}
			if !slices.Equal(reasons, want) {
				t.Errorf("rescans %v, want %v", reasons, want)
			}
		})
	}
}
