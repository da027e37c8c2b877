package analysis

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/schema"
)

// ErrNoView is returned by Views.WithArguments when the project's View was
// not asked for first.
var ErrNoView = errors.New("analysis: no view of the project")

// Views supplies the Workspace with the catalog Views it lays the open
// buffers over: Local reads the roots in process; the daemon answers from
// its own catalog. A View is immutable and shared: callers must not modify
// it or the collections it holds.
type Views interface {
	// View returns the View of a project directory ("" for none: the user
	// and bundled roots only), as fresh as the source keeps it.
	View(ctx context.Context, project string) (*catalog.View, error)
	// WithArguments returns a View of the project in which cols (working
	// copies in no root) come ahead of every root; see
	// catalog.Catalog.WithArguments. The project's View must have been
	// asked for first.
	WithArguments(ctx context.Context, project string, cols []*discovery.Collection) (*catalog.View, error)
	// Changed tells the source that the file at path changed on disk (the
	// editor saved it).
	Changed(path string)
}

// Local is the Views of a language server without a daemon: one
// catalog.Catalog read in process. A project is added to it on its first
// View. A saved file has its collection read again before the next View;
// when a project's roots were last read whole more than MaxAge ago (for
// changes made outside the editor), they are read again first. The
// Loader's stat cache makes reading again cost a stat per unchanged file.
type Local struct {
	cat    *catalog.Catalog
	cache  *statCache
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex    // guards fields below
	running chan struct{} // closed when the change under way is applied; nil when none is
	pending []catalog.Change
	read    map[string]time.Time // by project key: when its roots were last read whole
}

// LocalOptions configure a Local.
type LocalOptions struct {
	// Home is the user's home directory ("" for none); Bundled the
	// bundled roots.
	Home    string
	Bundled []string
	// Schema tunes front matter validation.
	Schema schema.Options
	// MaxAge is how long a project's roots are trusted without a save, for
	// changes made outside the editor; 2s when zero.
	MaxAge time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// NewLocal returns a Local; it reads nothing until a View is asked for.
func NewLocal(opts LocalOptions) *Local {
	if opts.MaxAge <= 0 {
		opts.MaxAge = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	cache := newStatCache()
	cat := catalog.New(catalog.Options{Loader: &discovery.Loader{Schema: opts.Schema, Cache: cache},
		Home: opts.Home, Bundled: opts.Bundled})
	return &Local{cat: cat, cache: cache, maxAge: opts.MaxAge, now: opts.Now, read: map[string]time.Time{}}
}

var _ Views = (*Local)(nil)

// View returns the project's View after applying the saves not yet read
// and, when its roots are older than MaxAge, reading them again. One
// change is applied at a time; callers that come meanwhile wait for it
// and look again.
func (l *Local) View(ctx context.Context, project string) (*catalog.View, error) {
	key := l.cat.ProjectKey(project)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		l.mu.Lock()
		if ch := l.running; ch != nil {
			l.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		read, known := l.read[key]
		stale := known && l.now().Sub(read) >= l.maxAge
		if known && !stale && len(l.pending) == 0 {
			l.mu.Unlock()
			if v, ok := l.cat.State().View(key); ok {
				return v, nil
			}
			l.mu.Lock()
			delete(l.read, key) // not registered after all: add it below
			l.mu.Unlock()
			continue
		}
		done := make(chan struct{})
		l.running = done
		changes := l.pending
		l.pending = nil
		l.mu.Unlock()

		if !known {
			l.cat.AddProject(key)
		} else if stale {
			changes = append(changes, l.whole(key)...)
		}
		if len(changes) > 0 {
			l.cat.Update(changes...)
		}

		l.mu.Lock()
		if !known || stale {
			l.read[key] = l.now()
		}
		l.running = nil
		close(done)
		l.mu.Unlock()
		if v, ok := l.cat.State().View(key); ok {
			return v, nil
		}
	}
}

// whole lists the changes that read a project's roots and lock files
// again.
func (l *Local) whole(key string) []catalog.Change {
	v, ok := l.cat.State().View(key)
	if !ok {
		return nil
	}
	var out []catalog.Change
	for _, r := range v.Set.Roots {
		out = append(out, catalog.Change{Root: r.Path})
	}
	for _, lp := range v.LockFiles() {
		out = append(out, catalog.Change{Lock: lp})
	}
	return out
}

// WithArguments implements Views.
func (l *Local) WithArguments(ctx context.Context, project string, cols []*discovery.Collection) (*catalog.View, error) {
	v, ok := l.cat.WithArguments(project, cols)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoView, catalog.Label(project))
	}
	return v, nil
}

// Changed records that the collection holding path (or the lock file at
// path) is to be read again before the next View. It does no I/O.
func (l *Local) Changed(path string) {
	l.cache.forget(path)
	ch, ok := changeOf(l.cat.State(), path)
	if !ok {
		return
	}
	l.mu.Lock()
	l.pending = append(l.pending, ch)
	l.mu.Unlock()
}

// changeOf returns what to read again when the file at path changed: the
// collection directory that holds it (whatever path it is named by), the
// lock file it is, or the directory of a root it lies in.
func changeOf(st *catalog.State, path string) (catalog.Change, bool) {
	path = filepath.Clean(path)
	for _, v := range st.Views() {
		if c := v.Set.Owner(path); c != nil && c.Root.Kind != discovery.RootArgument {
			return catalog.Change{Root: c.Root.Path, Dir: c.Dir}, true
		}
		for _, lp := range v.LockFiles() {
			if lp == path {
				return catalog.Change{Lock: path}, true
			}
		}
	}
	for _, ri := range st.Roots() {
		rel, err := filepath.Rel(ri.Root.Path, path)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			continue
		}
		first, _, _ := strings.Cut(rel, string(filepath.Separator))
		return catalog.Change{Root: ri.Root.Path, Dir: filepath.Join(ri.Root.Path, first)}, true
	}
	return catalog.Change{}, false
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

// forget makes the next load read path again, whatever its size and
// modification time say.
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
