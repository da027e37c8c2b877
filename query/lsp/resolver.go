package lsp

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/amplidex/amplidex/discovery"
)

// Resolver supplies the collections of every root, resolved by name. The
// Scanner here reads the roots in process; a Resolver backed by the
// daemon's index plugs in at the same place, so the Workspace never knows
// which one answers.
type Resolver interface {
	// Set returns the collections as they are on disk (or as the daemon
	// last indexed them). The Set is shared: callers must not modify it or
	// the collections it holds.
	Set(ctx context.Context) (*discovery.Set, error)
	// Invalidate tells the Resolver that the file at path changed on disk.
	Invalidate(path string)
}

// Scanner is the in-process Resolver: it scans the roots with a Loader and
// keeps the result until a file is invalidated or MaxAge passes. Rescans
// read only the files whose size or modification time changed.
type Scanner struct {
	roots  []discovery.Root
	cache  *statCache
	loader discovery.Loader
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex // guards fields below; held during a scan so that concurrent callers share it
	set     *discovery.Set
	scanned time.Time
	stale   bool
}

// ScannerOptions configure a Scanner.
type ScannerOptions struct {
	// Schema tunes front matter validation.
	Schema discovery.SchemaOptions
	// MaxAge is how long a scan is trusted when no file was invalidated, for
	// changes made outside the editor; 2s when zero.
	MaxAge time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// NewScanner returns a Scanner over roots, given in precedence order.
func NewScanner(roots []discovery.Root, opts ScannerOptions) *Scanner {
	if opts.MaxAge <= 0 {
		opts.MaxAge = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	cache := newStatCache()
	return &Scanner{
		roots:  roots,
		cache:  cache,
		loader: discovery.Loader{Schema: opts.Schema, Cache: cache},
		maxAge: opts.MaxAge,
		now:    opts.Now,
	}
}

// Set returns the collections of the roots, scanning them when the last
// scan is invalidated or too old.
func (s *Scanner) Set(ctx context.Context) (*discovery.Set, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set != nil && !s.stale && s.now().Sub(s.scanned) < s.maxAge {
		return s.set, nil
	}
	cols := make([][]*discovery.Collection, len(s.roots))
	for i, r := range s.roots {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cs, err := s.loader.ScanRoot(r)
		if err != nil {
			return nil, fmt.Errorf("scan %s root: %w", r.Kind, err)
		}
		cols[i] = cs
	}
	s.set, s.scanned, s.stale = discovery.NewSet(s.roots, cols), s.now(), false
	return s.set, nil
}

// Invalidate makes the next Set rescan, and read path again even if its
// size and modification time look unchanged.
func (s *Scanner) Invalidate(path string) {
	s.cache.forget(path)
	s.mu.Lock()
	s.stale = true
	s.mu.Unlock()
}

// Loader returns a Loader that shares the Scanner's schema options and file
// cache.
func (s *Scanner) Loader() *discovery.Loader {
	l := s.loader
	return &l
}

// statCache is a discovery.FileCache that trusts a file whose size and
// modification time are unchanged.
type statCache struct {
	mu    sync.Mutex // guards fields below
	files map[string]statEntry
}

type statEntry struct {
	size  int64
	mtime time.Time
	kind  discovery.Kind
	facts *discovery.Facts
}

func newStatCache() *statCache { return &statCache{files: make(map[string]statEntry)} }

func (c *statCache) forget(path string) {
	c.mu.Lock()
	delete(c.files, path)
	c.mu.Unlock()
}

func (c *statCache) Lookup(path string, fi fs.FileInfo, k discovery.Kind) (*discovery.Facts, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.files[path]
	if !ok || e.kind != k || e.size != fi.Size() || !e.mtime.Equal(fi.ModTime()) {
		return nil, false
	}
	return e.facts, true
}

func (c *statCache) Analyze(path string, fi fs.FileInfo, src []byte, k discovery.Kind, analyze func() *discovery.Facts) *discovery.Facts {
	f := analyze()
	c.mu.Lock()
	c.files[path] = statEntry{size: fi.Size(), mtime: fi.ModTime(), kind: k, facts: f}
	c.mu.Unlock()
	return f
}
