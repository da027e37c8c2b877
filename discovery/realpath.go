package discovery

import (
	"path/filepath"
	"sync"
)

// RealParents remembers the real paths of directories that hold
// collections, so that the real path of a collection directory that is
// no link (its caller knows, from a listing or an lstat) is its parent's,
// resolved once for all its siblings, and its own name, rather than an
// lstat of every directory above it. The zero RealParents is ready to
// use, and is safe for concurrent use.
type RealParents struct {
	mu   sync.Mutex // guards real
	real map[string]resolved
}

// resolved is what filepath.EvalSymlinks said of a directory.
type resolved struct {
	path string
	err  error
}

// Below returns what filepath.EvalSymlinks(dir) returns, for a clean
// absolute dir that is no link: its parent's real path, remembered, and
// its name. When the parent does not resolve, dir is resolved whole.
func (r *RealParents) Below(dir string) (string, error) {
	parent, name := filepath.Dir(dir), filepath.Base(dir)
	r.mu.Lock()
	p, ok := r.real[parent]
	r.mu.Unlock()
	if !ok {
		p.path, p.err = filepath.EvalSymlinks(parent)
		r.mu.Lock()
		if r.real == nil {
			r.real = map[string]resolved{}
		}
		r.real[parent] = p
		r.mu.Unlock()
	}
	if p.err != nil {
		return filepath.EvalSymlinks(dir)
	}
	return filepath.Join(p.path, name), nil
}
