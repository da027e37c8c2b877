package daemon

import (
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// listings holds the directory listings that the watcher's walks of the
// first scan's roots made (watcher.Options.OnListing), for the first
// scan's loader: a directory the walk listed is not listed again.
//
// A listing is as good as a fresh one here. The watcher placed each
// directory's watch before it listed it, so every change made after a
// listing is reported in a later batch; and the daemon applies no batch
// until the first scan has ended (handleBatch waits for ingest.ready), so
// each such change is applied over what the scan read. Each listing is
// taken at most once, and the rest go with the listings when the first
// scan ends (the daemon lets go of them):
// a directory read again later (a batch's collection) is listed afresh.
type listings struct {
	mu        sync.Mutex // guards fields below
	recording bool
	dirs      map[string][]fs.DirEntry
}

// newListings returns listings that record until stop.
func newListings() *listings {
	return &listings{recording: true, dirs: map[string][]fs.DirEntry{}}
}

// record keeps the entries of dir while recording: the watcher's
// OnListing.
func (l *listings) record(_, dir string, entries []fs.DirEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.recording {
		l.dirs[dir] = entries
	}
}

// stopRecording makes record keep nothing more: walks after the first
// scan's AddRoot calls (a directory that appears, an overflow) are not
// for it.
func (l *listings) stopRecording() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recording = false
}

// take returns the listing of dir, sorted by name as os.ReadDir sorts it,
// and forgets it.
func (l *listings) take(dir string) ([]fs.DirEntry, bool) {
	l.mu.Lock()
	entries, ok := l.dirs[dir]
	delete(l.dirs, dir)
	l.mu.Unlock()
	if ok {
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	return entries, ok
}
