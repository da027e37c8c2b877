package daemon

import (
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/amplidex/amplidex/discovery"
)

// listings holds the directory listings that the watcher's walks of the
// first scan's roots make (watcher.Options.OnListing), for the first
// scan's loader: a directory the walk listed is not listed again.
//
// A listing is as good as a fresh one here. The watcher placed each
// directory's watch before it listed it, so every change made after a
// listing is reported in a later batch; and the daemon applies no batch
// until the first scan has ended (handleBatch waits for ingest.ready), so
// each such change is applied over what the scan read.
//
// The loader reads the roots while the watcher walks them, and follows
// the walk: both go depth first in name order. A directory that the walk
// has not listed yet is waited for, not listed by the loader, because a
// read made before the directory's watch was in place could miss a
// change that no batch reports. The wait ends when the walk lists the
// directory or when recording stops (the walks are over, or a root
// failed); the loader then lists the directory itself, which is safe once
// the walks are over. Each listing is taken at most once, and the rest go
// with the listings when the first scan ends (the daemon lets go of
// them): a directory read again (a batch's collection) is listed afresh.
type listings struct {
	mu        sync.Mutex // guards fields below
	recording bool
	dirs      map[string][]fs.DirEntry // sorted by name; once taken, only the subdirectories and links, for expected
	taken     map[string]bool
	waiting   map[string]chan struct{} // closed when the dir is recorded or recording stops
	real      discovery.RealParents
}

// newListings returns listings that record until stopRecording.
func newListings() *listings {
	return &listings{recording: true, dirs: map[string][]fs.DirEntry{}, taken: map[string]bool{},
		waiting: map[string]chan struct{}{}}
}

// record keeps the entries of dir while recording: the watcher's
// OnListing. The watcher hands them over sorted by name.
func (l *listings) record(_, dir string, entries []fs.DirEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.recording || l.taken[dir] {
		return
	}
	if !slices.IsSortedFunc(entries, byName) {
		slices.SortFunc(entries, byName)
	}
	l.dirs[dir] = entries
	if ch, ok := l.waiting[dir]; ok {
		close(ch)
		delete(l.waiting, dir)
	}
}

// stopRecording makes record keep nothing more, and ends every wait:
// walks after the first scan's AddRoot calls (a directory that appears,
// an overflow) are not for it.
func (l *listings) stopRecording() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recording = false
	for dir, ch := range l.waiting {
		close(ch)
		delete(l.waiting, dir)
	}
}

// take returns the listing of dir, sorted by name as os.ReadDir sorts it;
// the entries are shared and must not be changed. While recording, it
// waits for a listing that the walk has not made yet but will. It reports
// false, and the caller lists dir itself, when the listing was taken
// before, when recording stopped without it, or when the walk will not
// list dir: a listing made of a directory above it has no directory (nor
// link) on the way to it. A directory that appears after that listing is
// reported by the watch that listing was made under.
func (l *listings) take(dir string) ([]fs.DirEntry, bool) {
	l.mu.Lock()
	for {
		entries, ok := l.dirs[dir]
		if ok && !l.taken[dir] {
			l.taken[dir] = true
			// What expected needs of it: its subdirectories (and links),
			// if any; the rest goes now rather than with the scan.
			var below []fs.DirEntry
			for _, e := range entries {
				if e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
					below = append(below, e)
				}
			}
			l.dirs[dir] = below
			l.mu.Unlock()
			return entries, true
		}
		if ok || !l.recording || !l.expected(dir) {
			l.mu.Unlock()
			return nil, false
		}
		ch, ok := l.waiting[dir]
		if !ok {
			ch = make(chan struct{})
			l.waiting[dir] = ch
		}
		l.mu.Unlock()
		<-ch
		l.mu.Lock()
	}
}

// realPath returns what filepath.EvalSymlinks(dir) does, for the first
// scan's loader (discovery.Loader.RealPath). A directory that its
// parent's listing shows as a directory, not a link, has its parent's
// real path, resolved once for all its siblings, and its own name: at
// 10,000 collections that spares every collection the lstat of each
// component of its path. What a later change makes of it is read again
// when the change is applied. On Windows, whose real paths also normalize
// each name's case, and for any other directory, the path is resolved
// whole.
func (l *listings) realPath(dir string) (string, error) {
	parent, name := filepath.Dir(dir), filepath.Base(dir)
	if runtime.GOOS == "windows" || parent == dir || !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return filepath.EvalSymlinks(dir)
	}
	l.mu.Lock()
	entries := l.dirs[parent]
	i, found := slices.BinarySearchFunc(entries, name, func(e fs.DirEntry, name string) int { return strings.Compare(e.Name(), name) })
	isDir := found && entries[i].IsDir()
	l.mu.Unlock()
	if !isDir {
		return filepath.EvalSymlinks(dir)
	}
	return l.real.Below(dir)
}

// expected reports whether the walk may still list dir: no listing of a
// directory above it lacks the next step down. l.mu is held.
func (l *listings) expected(dir string) bool {
	child := dir
	for parent := filepath.Dir(child); parent != child; child, parent = parent, filepath.Dir(parent) {
		entries, ok := l.dirs[parent]
		if !ok {
			continue
		}
		i, found := slices.BinarySearchFunc(entries, filepath.Base(child), func(e fs.DirEntry, name string) int {
			return strings.Compare(e.Name(), name)
		})
		return found && (entries[i].IsDir() || entries[i].Type()&fs.ModeSymlink != 0)
	}
	return true
}

// byName orders directory entries as os.ReadDir does.
func byName(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }
