package compose

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Entry is what is at a path.
type Entry uint8

// What Stat finds.
const (
	Missing Entry = iota
	RegularFile
	Directory
)

// Files is where a composition reads: it never touches the disk itself.
// The daemon answers from its file cache, the language server overlays
// unsaved buffers, and DiskFiles reads the disk. Paths are absolute and
// cleaned. Implementations must be safe for concurrent use.
type Files interface {
	// Stat says what is at path (a symbolic link is followed).
	Stat(path string) Entry
	// Parse returns the parse of the file at path as a file of kind.
	Parse(path string, kind bundle.Kind) (*bundle.File, error)
	// List returns the names in directory dir, sorted.
	List(dir string) ([]string, error)
}

// DiskFiles reads the disk, each path once: it keeps what it found, read
// and parsed (by path and kind) for its own life, so one DiskFiles is one
// consistent view for one run. It reads regular files only, at most Limit
// bytes each. A file parsed as more than one kind is read once, and a
// parse that finds a bundle by its content is the bundle's parse too. A
// directory's listing tells what its regular files and directories are,
// so that Stat asks the disk only about the other paths.
type DiskFiles struct {
	// Limit bounds the bytes read of one file; syntax.DefaultMaxFileSize when 0.
	Limit int64

	mu     sync.Mutex // guards fields below
	parsed map[parseKey]parseResult
	texts  map[string]readResult
	stats  map[string]Entry
	lists  map[string]listResult
}

type listResult struct {
	names []string
	err   error
}

type readResult struct {
	src []byte
	err error
}

type parseKey struct {
	path string
	kind bundle.Kind
}

type parseResult struct {
	f   *bundle.File
	err error
}

// Stat implements Files.
func (d *DiskFiles) Stat(path string) Entry {
	d.mu.Lock()
	e, ok := d.stats[path]
	d.mu.Unlock()
	if ok {
		return e
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		e = Missing
	case fi.IsDir():
		e = Directory
	case fi.Mode().IsRegular():
		e = RegularFile
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if prev, ok := d.stats[path]; ok {
		return prev
	}
	if d.stats == nil {
		d.stats = map[string]Entry{}
	}
	d.stats[path] = e
	return e
}

// Parse implements Files.
func (d *DiskFiles) Parse(path string, kind bundle.Kind) (*bundle.File, error) {
	k := parseKey{path, kind}
	d.mu.Lock()
	r, ok := d.parsed[k]
	d.mu.Unlock()
	if ok {
		return r.f, r.err
	}
	src, err := d.read(path)
	if err == nil {
		r.f = bundle.Parse(path, src, bundle.Options{Kind: kind})
	} else {
		r.err = err
	}
	d.mu.Lock()
	if d.parsed == nil {
		d.parsed = map[parseKey]parseResult{}
	}
	if prev, ok := d.parsed[k]; ok {
		r = prev // another goroutine parsed it first: one answer for the run
	} else {
		d.parsed[k] = r
	}
	// A file whose content makes it a bundle parses as one whether its
	// kind was asked for or found: the same parse serves both.
	if bk := (parseKey{path, bundle.KindBundle}); kind == bundle.KindOther && r.f != nil && r.f.Kind == bundle.KindBundle {
		if _, ok := d.parsed[bk]; !ok {
			d.parsed[bk] = r
		}
	}
	d.mu.Unlock()
	return r.f, r.err
}

// read returns the bytes of the file at path, read the first time they
// are asked for.
func (d *DiskFiles) read(path string) ([]byte, error) {
	d.mu.Lock()
	r, ok := d.texts[path]
	d.mu.Unlock()
	if ok {
		return r.src, r.err
	}
	r.src, r.err = syntax.ReadFile(path, d.Limit)
	d.mu.Lock()
	if d.texts == nil {
		d.texts = map[string]readResult{}
	}
	if prev, ok := d.texts[path]; ok {
		r = prev
	} else {
		d.texts[path] = r
	}
	d.mu.Unlock()
	return r.src, r.err
}

// List implements Files.
func (d *DiskFiles) List(dir string) ([]string, error) {
	d.mu.Lock()
	r, ok := d.lists[dir]
	d.mu.Unlock()
	if ok {
		return r.names, r.err
	}
	es, err := os.ReadDir(dir)
	if err == nil {
		r.names = make([]string, 0, len(es))
		for _, e := range es {
			r.names = append(r.names, e.Name())
		}
		sort.Strings(r.names)
	}
	r.err = err
	// What the listing says of a regular file or a directory is what
	// os.Stat says of it, unless the directory can be listed but not
	// searched (r without x): one stat tells. A symbolic link, or anything
	// else, is left to Stat.
	var kinds map[string]Entry
	if err == nil && len(es) > 0 {
		if _, err := os.Stat(filepath.Join(dir, es[0].Name())); !errors.Is(err, fs.ErrPermission) {
			kinds = make(map[string]Entry, len(es))
			for _, e := range es {
				switch t := e.Type(); {
				case t.IsDir():
					kinds[filepath.Join(dir, e.Name())] = Directory
				case t.IsRegular():
					kinds[filepath.Join(dir, e.Name())] = RegularFile
				}
			}
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if prev, ok := d.lists[dir]; ok {
		return prev.names, prev.err
	}
	if d.lists == nil {
		d.lists = map[string]listResult{}
	}
	d.lists[dir] = r
	if d.stats == nil {
		d.stats = map[string]Entry{}
	}
	for p, e := range kinds {
		if _, ok := d.stats[p]; !ok { // an answer given already stays
			d.stats[p] = e
		}
	}
	return r.names, r.err
}

// recorder passes through to Files and remembers every path asked about:
// what a composition depends on.
type recorder struct {
	files Files
	read  map[string]struct{}
}

func (r *recorder) note(p string) {
	if r.read == nil {
		r.read = map[string]struct{}{}
	}
	r.read[p] = struct{}{}
}

func (r *recorder) Stat(p string) Entry {
	r.note(p)
	return r.files.Stat(p)
}

func (r *recorder) Parse(p string, k bundle.Kind) (*bundle.File, error) {
	r.note(p)
	return r.files.Parse(p, k)
}

func (r *recorder) List(dir string) ([]string, error) {
	r.note(dir)
	return r.files.List(dir)
}

func (r *recorder) paths() []string {
	out := make([]string, 0, len(r.read))
	for p := range r.read {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// exists reports whether something is at path.
func exists(f Files, p string) bool { return f.Stat(p) != Missing }
