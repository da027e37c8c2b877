package catalog

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Files is compose.Files over the disk that keeps what it found (what is
// at a path, a directory's names, a file's parses) until it is told that a
// path changed (Forget). Every View of a Catalog reads through one Files,
// so a file is read and parsed once however many bundles include it.
//
// A read that a Forget of its path (or of a directory above it) overtook
// is answered but not kept: what is kept is never older than the last
// Forget.
type Files struct {
	limit int64
	read  func(path string, limit int64) ([]byte, error)

	mu     sync.Mutex // guards fields below
	stats  map[string]fileStat
	lists  map[string]listResult
	parsed map[string][]parseResult // by path, one per kind asked
	// kids holds, by directory, the names below it that something is
	// known of: a directory's Forget reaches what is below it without
	// looking at the rest.
	kids map[string]map[string]struct{}
	// vers counts the Forgets of each path, listVers those of what a
	// directory lists: a read compares them before and after.
	vers     map[string]uint64
	listVers map[string]uint64
}

// fileStat is what Stat found at a path, with enough to tell a change.
type fileStat struct {
	entry compose.Entry
	size  int64
	mod   int64
	mode  fs.FileMode
}

type listResult struct {
	names []string
	err   error
}

type parseResult struct {
	kind bundle.Kind
	f    *bundle.File
	err  error
}

// NewFiles returns an empty Files that reads at most limit bytes of a
// file (syntax.DefaultMaxFileSize when 0), regular files only.
func NewFiles(limit int64) *Files {
	return &Files{limit: limit, read: syntax.ReadFile, stats: map[string]fileStat{}, lists: map[string]listResult{},
		parsed: map[string][]parseResult{}, kids: map[string]map[string]struct{}{}, vers: map[string]uint64{},
		listVers: map[string]uint64{}}
}

func statPath(p string) fileStat {
	fi, err := os.Stat(p)
	if err != nil {
		return fileStat{entry: compose.Missing}
	}
	s := fileStat{size: fi.Size(), mod: fi.ModTime().UnixNano(), mode: fi.Mode()}
	switch {
	case fi.IsDir():
		s.entry = compose.Directory
	case fi.Mode().IsRegular():
		s.entry = compose.RegularFile
	default:
		s.entry = compose.Missing
	}
	return s
}

// ver is the number of Forgets of p and of the directories above it.
// f.mu is held.
func (f *Files) ver(p string) uint64 {
	var n uint64
	for {
		n += f.vers[p]
		up := filepath.Dir(p)
		if up == p {
			return n
		}
		p = up
	}
}

// note records that something is known of p. f.mu is held.
func (f *Files) note(p string) {
	for {
		dir := filepath.Dir(p)
		if dir == p {
			return
		}
		k := f.kids[dir]
		if k == nil {
			k = map[string]struct{}{}
			f.kids[dir] = k
		}
		name := filepath.Base(p)
		if _, ok := k[name]; ok {
			return
		}
		k[name] = struct{}{}
		p = dir
	}
}

// Stat implements compose.Files.
func (f *Files) Stat(p string) compose.Entry {
	f.mu.Lock()
	if s, ok := f.stats[p]; ok {
		f.mu.Unlock()
		return s.entry
	}
	v := f.ver(p)
	f.mu.Unlock()
	s := statPath(p)
	f.mu.Lock()
	if f.ver(p) == v {
		f.stats[p] = s
		f.note(p)
	}
	f.mu.Unlock()
	return s.entry
}

// Parse implements compose.Files.
func (f *Files) Parse(p string, kind bundle.Kind) (*bundle.File, error) {
	f.mu.Lock()
	for _, r := range f.parsed[p] {
		if r.kind == kind {
			f.mu.Unlock()
			return r.f, r.err
		}
	}
	v := f.ver(p)
	_, statted := f.stats[p]
	f.mu.Unlock()
	var s fileStat
	if !statted {
		s = statPath(p)
	}
	r := parseResult{kind: kind}
	src, err := f.read(p, f.limit)
	if err == nil {
		r.f = bundle.Parse(p, src, bundle.Options{Kind: kind})
	} else {
		r.err = err
	}
	f.mu.Lock()
	if f.ver(p) == v {
		f.parsed[p] = append(f.parsed[p], r)
		if _, ok := f.stats[p]; !ok && !statted {
			f.stats[p] = s
		}
		f.note(p)
	}
	f.mu.Unlock()
	return r.f, r.err
}

// List implements compose.Files.
func (f *Files) List(dir string) ([]string, error) {
	f.mu.Lock()
	if r, ok := f.lists[dir]; ok {
		f.mu.Unlock()
		return r.names, r.err
	}
	v := f.ver(dir) + f.listVers[dir]
	f.mu.Unlock()
	var r listResult
	es, err := os.ReadDir(dir)
	if err == nil {
		r.names = make([]string, 0, len(es))
		for _, e := range es {
			r.names = append(r.names, e.Name())
		}
		sort.Strings(r.names)
	}
	r.err = err
	f.mu.Lock()
	if f.ver(dir)+f.listVers[dir] == v {
		f.lists[dir] = r
		f.note(dir)
	}
	f.mu.Unlock()
	return r.names, r.err
}

// Forget drops what is known of paths (and, for a directory, of
// everything below it) and of trees (whole directories read again), and
// the listings of the directories that hold them. It returns every path
// whose knowledge was dropped, with those directories, sorted: what the
// compositions that read any of them must be made again from.
func (f *Files) Forget(paths, trees []string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	affected := map[string]bool{}
	var drop func(p string)
	drop = func(p string) {
		affected[p] = true
		delete(f.stats, p)
		delete(f.lists, p)
		delete(f.parsed, p)
		f.vers[p]++
		for name := range f.kids[p] {
			drop(filepath.Join(p, name))
		}
		delete(f.kids, p)
	}
	for _, p := range append(append([]string(nil), paths...), trees...) {
		p = filepath.Clean(p)
		drop(p)
		if dir := filepath.Dir(p); dir != p {
			affected[dir] = true
			delete(f.lists, dir)
			f.listVers[dir]++
			if k := f.kids[dir]; k != nil {
				delete(k, filepath.Base(p))
			}
		}
	}
	out := make([]string, 0, len(affected))
	for p := range affected {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Stale returns those of paths whose stat differs from the one kept (a
// file written, made or removed, a directory's entries changed); paths
// nothing is kept of are left out. It stats every path it is given,
// without holding the lock.
func (f *Files) Stale(paths []string) []string {
	var out []string
	for _, p := range paths {
		f.mu.Lock()
		old, ok := f.stats[p]
		f.mu.Unlock()
		if !ok {
			continue
		}
		if statPath(p) != old {
			out = append(out, p)
		}
	}
	return out
}

// keepOnly drops what is known of every path but those of keep (and the
// directories above them), as a Forget would, without reporting it.
func (f *Files) keepOnly(keep map[string]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	drop := func(p string) {
		if keep[p] {
			return
		}
		delete(f.stats, p)
		delete(f.lists, p)
		delete(f.parsed, p)
	}
	for p := range f.stats {
		drop(p)
	}
	for p := range f.lists {
		drop(p)
	}
	for p := range f.parsed {
		drop(p)
	}
	f.kids = map[string]map[string]struct{}{}
	for p := range f.stats {
		f.note(p)
	}
	for p := range f.lists {
		f.note(p)
	}
	for p := range f.parsed {
		f.note(p)
	}
}

// Len returns the number of paths something is known of.
func (f *Files) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	for p := range f.stats {
		seen[p] = true
	}
	for p := range f.lists {
		seen[p] = true
	}
	for p := range f.parsed {
		seen[p] = true
	}
	return len(seen)
}
