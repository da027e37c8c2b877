package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/internal/pmap"
	"github.com/amplidex/amplidex/discovery/lock"
)

// Options configure a Catalog.
type Options struct {
	// Loader reads collections; its FileCache, when set, decides which
	// files are read again.
	Loader *discovery.Loader
	// Home is the user's home directory, whose .amplifier/collections is
	// the user root; "" for none.
	Home string
	// Bundled are the bundled roots, lowest precedence.
	Bundled []string
	// Workers bounds how many collections load at once; GOMAXPROCS when 0.
	Workers int
	// Version is the version of the empty catalog: the first State is one
	// above it. A daemon that logs changes by version starts where its
	// last life stopped.
	Version uint64
	// Prior, when set, gives the cross-reference results an earlier run
	// kept of the View of a key (View.Checks), or nil: a project's first
	// View takes them instead of checking its collections again when its
	// Inventory is the same. Prior must return nil unless every file the
	// View's collections hold has the contents it had then (the daemon
	// answers only while it has read no file again).
	Prior func(key string) *Checks
}

// Change is one thing to read again: a collection directory directly in a
// root (Root and Dir), a whole root (Root alone: it appeared, vanished or
// lost events), or a lock file (Lock).
type Change struct {
	Root string
	Dir  string
	Lock string
}

// Catalog is the incremental model of the roots. Make one with New.
type Catalog struct {
	home    string
	workers int
	prior   func(key string) *Checks
	seq     atomic.Uint64 // numbers loads in the order they start
	state   atomic.Pointer[State]

	// mu guards fields below: the bookkeeping of what the roots and lock
	// files hold. It is held for work in proportion to one change; never
	// while a file is read or stat()ed, a View is built or checked, or
	// anything is waited for.
	mu       sync.Mutex
	loader   *discovery.Loader
	names    *discovery.Loader // loader reading names only (see namesLoader), made for namesOf
	namesOf  *discovery.Loader
	bundled  []string
	roots    map[string]*rootState // by path
	locks    map[string]*lockEntry // by path
	projects map[string]*project   // by project directory; "" is no project
	version  uint64                // of the last State published
	gen      uint64                // of the last batch recorded
	log      []*batch              // the batches some project's View may still need, oldest first
	inflight int                   // loads started and not yet recorded
}

// rootState is one root and the collections last loaded from it.
type rootState struct {
	root discovery.Root
	// cols holds, by collection directory, what each directory held when
	// last loaded. It is persistent: a View built from it holds a version
	// that later changes do not touch.
	cols pmap.Map[string, entry]
	// n counts the entries of cols that hold a collection; empty lists
	// the directories whose entry holds none.
	n     int
	empty map[string]bool
	users int // projects whose views hold the root
	// failed says why the last listing of the whole root failed ("" when
	// it listed): its entries are then the last good ones. degraded holds,
	// by directory, why the last load of a collection was incomplete: its
	// entry is the last complete load when there was one.
	failed   string
	degraded map[string]string
	listed   bool // some listing of the whole root succeeded
}

func newRootState(r discovery.Root) *rootState {
	return &rootState{root: r, empty: map[string]bool{}, degraded: map[string]string{}}
}

// set records what directory dir holds.
func (rs *rootState) set(dir string, e entry) {
	if old, ok := rs.cols.Get(dir); ok && old.c != nil {
		rs.n--
	}
	rs.cols = rs.cols.Set(dir, e)
	if e.c != nil {
		rs.n++
		delete(rs.empty, dir)
	} else {
		rs.empty[dir] = true
	}
}

// entry is the collection last loaded from a directory, nil when the
// directory holds none (kept while older loads may still apply), and the
// number of the load that found it.
type entry struct {
	c   *discovery.Collection
	seq uint64
}

// lockState is one lock file as read once. It is immutable: a read
// makes a new one.
type lockState struct {
	path  string
	lock  *lock.File // nil when unreadable or corrupt
	diags []diag.Diagnostic
}

// lockEntry is the bookkeeping of one lock file: its last good read, the
// number of the load that made it, and the projects that use it.
type lockEntry struct {
	state  *lockState
	seq    uint64
	users  int
	failed string // why the last read failed for want of resources; "" when it read
}

// project is one registered project.
type project struct {
	key string
	// ready is closed once AddProject has done its work: the View is
	// published, or the project was removed meanwhile.
	ready chan struct{}

	// build serialises the making of this project's Views; it guards
	// view and gen, and is taken before c.mu, never after.
	build sync.Mutex
	view  *View  // the last View made; nil before the first
	gen   uint64 // the batch view is up to date with

	// Guarded by the Catalog's mu: published is set once a View of the
	// project is in the State; applied is the last batch the project's
	// builder has taken from the log (the log keeps what comes after).
	published bool
	applied   uint64
}

// New returns an empty Catalog: no root is read until a project (or no
// project, "") is added.
func New(opts Options) *Catalog {
	if opts.Loader == nil {
		opts.Loader = &discovery.Loader{}
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	c := &Catalog{home: opts.Home, workers: opts.Workers, prior: opts.Prior, loader: opts.Loader, bundled: opts.Bundled,
		roots: map[string]*rootState{}, locks: map[string]*lockEntry{}, projects: map[string]*project{}, version: opts.Version}
	c.state.Store(&State{Version: opts.Version, views: map[string]*View{}})
	return c
}

// State returns the latest published State.
func (c *Catalog) State() *State { return c.state.Load() }

// ProjectKey returns the key a project directory is registered under,
// resolved with the catalog's own home and bundled roots: the cleaned
// directory, or "" when it is empty or its collections directory is the
// user's (the home directory is no project). A key made by ScopeKey is
// returned as it is.
func (c *Catalog) ProjectKey(dir string) string {
	if strings.Contains(dir, keySep) {
		return dir
	}
	return projectDir(dir, c.home)
}

// projectDir is the cleaned project directory, or "" when it is empty or
// its collections directory is home's user root.
func projectDir(dir, home string) string {
	if dir == "" {
		return ""
	}
	dir = filepath.Clean(dir)
	if home != "" && filepath.Join(dir, ".amplifier", "collections") == filepath.Join(home, ".amplifier", "collections") {
		return ""
	}
	return dir
}

// Scope is what a View is resolved with when it is not the catalog's own
// configuration: a project directory ("" for none), the home directory
// whose user root and lock file it holds ("" for none), and the bundled
// roots. One daemon serves clients whose roots differ (another
// AMPLIDEX_BUNDLED, another configuration); each has the View of its own
// Scope.
type Scope struct {
	Project string
	Home    string
	Bundled []string
	// Collection, when set, is a collection directory in no root that
	// the client stands in: the View holds it ahead of every root, in a
	// root of its own (kind discovery.RootArgument, whose path is the
	// collection directory itself).
	Collection string
}

// keySep joins the parts of a Scope's key; no path holds it.
const keySep = "\x00"

// ScopeKey returns the key a View of s is registered under, and which
// AddProject, RemoveProject, WithArguments and State.View take: the
// project directory, home, collection and bundled roots joined, so that
// it differs from every ProjectKey and from the key of every other Scope.
func (c *Catalog) ScopeKey(s Scope) string {
	return strings.Join(append([]string{projectDir(s.Project, s.Home), s.Home, s.Collection}, s.Bundled...), keySep)
}

// KeyScope returns the Scope of a key: the one ScopeKey encoded, or, for
// a ProjectKey, the project with the catalog's own home and bundled
// roots.
func (c *Catalog) KeyScope(key string) Scope {
	if s, ok := ParseScopeKey(key); ok {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return Scope{Project: key, Home: c.home, Bundled: slices.Clone(c.bundled)}
}

// ParseScopeKey returns the Scope a key made by ScopeKey encodes, and
// false for any other key.
func ParseScopeKey(key string) (Scope, bool) {
	if !IsScopeKey(key) {
		return Scope{}, false
	}
	parts := strings.Split(key, keySep)
	s := Scope{Project: parts[0], Home: parts[1]}
	if len(parts) > 2 {
		s.Collection = parts[2]
	}
	if len(parts) > 3 {
		s.Bundled = parts[3:]
	}
	return s, true
}

// IsScopeKey reports whether key was made by ScopeKey: its View does not
// follow the catalog's own bundled roots.
func IsScopeKey(key string) bool { return strings.Contains(key, keySep) }

// Label returns a key as people read it, in logs and messages: the
// project directory of a ProjectKey ("no project" for ""), and a Scope
// as its String says. A key is never shown as it is: ScopeKey joins its
// parts with NUL bytes.
func Label(key string) string {
	if s, ok := ParseScopeKey(key); ok {
		return s.String()
	}
	if key == "" {
		return "no project"
	}
	return key
}

// String describes s for people: the project (or "no project"), then the
// home directory and the bundled roots a client named.
func (s Scope) String() string {
	var b strings.Builder
	if s.Project == "" {
		b.WriteString("no project")
	} else {
		b.WriteString(s.Project)
	}
	b.WriteString(" with a client's roots (home ")
	if s.Home == "" {
		b.WriteString("none")
	} else {
		b.WriteString(s.Home)
	}
	b.WriteString(", bundled ")
	if len(s.Bundled) == 0 {
		b.WriteString("none")
	} else {
		b.WriteString(strings.Join(s.Bundled, ", "))
	}
	if s.Collection != "" {
		b.WriteString(", the collection ")
		b.WriteString(s.Collection)
	}
	b.WriteString(")")
	return b.String()
}

// RootsOf returns the roots of the View of key, in precedence order.
func (c *Catalog) RootsOf(key string) []discovery.Root {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rootsOf(key)
}

// rootsOf returns the roots of the View of key in precedence order: a
// ProjectKey's with the catalog's own home and bundled roots, a
// ScopeKey's with its own. c.mu is held.
func (c *Catalog) rootsOf(key string) []discovery.Root {
	if s, ok := ParseScopeKey(key); ok {
		return s.Roots()
	}
	return discovery.Roots(key, c.home, c.bundled)
}

// Roots returns the roots of s in precedence order: the collection it
// stands in, if any, then the project's, the user's and the bundled ones.
func (s Scope) Roots() []discovery.Root {
	roots := discovery.Roots(s.Project, s.Home, s.Bundled)
	if s.Collection == "" {
		return roots
	}
	return append([]discovery.Root{{Kind: discovery.RootArgument, Path: filepath.Clean(s.Collection)}}, roots...)
}

// lockPaths returns the lock files of the roots: the project's and the
// user's.
func lockPaths(roots []discovery.Root) []string {
	var out []string
	for _, r := range roots {
		if lp := discovery.LockPath(r); lp != "" {
			out = append(out, lp)
		}
	}
	return out
}

// oneCollection returns the candidates of a root that is one collection
// (kind discovery.RootArgument): the directory itself, when it is one; none
// when it does not exist.
func oneCollection(dir string) ([]string, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("scan collection %s: %w", dir, err)
	case !fi.IsDir():
		return nil, nil
	}
	return []string{dir}, nil
}

// loaded is the result of reading one collection directory.
type loaded struct {
	root string
	dir  string
	c    *discovery.Collection
}

// scanned is the result of reading a whole root: every candidate
// directory and its collection, or why the root could not be listed.
type scanned struct {
	root   string
	dirs   []loaded
	failed string
}

// readLock is the result of reading one lock file.
type readLock struct {
	path   string
	state  *lockState
	failed string // the read failed for want of resources: state is nil
}

// read does the I/O of a change, outside every lock: it loads the
// collection directories, scans the roots and reads the lock files.
func (c *Catalog) read(loader *discovery.Loader, kinds map[string]discovery.Root, dirs []loaded, roots []string, locks []string) ([]loaded, []scanned, []readLock) {
	var jobs []*loaded
	scans := make([]scanned, 0, len(roots))
	for _, r := range roots {
		candidates, err := loader.CandidateDirs(r)
		if kinds[r].Kind == discovery.RootArgument {
			candidates, err = oneCollection(r)
		}
		s := scanned{root: r, dirs: make([]loaded, len(candidates))}
		if err != nil {
			s.failed = err.Error()
		}
		for i, d := range candidates {
			s.dirs[i] = loaded{root: r, dir: d}
		}
		scans = append(scans, s)
	}
	for i := range scans {
		for j := range scans[i].dirs {
			jobs = append(jobs, &scans[i].dirs[j])
		}
	}
	for i := range dirs {
		jobs = append(jobs, &dirs[i])
	}
	each := func(do func(j *loaded)) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(c.workers, len(jobs)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1)) - 1; i < len(jobs); i = int(next.Add(1)) - 1 {
					do(jobs[i])
				}
			}()
		}
		wg.Wait()
	}
	each(func(j *loaded) { j.c = loader.LoadCandidate(kinds[j.root], j.dir) })
	// Collections of brief Facts are kept for long: once all are read,
	// each gets what it keeps in a few objects of its own, made together
	// rather than among the garbage of reading (see Collection.Keep).
	each(func(j *loaded) {
		if j.c == nil {
			return
		}
		if loader.Details != nil {
			j.c = j.c.Keep()
		}
		if j.c.Dir == j.dir {
			// The collection's own copy: the catalog keeps the key for
			// as long as the collection.
			j.dir = j.c.Dir
		}
	})
	var rl []readLock
	for _, p := range locks {
		l, diags, err := lock.Read(p)
		if err != nil && discovery.IsTransient(err) {
			rl = append(rl, readLock{path: p, failed: err.Error()})
			continue
		}
		rl = append(rl, readLock{path: p, state: &lockState{path: p, lock: l, diags: diags}})
	}
	return dirs, scans, rl
}

// Update reads what changed again and publishes the State it makes. A
// directory or root the catalog does not hold is ignored. A directory,
// root or lock file that could not be read keeps what it held before and
// is named in Delta.Retry.
func (c *Catalog) Update(changes ...Change) (*State, *Delta) {
	c.mu.Lock()
	loader := c.loader
	kinds := map[string]discovery.Root{}
	var dirs []loaded
	var roots, locks []string
	seen := map[Change]bool{}
	for _, ch := range changes {
		if seen[ch] {
			continue
		}
		seen[ch] = true
		switch {
		case ch.Lock != "":
			if c.locks[ch.Lock] != nil {
				locks = append(locks, ch.Lock)
			}
		case c.roots[ch.Root] == nil:
		case ch.Dir == "" || c.roots[ch.Root].root.Kind == discovery.RootArgument:
			// A collection that is a root of its own is read whole.
			roots = append(roots, ch.Root)
		default:
			dirs = append(dirs, loaded{root: ch.Root, dir: ch.Dir})
		}
		if rs := c.roots[ch.Root]; rs != nil {
			kinds[ch.Root] = rs.root
		}
	}
	// A root scanned whole need not load its directories one by one.
	dirs = slices.DeleteFunc(dirs, func(l loaded) bool { return slices.Contains(roots, l.root) })
	seq := c.seq.Add(1)
	c.inflight++
	c.mu.Unlock()

	ld, sc, rl := c.read(loader, kinds, dirs, roots, locks)

	c.mu.Lock()
	c.inflight--
	b := c.newBatch(seq)
	for _, l := range ld {
		b.put(l.root, l.dir, l.c)
	}
	for _, s := range sc {
		b.rescan(s)
	}
	for _, l := range rl {
		b.lock(l)
	}
	affected := c.record(b)
	c.mu.Unlock()
	return c.advance(b, affected, nil)
}

// record logs b as the next batch and returns the projects with a
// published View that it touches, in key order: those whose Views must
// take it in before the change that made it returns. c.mu is held.
func (c *Catalog) record(b *batch) []*project {
	if c.inflight == 0 {
		// No older load can still apply: forget the directories found
		// empty.
		for _, rs := range c.roots {
			for dir := range rs.empty {
				rs.cols = rs.cols.Delete(dir)
			}
			clear(rs.empty)
		}
	}
	last := c.gen
	c.gen++
	b.gen, b.version = c.gen, c.version
	c.log = append(c.log, b)
	var out []*project
	for _, p := range c.projects {
		switch {
		case b.touches(c.rootsOf(p.key)):
			if p.published {
				out = append(out, p)
			}
		case p.applied == last:
			// Nothing in b for it: its builder need not take b.
			p.applied = c.gen
		}
	}
	c.trim()
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// advance brings the Views of ps up to date with the log (at least up to
// b), publishes each, and returns the latest State and what b did: its
// files, and what changed in the Views this call made. fresh, when not
// nil, is a project registered by this call, whose first View is built.
func (c *Catalog) advance(b *batch, ps []*project, fresh *project) (*State, *Delta) {
	d := &Delta{Loaded: b.loaded, Gone: b.gone, Retry: b.retry, Views: map[string]ViewDelta{}}
	sort.Strings(d.Loaded)
	sort.Strings(d.Gone)
	if fresh != nil {
		ps = append(ps, fresh)
	}
	for _, p := range ps {
		vd := c.build(p)
		if p != fresh && (len(vd.Dirs) > 0 || len(vd.Locks) > 0) {
			d.Views[p.key] = vd
		}
	}
	c.mu.Lock()
	st := c.state.Load()
	if c.version == b.version {
		// Nothing was published since b was recorded: b still gets a
		// version of its own.
		st = c.publish(nil)
	}
	c.mu.Unlock()
	d.Version = st.Version
	return st, d
}

// build brings p's View up to date with every batch logged and publishes
// it, and returns what changed in it. The View is made outside c.mu:
// under it, build only takes the batches (or, for a first View or a
// rebuild, what the roots hold) and, once the View is made, publishes it
// if no batch landed meanwhile; else it takes those in too.
func (c *Catalog) build(p *project) ViewDelta {
	p.build.Lock()
	defer p.build.Unlock()
	var vd ViewDelta
	for {
		c.mu.Lock()
		if c.projects[p.key] != p {
			c.mu.Unlock()
			return vd // removed meanwhile
		}
		if p.view != nil && p.gen == c.gen {
			if c.state.Load().views[p.key] != p.view {
				c.publishView(p)
			}
			c.mu.Unlock()
			return vd
		}
		target := c.gen
		var snap *snapshot
		var todo []*batch
		if p.view == nil || c.rebuildAfter(p.gen) {
			snap = c.snapshot(p.key)
		} else {
			todo = c.batchesAfter(p.gen)
		}
		p.applied = target
		c.trim()
		workers := c.workers
		c.mu.Unlock()

		if snap != nil {
			rebuilt := p.view != nil
			var prior *Checks
			if !rebuilt && c.prior != nil {
				prior = c.prior(p.key)
			}
			p.view = buildView(p.key, snap, workers, prior)
			if rebuilt {
				vd = mergeDelta(vd, p.view.everything())
			}
		} else {
			for _, b := range todo {
				var d ViewDelta
				p.view, d = p.view.apply(b)
				vd = mergeDelta(vd, d)
			}
		}
		p.gen = target
	}
}

// publishView puts p's View in a new State. c.mu and p.build are held.
func (c *Catalog) publishView(p *project) {
	c.publish(func(views map[string]*View, version uint64) {
		if p.view.Version == 0 {
			// Not yet seen by anyone: the version it is first published at.
			p.view.Version = version
		}
		views[p.key] = p.view
	})
	p.published = true
}

// publish makes and stores the next State: the last one's Views, changed
// by edit when not nil. c.mu is held.
func (c *Catalog) publish(edit func(views map[string]*View, version uint64)) *State {
	c.version++
	old := c.state.Load()
	views := make(map[string]*View, len(c.projects))
	for k, v := range old.views {
		if c.projects[k] != nil {
			views[k] = v
		}
	}
	if edit != nil {
		edit(views, c.version)
	}
	st := &State{Version: c.version, views: views, roots: c.rootInfos()}
	c.state.Store(st)
	return st
}

// rebuildAfter reports whether a batch after gen rebuilds every View.
// c.mu is held.
func (c *Catalog) rebuildAfter(gen uint64) bool {
	for _, b := range c.batchesAfter(gen) {
		if b.rebuild {
			return true
		}
	}
	return false
}

// batchesAfter returns the logged batches after gen, oldest first. c.mu
// is held.
func (c *Catalog) batchesAfter(gen uint64) []*batch {
	i := sort.Search(len(c.log), func(i int) bool { return c.log[i].gen > gen })
	return slices.Clone(c.log[i:])
}

// trim drops the batches that every project's builder has taken. c.mu is
// held.
func (c *Catalog) trim() {
	low := c.gen
	for _, p := range c.projects {
		low = min(low, p.applied)
	}
	i := sort.Search(len(c.log), func(i int) bool { return c.log[i].gen > low })
	if i > 0 {
		c.log = slices.Delete(c.log, 0, i)
	}
}

// snapshot returns what a View of project is built from, as the roots
// and lock files hold it now. c.mu is held.
func (c *Catalog) snapshot(project string) *snapshot {
	s := &snapshot{roots: c.rootsOf(project), locks: map[string]*lockState{}}
	s.cols = make([]pmap.Map[string, entry], len(s.roots))
	for i, r := range s.roots {
		if rs := c.roots[r.Path]; rs != nil {
			s.cols[i] = rs.cols
		}
	}
	for _, lp := range lockPaths(s.roots) {
		if le := c.locks[lp]; le != nil {
			s.locks[lp] = le.state
		}
	}
	return s
}

// snapshot is what a View is built from: its roots in precedence order,
// what each holds, and the lock files as last read.
type snapshot struct {
	roots []discovery.Root
	cols  []pmap.Map[string, entry]
	locks map[string]*lockState
}

// batch is what one change did to the roots and lock files, recorded in
// the log for every project's View to take in, in order. It is immutable
// once recorded.
type batch struct {
	c       *Catalog // only while it is made
	seq     uint64
	gen     uint64
	version uint64                             // of the last State published when it was recorded
	removed map[string][]*discovery.Collection // by root path
	added   map[string][]*discovery.Collection
	locks   map[string]*lockState // lock files read again, as read
	// rebuild makes every View be built again from the roots (the
	// configuration changed).
	rebuild bool
	loaded  []string
	gone    []string
	retry   []Change
}

func (c *Catalog) newBatch(seq uint64) *batch {
	return &batch{c: c, seq: seq, removed: map[string][]*discovery.Collection{},
		added: map[string][]*discovery.Collection{}, locks: map[string]*lockState{}}
}

// touches reports whether the batch changed one of roots or their lock
// files, or rebuilds every View.
func (b *batch) touches(roots []discovery.Root) bool {
	if b.rebuild {
		return true
	}
	for _, r := range roots {
		if len(b.removed[r.Path])+len(b.added[r.Path]) > 0 {
			return true
		}
		if lp := discovery.LockPath(r); lp != "" && b.locks[lp] != nil {
			return true
		}
	}
	return false
}

// put records that the directory dir of root holds col (nil: none), unless
// a load that started later has already been recorded. A load that was
// incomplete (col.Degraded) does not replace a complete one: the
// directory is named for a retry.
func (b *batch) put(root, dir string, col *discovery.Collection) {
	rs := b.c.roots[root]
	if rs == nil {
		return
	}
	old, ok := rs.cols.Get(dir)
	if ok && old.seq > b.seq {
		return
	}
	if col != nil && col.Degraded != "" {
		rs.degraded[dir] = col.Degraded
		b.retry = append(b.retry, Change{Root: root, Dir: dir})
		if old.c != nil && old.c.Degraded == "" {
			return // the last complete load stands
		}
	} else {
		delete(rs.degraded, dir)
	}
	if old.c == nil && col == nil {
		// Found empty: recorded even when nothing was known of dir, so
		// that an older read still under way (a root's first, say,
		// which loaded dir before it went) cannot put back what this
		// later one found gone. record forgets it once no read is in
		// flight.
		rs.set(dir, entry{seq: b.seq})
		return
	}
	rs.set(dir, entry{c: col, seq: b.seq})
	if old.c == col {
		return
	}
	if old.c != nil {
		b.removed[root] = append(b.removed[root], old.c)
		b.gone = append(b.gone, goneFiles(old.c, col)...)
	}
	if col != nil {
		b.added[root] = append(b.added[root], col)
		for p := range col.Facts {
			b.loaded = append(b.loaded, p)
		}
	}
}

// rescan records a whole root as read: every directory found, and the
// absence of every other one. A root that could not be listed keeps
// what it held, and is named for a retry.
func (b *batch) rescan(s scanned) {
	rs := b.c.roots[s.root]
	if rs == nil {
		return
	}
	rs.failed = s.failed
	if s.failed != "" {
		b.retry = append(b.retry, Change{Root: s.root})
		return
	}
	rs.listed = true
	found := map[string]bool{}
	for _, l := range s.dirs {
		found[l.dir] = true
		b.put(s.root, l.dir, l.c)
	}
	for dir := range rs.cols.All() {
		if !found[dir] {
			b.put(s.root, dir, nil)
			delete(rs.degraded, dir)
		}
	}
}

// lock records a lock file as read, unless a later read has been
// recorded. A read that failed for want of resources keeps the last good
// one, and is named for a retry.
func (b *batch) lock(l readLock) {
	le := b.c.locks[l.path]
	if le == nil || le.seq > b.seq {
		return
	}
	le.failed = l.failed
	if l.state == nil {
		b.retry = append(b.retry, Change{Lock: l.path})
		return
	}
	le.state, le.seq = l.state, b.seq
	b.locks[l.path] = l.state
}

// goneFiles returns the files old read that col (nil: none) does not.
func goneFiles(old, col *discovery.Collection) []string {
	var out []string
	for p := range old.Facts {
		if col == nil || col.Facts[p] == nil {
			out = append(out, p)
		}
	}
	return out
}

// rootInfos describes every root held. c.mu is held.
func (c *Catalog) rootInfos() []RootInfo {
	out := make([]RootInfo, 0, len(c.roots))
	for _, rs := range c.roots {
		ri := RootInfo{Root: rs.root, Collections: rs.n, Failed: rs.failed, Unlisted: !rs.listed}
		for dir, why := range rs.degraded {
			ri.Degraded = append(ri.Degraded, DegradedDir{Dir: dir, Why: why})
		}
		sort.Slice(ri.Degraded, func(i, j int) bool { return ri.Degraded[i].Dir < ri.Degraded[j].Dir })
		out = append(out, ri)
	}
	order := map[discovery.RootKind]int{discovery.RootProject: 0, discovery.RootUser: 1, discovery.RootBundled: 2}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Root.Kind != out[j].Root.Kind {
			return order[out[i].Root.Kind] < order[out[j].Root.Kind]
		}
		return out[i].Root.Path < out[j].Root.Path
	})
	return out
}

// AddProject registers a project directory ("" for no project: the user
// and bundled roots only), reading the roots and lock files it brings that
// the catalog does not hold yet, and publishes a State with its View. A
// project registered already is left as it is (the Delta is then nil);
// a caller that registers one being registered waits for that, without
// holding anything. When the project is removed before its View is made,
// the State returned has none.
func (c *Catalog) AddProject(dir string) (*State, *Delta) {
	key := c.ProjectKey(dir)
	c.mu.Lock()
	if p := c.projects[key]; p != nil {
		c.mu.Unlock()
		<-p.ready
		return c.State(), nil
	}
	p := &project{key: key, ready: make(chan struct{}), applied: c.gen}
	c.projects[key] = p
	defer close(p.ready)
	var scan []string
	kinds := map[string]discovery.Root{}
	roots := c.rootsOf(key)
	for _, r := range roots {
		rs := c.roots[r.Path]
		if rs == nil {
			rs = newRootState(r)
			c.roots[r.Path] = rs
		}
		if !rs.listed && rs.failed == "" {
			// New, or another registration's read of it has not been
			// recorded yet: this View must not be published with the
			// root as it was before any read (empty), so it reads the
			// root too.
			scan = append(scan, r.Path)
		}
		kinds[r.Path] = rs.root
		rs.users++
	}
	var locks []string
	for _, lp := range lockPaths(roots) {
		le := c.locks[lp]
		if le == nil {
			le = &lockEntry{state: &lockState{path: lp}}
			c.locks[lp] = le
			locks = append(locks, lp)
		}
		le.users++
	}
	loader := c.loader
	seq := c.seq.Add(1)
	c.inflight++
	c.mu.Unlock()

	_, sc, rl := c.read(loader, kinds, nil, scan, locks)

	c.mu.Lock()
	c.inflight--
	b := c.newBatch(seq)
	for _, s := range sc {
		b.rescan(s)
	}
	for _, l := range rl {
		b.lock(l)
	}
	affected := c.record(b)
	c.mu.Unlock()
	return c.advance(b, affected, p)
}

// RemoveProject forgets a project: its View, and the roots and lock files
// no other project uses. It returns the State without it and what that
// removed (Delta.Gone names the files no root holds any more). It never
// waits: a registration of the project still under way publishes
// nothing.
func (c *Catalog) RemoveProject(dir string) (*State, *Delta) {
	key := c.ProjectKey(dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	d := &Delta{Views: map[string]ViewDelta{}}
	if p := c.projects[key]; p != nil {
		delete(c.projects, key)
		roots := c.rootsOf(key)
		for _, r := range roots {
			if rs := c.roots[r.Path]; rs != nil {
				if rs.users--; rs.users == 0 {
					for _, e := range rs.cols.All() {
						if e.c != nil {
							d.Gone = append(d.Gone, goneFiles(e.c, nil)...)
						}
					}
					delete(c.roots, r.Path)
				}
			}
		}
		for _, lp := range lockPaths(roots) {
			if le := c.locks[lp]; le != nil {
				if le.users--; le.users == 0 {
					delete(c.locks, lp)
				}
			}
		}
		c.trim()
	}
	sort.Strings(d.Gone)
	st := c.publish(nil)
	d.Version = st.Version
	return st, d
}

// Projects returns the registered project directories, sorted ("" for no
// project comes first).
func (c *Catalog) Projects() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.projects))
	for k := range c.projects {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Roots returns every root the catalog holds, sorted by path: those of
// the published Views and those a change is reading for a View not yet
// published (a project being registered, a bundled root being added). It
// takes the catalog's lock, briefly.
func (c *Catalog) Roots() []discovery.Root {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]discovery.Root, 0, len(c.roots))
	for _, rs := range c.roots {
		out = append(out, rs.root)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Reconfigure changes the bundled roots and the loader, reads what that
// needs (every root again when the loader changed, else only the roots
// new to the catalog), builds every View again and publishes the State.
// The Views are built outside the catalog's lock, each under its
// project's own.
func (c *Catalog) Reconfigure(bundled []string, loader *discovery.Loader) (*State, *Delta) {
	c.mu.Lock()
	reread := loader != nil && loader != c.loader
	if loader != nil {
		c.loader = loader
	}
	c.bundled = slices.Clone(bundled)
	want := map[string]discovery.Root{}
	for key := range c.projects {
		for _, r := range c.rootsOf(key) {
			want[r.Path] = r
		}
	}
	var gone []string
	for path, rs := range c.roots {
		if _, ok := want[path]; !ok {
			for _, e := range rs.cols.All() {
				if e.c != nil {
					gone = append(gone, goneFiles(e.c, nil)...)
				}
			}
			delete(c.roots, path)
		}
	}
	var scan []string
	kinds := map[string]discovery.Root{}
	for path, r := range want {
		rs := c.roots[path]
		if rs == nil {
			rs = newRootState(r)
			c.roots[path] = rs
			scan = append(scan, path)
		} else if reread {
			scan = append(scan, path)
		}
		rs.users = 0
		kinds[path] = rs.root
	}
	for key := range c.projects {
		for _, r := range c.rootsOf(key) {
			c.roots[r.Path].users++
		}
	}
	seq := c.seq.Add(1)
	c.inflight++
	loaderNow := c.loader
	c.mu.Unlock()

	_, sc, _ := c.read(loaderNow, kinds, nil, scan, nil)

	c.mu.Lock()
	c.inflight--
	b := c.newBatch(seq)
	b.rebuild = true
	b.gone = gone
	for _, s := range sc {
		b.rescan(s)
	}
	affected := c.record(b)
	c.mu.Unlock()
	return c.advance(b, affected, nil)
}

// mergeDelta returns the union of two ViewDeltas, sorted.
func mergeDelta(a, b ViewDelta) ViewDelta {
	if len(a.Dirs)+len(a.Locks) == 0 {
		return b
	}
	if len(b.Dirs)+len(b.Locks) == 0 {
		return a
	}
	out := ViewDelta{Dirs: append(slices.Clone(a.Dirs), b.Dirs...), Locks: append(slices.Clone(a.Locks), b.Locks...)}
	slices.Sort(out.Dirs)
	slices.Sort(out.Locks)
	out.Dirs = slices.Compact(out.Dirs)
	out.Locks = slices.Compact(out.Locks)
	return out
}
