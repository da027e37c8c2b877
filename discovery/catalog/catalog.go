package catalog

import (
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/amplidex/amplidex/discovery"
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
	seq     atomic.Uint64 // numbers loads in the order they start
	state   atomic.Pointer[State]

	mu       sync.Mutex // guards fields below; taken by changes only, never while a file is read
	loader   *discovery.Loader
	bundled  []string
	roots    map[string]*rootState // by path
	locks    map[string]*lockState // by path
	projects map[string]*project   // by project directory; "" is no project
	version  uint64
	inflight int // loads started and not yet applied
}

// rootState is one root and the collections last loaded from it.
type rootState struct {
	root discovery.Root
	cols map[string]entry // by collection directory
	// n counts the entries of cols that hold a collection; empty lists
	// the directories whose entry holds none.
	n     int
	empty map[string]bool
	users int // projects whose views hold the root
}

func newRootState(r discovery.Root) *rootState {
	return &rootState{root: r, cols: map[string]entry{}, empty: map[string]bool{}}
}

// set records what directory dir holds.
func (rs *rootState) set(dir string, e entry) {
	if old, ok := rs.cols[dir]; ok && old.c != nil {
		rs.n--
	}
	rs.cols[dir] = e
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

// lockState is one lock file as last read.
type lockState struct {
	path  string
	lock  *discovery.Lock // nil when unreadable or corrupt
	diags []discovery.Diagnostic
	seq   uint64
	users int
}

// project is one registered project; ready is closed once its first View
// is published.
type project struct {
	dir   string
	ready chan struct{}
	view  *View
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
	c := &Catalog{home: opts.Home, workers: opts.Workers, loader: opts.Loader, bundled: opts.Bundled,
		roots: map[string]*rootState{}, locks: map[string]*lockState{}, projects: map[string]*project{}, version: opts.Version}
	c.state.Store(&State{Version: opts.Version, views: map[string]*View{}})
	return c
}

// State returns the latest published State.
func (c *Catalog) State() *State { return c.state.Load() }

// userRoot returns the path of the user root, or "".
func (c *Catalog) userRoot() string {
	if c.home == "" {
		return ""
	}
	return filepath.Join(c.home, ".amplifier", "collections")
}

// ProjectKey returns the key a project directory is registered under:
// the cleaned directory, or "" when it is empty or its collections
// directory is the user's (the home directory is no project).
func (c *Catalog) ProjectKey(dir string) string {
	if dir == "" {
		return ""
	}
	dir = filepath.Clean(dir)
	if u := c.userRoot(); u != "" && filepath.Join(dir, ".amplifier", "collections") == u {
		return ""
	}
	return dir
}

// rootsOf returns the roots of a project's view in precedence order.
// c.mu is held.
func (c *Catalog) rootsOf(project string) []discovery.Root {
	return discovery.Roots(project, c.home, c.bundled)
}

// loaded is the result of reading one collection directory.
type loaded struct {
	root string
	dir  string
	c    *discovery.Collection
}

// scanned is the result of reading a whole root: every candidate
// directory and its collection.
type scanned struct {
	root string
	dirs []loaded
}

// readLock is the result of reading one lock file.
type readLock struct {
	path  string
	lock  *discovery.Lock
	diags []discovery.Diagnostic
}

// read does the I/O of a change, outside the writer lock: it loads the
// collection directories, scans the roots and reads the lock files.
func (c *Catalog) read(loader *discovery.Loader, kinds map[string]discovery.Root, dirs []loaded, roots []string, locks []string) ([]loaded, []scanned, []readLock) {
	var jobs []*loaded
	scans := make([]scanned, 0, len(roots))
	for _, r := range roots {
		candidates, _ := discovery.CandidateDirs(r)
		s := scanned{root: r, dirs: make([]loaded, len(candidates))}
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
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(c.workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(jobs); i = int(next.Add(1)) - 1 {
				j := jobs[i]
				j.c = loader.LoadCandidate(kinds[j.root], j.dir)
			}
		}()
	}
	wg.Wait()
	var rl []readLock
	for _, p := range locks {
		l, diags, _ := discovery.ReadLock(p)
		rl = append(rl, readLock{path: p, lock: l, diags: diags})
	}
	return dirs, scans, rl
}

// Update reads what changed again and publishes the State it makes. A
// directory or root the catalog does not hold is ignored.
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
		case ch.Dir == "":
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
	defer c.mu.Unlock()
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
	return c.publish(b, nil)
}

// batch gathers what one change does to the roots and lock files before
// the views are brought up to date. c.mu is held while it lives.
type batch struct {
	c       *Catalog
	seq     uint64
	removed map[string][]*discovery.Collection // by root path
	added   map[string][]*discovery.Collection
	locks   map[string]bool // lock files read again
	loaded  []string
	gone    []string
}

func (c *Catalog) newBatch(seq uint64) *batch {
	return &batch{c: c, seq: seq, removed: map[string][]*discovery.Collection{},
		added: map[string][]*discovery.Collection{}, locks: map[string]bool{}}
}

// put records that the directory dir of root holds col (nil: none), unless
// a load that started later has already been applied.
func (b *batch) put(root, dir string, col *discovery.Collection) {
	rs := b.c.roots[root]
	if rs == nil {
		return
	}
	old, ok := rs.cols[dir]
	if ok && old.seq > b.seq {
		return
	}
	if old.c == nil && col == nil {
		if ok {
			rs.set(dir, entry{seq: b.seq})
		}
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
// absence of every other one.
func (b *batch) rescan(s scanned) {
	rs := b.c.roots[s.root]
	if rs == nil {
		return
	}
	found := map[string]bool{}
	for _, l := range s.dirs {
		found[l.dir] = true
		b.put(s.root, l.dir, l.c)
	}
	for dir := range rs.cols {
		if !found[dir] {
			b.put(s.root, dir, nil)
		}
	}
}

// lock records a lock file as read, unless a later read has been applied.
func (b *batch) lock(l readLock) {
	ls := b.c.locks[l.path]
	if ls == nil || ls.seq > b.seq {
		return
	}
	ls.lock, ls.diags, ls.seq = l.lock, l.diags, b.seq
	b.locks[l.path] = true
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

// publish brings every View up to date with b, adds the View of fresh
// (when not nil), and publishes the next State. c.mu is held.
func (c *Catalog) publish(b *batch, fresh *project) (*State, *Delta) {
	if c.inflight == 0 {
		// No older load can still apply: forget the directories found
		// empty.
		for _, rs := range c.roots {
			for dir := range rs.empty {
				delete(rs.cols, dir)
			}
			clear(rs.empty)
		}
	}
	c.version++
	st := &State{Version: c.version, views: make(map[string]*View, len(c.projects))}
	d := &Delta{Version: c.version, Loaded: b.loaded, Gone: b.gone, Views: map[string]ViewDelta{}}
	sort.Strings(d.Loaded)
	sort.Strings(d.Gone)
	for key, p := range c.projects {
		switch {
		case p == fresh:
			p.view = c.buildView(key)
		case p.view != nil:
			var vd ViewDelta
			p.view, vd = p.view.apply(c, b)
			if len(vd.Dirs) > 0 || len(vd.Locks) > 0 {
				d.Views[key] = vd
			}
		}
		if p.view != nil {
			p.view.Version = c.version
			st.views[key] = p.view
		}
	}
	st.roots = c.rootInfos()
	c.state.Store(st)
	return st, d
}

// rootInfos describes every root held. c.mu is held.
func (c *Catalog) rootInfos() []RootInfo {
	out := make([]RootInfo, 0, len(c.roots))
	for _, rs := range c.roots {
		out = append(out, RootInfo{Root: rs.root, Collections: rs.n})
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
// project registered already is left as it is (the Delta is then nil).
func (c *Catalog) AddProject(dir string) (*State, *Delta) {
	key := c.ProjectKey(dir)
	c.mu.Lock()
	if p := c.projects[key]; p != nil {
		c.mu.Unlock()
		<-p.ready
		return c.State(), nil
	}
	p := &project{dir: key, ready: make(chan struct{})}
	c.projects[key] = p
	defer close(p.ready)
	var scan []string
	kinds := map[string]discovery.Root{}
	for _, r := range c.rootsOf(key) {
		rs := c.roots[r.Path]
		if rs == nil {
			rs = newRootState(r)
			c.roots[r.Path] = rs
			scan = append(scan, r.Path)
		}
		kinds[r.Path] = rs.root
		rs.users++
	}
	var locks []string
	for _, lp := range c.lockPaths(key) {
		ls := c.locks[lp]
		if ls == nil {
			ls = &lockState{path: lp}
			c.locks[lp] = ls
			locks = append(locks, lp)
		}
		ls.users++
	}
	loader := c.loader
	seq := c.seq.Add(1)
	c.inflight++
	c.mu.Unlock()

	_, sc, rl := c.read(loader, kinds, nil, scan, locks)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.inflight--
	b := c.newBatch(seq)
	for _, s := range sc {
		b.rescan(s)
	}
	for _, l := range rl {
		b.lock(l)
	}
	return c.publish(b, p)
}

// lockPaths returns the lock files of a project's view: the project's and
// the user's. c.mu is held.
func (c *Catalog) lockPaths(project string) []string {
	var out []string
	for _, r := range c.rootsOf(project) {
		if lp := discovery.LockPath(r); lp != "" {
			out = append(out, lp)
		}
	}
	return out
}

// RemoveProject forgets a project: its View, and the roots and lock files
// no other project uses. It returns the State without it and what that
// removed (Delta.Gone names the files no root holds any more).
func (c *Catalog) RemoveProject(dir string) (*State, *Delta) {
	key := c.ProjectKey(dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.projects[key]
	b := c.newBatch(c.seq.Add(1))
	if p == nil {
		return c.publish(b, nil)
	}
	<-p.ready // its AddProject has returned: it held c.mu until then
	delete(c.projects, key)
	for _, r := range c.rootsOf(key) {
		if rs := c.roots[r.Path]; rs != nil {
			if rs.users--; rs.users == 0 {
				for _, e := range rs.cols {
					if e.c != nil {
						b.gone = append(b.gone, goneFiles(e.c, nil)...)
					}
				}
				delete(c.roots, r.Path)
			}
		}
	}
	for _, lp := range c.lockPaths(key) {
		if ls := c.locks[lp]; ls != nil {
			if ls.users--; ls.users == 0 {
				delete(c.locks, lp)
			}
		}
	}
	return c.publish(b, nil)
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

// Roots returns the paths of every root the catalog holds, sorted.
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
// new to the catalog), rebuilds every View and publishes the State.
func (c *Catalog) Reconfigure(bundled []string, loader *discovery.Loader) (*State, *Delta) {
	c.mu.Lock()
	reread := loader != nil && loader != c.loader
	if loader != nil {
		c.loader = loader
	}
	c.bundled = bundled
	want := map[string]discovery.Root{}
	for key := range c.projects {
		for _, r := range c.rootsOf(key) {
			want[r.Path] = r
		}
	}
	b := c.newBatch(c.seq.Add(1))
	for path, rs := range c.roots {
		if _, ok := want[path]; !ok {
			for _, e := range rs.cols {
				if e.c != nil {
					b.gone = append(b.gone, goneFiles(e.c, nil)...)
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
	seq := b.seq
	c.inflight++
	loaderNow := c.loader
	c.mu.Unlock()

	_, sc, _ := c.read(loaderNow, kinds, nil, scan, nil)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.inflight--
	b.seq = seq
	for _, s := range sc {
		b.rescan(s)
	}
	for key, p := range c.projects {
		p.view = c.buildView(key)
	}
	st, d := c.publish(b, nil)
	// Every view was rebuilt: every collection may have changed.
	for key, v := range st.views {
		vd := ViewDelta{}
		for _, col := range v.Set.Collections() {
			vd.Dirs = append(vd.Dirs, col.Dir)
		}
		for _, lf := range v.locks {
			vd.Locks = append(vd.Locks, lf.path)
		}
		d.Views[key] = vd
	}
	return st, d
}
