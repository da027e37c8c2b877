package compose

import (
	"io/fs"
	"path/filepath"
	"sort"
	"sync"

	"github.com/amplidex/amplidex/discovery/bundle"
)

// Graph is which compositions read which paths: when a path changes, the
// compositions to redo are Dependents(path), found without looking at the
// others. The daemon owns one and updates it as it re-composes; a Graph is
// not safe for concurrent use.
type Graph struct {
	reads map[string][]string            // composition → the paths it read
	by    map[string]map[string]struct{} // path → the compositions that read it
}

// Set records that the composition of root read paths, replacing what it
// read before. Its cost is in the number of paths, not of compositions.
func (g *Graph) Set(root string, paths []string) {
	g.Remove(root)
	if g.by == nil {
		g.by = map[string]map[string]struct{}{}
		g.reads = map[string][]string{}
	}
	g.reads[root] = append([]string(nil), paths...)
	for _, p := range paths {
		s := g.by[p]
		if s == nil {
			s = map[string]struct{}{}
			g.by[p] = s
		}
		s[root] = struct{}{}
	}
}

// Remove forgets the composition of root.
func (g *Graph) Remove(root string) {
	for _, p := range g.reads[root] {
		if s := g.by[p]; s != nil {
			delete(s, root)
			if len(s) == 0 {
				delete(g.by, p)
			}
		}
	}
	delete(g.reads, root)
}

// Dependents returns the compositions that read path, sorted.
func (g *Graph) Dependents(path string) []string {
	s := g.by[path]
	out := make([]string, 0, len(s))
	for r := range s {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// Overlay is Files with some files' contents replaced: the language
// server's unsaved buffers over the disk, or a test's files over nothing.
// Paths of the buffers, and the directories that hold them, exist.
// An Overlay is immutable once made; it is safe for concurrent use when
// its base is.
type Overlay struct {
	base    Files
	buffers map[string][]byte
	dirs    map[string][]string // directory → names from the buffers

	mu     sync.Mutex // guards fields below
	parsed map[parseKey]*bundle.File
}

// NewOverlay returns Files that answer from buffers (absolute paths), then
// from base (nil: nothing else exists).
func NewOverlay(base Files, buffers map[string][]byte) *Overlay {
	o := &Overlay{base: base, buffers: map[string][]byte{}, dirs: map[string][]string{}}
	for p, b := range buffers {
		p = filepath.Clean(p)
		o.buffers[p] = b
		for child, dir := p, filepath.Dir(p); ; child, dir = dir, filepath.Dir(dir) {
			name := filepath.Base(child)
			if !containsStr(o.dirs[dir], name) {
				o.dirs[dir] = append(o.dirs[dir], name)
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return o
}

// Stat implements Files.
func (o *Overlay) Stat(p string) Entry {
	if _, ok := o.buffers[p]; ok {
		return RegularFile
	}
	if _, ok := o.dirs[p]; ok {
		return Directory
	}
	if o.base == nil {
		return Missing
	}
	return o.base.Stat(p)
}

// Parse implements Files.
func (o *Overlay) Parse(p string, kind bundle.Kind) (*bundle.File, error) {
	src, ok := o.buffers[p]
	if !ok {
		if o.base == nil {
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		}
		return o.base.Parse(p, kind)
	}
	k := parseKey{p, kind}
	o.mu.Lock()
	f := o.parsed[k]
	o.mu.Unlock()
	if f != nil {
		return f, nil
	}
	f = bundle.Parse(p, src, bundle.Options{Kind: kind})
	o.mu.Lock()
	if o.parsed == nil {
		o.parsed = map[parseKey]*bundle.File{}
	}
	o.parsed[k] = f
	o.mu.Unlock()
	return f, nil
}

// List implements Files.
func (o *Overlay) List(dir string) ([]string, error) {
	var names []string
	if o.base != nil {
		names, _ = o.base.List(dir)
	}
	for _, n := range o.dirs[dir] {
		if !containsStr(names, n) {
			names = append(names, n)
		}
	}
	if names == nil && o.dirs[dir] == nil && (o.base == nil || o.base.Stat(dir) != Directory) {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrNotExist}
	}
	sort.Strings(names)
	return names, nil
}
