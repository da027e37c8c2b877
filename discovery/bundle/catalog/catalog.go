package catalog

import (
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Bounds of a Catalog, when its Options leave them zero.
const (
	// DefaultMaxScopes bounds the Envs a Catalog keeps.
	DefaultMaxScopes = 16
	// DefaultMaxCompositions bounds the compositions kept for one Env.
	DefaultMaxCompositions = 4096
	// MaxLoose bounds the paths outside every root that Refresh stats.
	MaxLoose = 1024
)

// Options configure a Catalog.
type Options struct {
	// Limit bounds the bytes read of one file; syntax.DefaultMaxFileSize
	// when 0.
	Limit int64
	// MaxScopes bounds the Envs kept (DefaultMaxScopes when 0): beyond it,
	// the one used least recently that nobody holds (Hold) is forgotten.
	MaxScopes int
	// MaxCompositions bounds the compositions kept per Env
	// (DefaultMaxCompositions when 0); beyond it, a composition is made
	// for the question and not kept.
	MaxCompositions int
	// Watchable reports whether a directory may be watched: the daemon
	// watches no root that is / or holds a home directory. Roots and Repo
	// leave the others out, and what is read below them is loose (see
	// Refresh). Nil: every directory may.
	Watchable func(dir string) bool
}

// Catalog keeps the bundles of several Envs over one Files: for each, its
// locations, the compositions and repository checks asked for, and which
// paths each of them read (a compose.Graph), so that a change makes again
// only what read a changed path.
type Catalog struct {
	files     *Files
	max       int
	maxComps  int
	watchable func(string) bool
	composed  atomic.Int64
	checked   atomic.Int64

	mu     sync.Mutex // guards fields below
	scopes map[compose.Env]*scope
	clock  uint64 // counts uses, for the least recently used
	// evicted says an Env was forgotten since the last trim.
	evicted bool
}

// scope is one Env's part of the catalog.
type scope struct {
	env compose.Env
	// build lets one change or computation of the scope run at a time,
	// and guards the fields below it; published states are read without
	// it.
	build sync.Mutex
	graph compose.Graph
	// looseBy holds, by graph key, the paths it read outside every root;
	// looseN counts, by path, the keys that read it. readN counts, by
	// path, the keys that read it, wherever it is.
	looseBy map[string][]string
	looseN  map[string]int
	readN   map[string]int
	readBy  map[string][]string

	state atomic.Pointer[state]

	// Guarded by Catalog.mu.
	used  uint64
	holds int
}

// state is what a scope published: never written once published.
type state struct {
	version uint64
	loc     *compose.Locations
	roots   []string
	repo    string
	comps   map[string]*compose.Composition
	checks  map[string]*check.Result
}

// New returns an empty Catalog.
func New(opts Options) *Catalog {
	c := &Catalog{files: NewFiles(opts.Limit), max: opts.MaxScopes, maxComps: opts.MaxCompositions,
		watchable: opts.Watchable, scopes: map[compose.Env]*scope{}}
	if c.max <= 0 {
		c.max = DefaultMaxScopes
	}
	if c.maxComps <= 0 {
		c.maxComps = DefaultMaxCompositions
	}
	if c.watchable == nil {
		c.watchable = func(string) bool { return true }
	}
	return c
}

// Files returns the catalog's file cache.
func (c *Catalog) Files() *Files { return c.files }

// Composed returns the number of compositions made since New; Checked
// the number of repository checks.
func (c *Catalog) Composed() int64 { return c.composed.Load() }

// Checked returns the number of repository checks made since New.
func (c *Catalog) Checked() int64 { return c.checked.Load() }

// graph keys
const (
	keyLocate  = "L"
	keyCompose = "C"
	keyCheck   = "K"
)

// scopeFor returns the scope of env, made when missing; a new one beyond
// the bound forgets the least recently used that nobody holds.
func (c *Catalog) scopeFor(env compose.Env) *scope {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock++
	s := c.scopes[env]
	if s == nil {
		s = &scope{env: env, looseBy: map[string][]string{}, looseN: map[string]int{}, readN: map[string]int{}, readBy: map[string][]string{}}
		c.scopes[env] = s
		for len(c.scopes) > c.max {
			var old *scope
			for _, o := range c.scopes {
				if o != s && o.holds == 0 && (old == nil || o.used < old.used) {
					old = o
				}
			}
			if old == nil {
				break
			}
			delete(c.scopes, old.env)
			c.evicted = true
		}
	}
	s.used = c.clock
	return s
}

// trim drops from the file cache what no Env kept reads any more, once
// an Env was forgotten.
func (c *Catalog) trim() {
	c.mu.Lock()
	evicted := c.evicted
	c.evicted = false
	c.mu.Unlock()
	if !evicted {
		return
	}
	keep := map[string]bool{}
	for _, s := range c.snapshot() {
		s.build.Lock()
		for p := range s.readN {
			keep[p] = true
		}
		s.build.Unlock()
	}
	c.files.keepOnly(keep)
}

// View returns the bundles of env as they are now: its locations read on
// the first question, its compositions and checks made as they are asked
// for (see View.Compose).
func (c *Catalog) View(env compose.Env) *View {
	s := c.scopeFor(env)
	c.trim()
	st := s.state.Load()
	if st == nil {
		s.build.Lock()
		if st = s.state.Load(); st == nil {
			st = c.locate(s, 0)
			s.state.Store(st)
		}
		s.build.Unlock()
	}
	return &View{c: c, s: s, st: st}
}

// RepoOf returns the bundle repository env stands in, as View(env).Repo
// would, without keeping anything for env.
func (c *Catalog) RepoOf(env compose.Env) string {
	_, repo := c.rootsOf(env, compose.Locate(env, c.files))
	return repo
}

// Hold keeps env's scope from being forgotten for the bound until release
// is called (a subscription follows it).
func (c *Catalog) Hold(env compose.Env) (release func()) {
	s := c.scopeFor(env)
	c.mu.Lock()
	s.holds++
	c.mu.Unlock()
	return sync.OnceFunc(func() {
		c.mu.Lock()
		s.holds--
		c.mu.Unlock()
	})
}

// Envs returns the Envs the catalog keeps, sorted by working directory.
func (c *Catalog) Envs() []compose.Env {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]compose.Env, 0, len(c.scopes))
	for e := range c.scopes {
		out = append(out, e)
	}
	sortEnvs(out)
	return out
}

// Roots returns the roots of every Env the catalog keeps (see
// View.Roots), sorted and without repeats.
func (c *Catalog) Roots() []string {
	var out []string
	for _, s := range c.snapshot() {
		if st := s.state.Load(); st != nil {
			out = append(out, st.roots...)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func (c *Catalog) snapshot() []*scope {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*scope, 0, len(c.scopes))
	for _, s := range c.scopes {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return envLess(out[i].env, out[j].env) })
	return out
}

// locate reads s's locations into a new state with nothing composed.
// s.build is held.
func (c *Catalog) locate(s *scope, version uint64) *state {
	loc := compose.Locate(s.env, c.files)
	st := &state{version: version + 1, loc: loc, comps: map[string]*compose.Composition{}, checks: map[string]*check.Result{}}
	st.roots, st.repo = c.rootsOf(s.env, loc)
	s.graph = compose.Graph{}
	s.looseBy, s.looseN = map[string][]string{}, map[string]int{}
	s.readBy, s.readN = map[string][]string{}, map[string]int{}
	s.setReads(keyLocate, loc.Reads, st.roots)
	return st
}

// rootsOf returns the directories env's bundles come from, that may be
// watched, and the repository env stands in.
func (c *Catalog) rootsOf(env compose.Env, loc *compose.Locations) (roots []string, repo string) {
	// The repository: the outermost root bundle at or above the working
	// directory (a nested one, bundles/NAME/bundle.md, shares its
	// namespace), that may be watched.
	for i := len(loc.Repos) - 1; i >= 0; i-- {
		if dir := filepath.Dir(loc.Repos[i].Path); c.watchable(dir) {
			repo = dir
			break
		}
	}
	add := func(dir string) {
		if dir != "" && c.watchable(dir) {
			roots = append(roots, dir)
		}
	}
	add(repo)
	project := env.ProjectDir
	if project == "" {
		project = env.WorkDir
	}
	if project != "" {
		add(filepath.Join(project, ".amplifier", "bundles"))
	}
	if env.AmplifierHome != "" {
		add(filepath.Join(env.AmplifierHome, "bundles"))
		add(env.CacheDir())
	}
	sort.Strings(roots)
	// A root below another is covered by it.
	var out []string
	for _, r := range slices.Compact(roots) {
		if len(out) > 0 && syntax.Within(r, out[len(out)-1]) {
			continue
		}
		out = append(out, r)
	}
	return out, repo
}

// setReads records in s's graph what key read, and which of those paths
// lie outside every root. s.build is held.
func (s *scope) setReads(key string, reads, roots []string) {
	s.graph.Set(key, reads)
	s.dropLoose(key)
	s.readBy[key] = reads
	for _, p := range reads {
		s.readN[p]++
	}
	var loose []string
	for _, p := range reads {
		in := false
		for _, r := range roots {
			if syntax.Within(p, r) {
				in = true
				break
			}
		}
		if !in {
			loose = append(loose, p)
			s.looseN[p]++
		}
	}
	if loose != nil {
		s.looseBy[key] = loose
	}
}

// remove forgets key. s.build is held.
func (s *scope) remove(key string) {
	s.graph.Remove(key)
	s.dropLoose(key)
}

func (s *scope) dropLoose(key string) {
	for _, p := range s.readBy[key] {
		if s.readN[p]--; s.readN[p] <= 0 {
			delete(s.readN, p)
		}
	}
	delete(s.readBy, key)
	for _, p := range s.looseBy[key] {
		if s.looseN[p]--; s.looseN[p] <= 0 {
			delete(s.looseN, p)
		}
	}
	delete(s.looseBy, key)
}

// compose composes path over st's locations.
func (c *Catalog) compose(st *state, path string) *compose.Composition {
	comp := compose.Compose(st.loc, c.files, path)
	c.composed.Add(1)
	return comp
}

// check checks the repository at root, its bundles composed through
// comps (made when missing, and added to it). s.build is held.
func (c *Catalog) check(s *scope, st *state, root string, comps map[string]*compose.Composition) *check.Result {
	c.checked.Add(1)
	return check.Check(st.loc, c.files, root, check.Options{Compose: func(p string) *compose.Composition {
		if comp := comps[p]; comp != nil {
			return comp
		}
		comp := c.compose(st, p)
		if len(comps) < c.maxComps {
			comps[p] = comp
			s.setReads(keyCompose+p, comp.Reads, st.roots)
		}
		return comp
	}})
}

// Update takes in that paths may have changed (created, written, removed:
// a directory with everything below it) and that everything below trees
// may have: it forgets what the file cache knew of them, then, in each
// Env, makes again the compositions and checks that read one of them
// (the locations too when they read one), and publishes the result. The
// work is in proportion to what read the changed paths, not to the
// number of bundles.
func (c *Catalog) Update(paths, trees []string) *Delta {
	affected := c.files.Forget(paths, trees)
	d := &Delta{}
	if len(affected) == 0 {
		return d
	}
	for _, s := range c.snapshot() {
		c.updateScope(s, affected, d)
	}
	return d
}

// updateScope brings s up to date with the affected paths.
func (c *Catalog) updateScope(s *scope, affected []string, d *Delta) {
	s.build.Lock()
	defer s.build.Unlock()
	st := s.state.Load()
	if st == nil {
		return
	}
	deps := map[string]bool{}
	for _, p := range affected {
		for _, k := range s.graph.Dependents(p) {
			deps[k] = true
		}
	}
	if len(deps) == 0 {
		return
	}
	var next *state
	if deps[keyLocate] {
		// The locations read a changed path: read them again, and make
		// again everything that was made over them.
		next = c.locate(s, st.version)
		for p := range st.comps {
			deps[keyCompose+p] = true
		}
		for r := range st.checks {
			deps[keyCheck+r] = true
		}
		d.Relocated = append(d.Relocated, s.env)
	} else {
		next = &state{version: st.version + 1, loc: st.loc, roots: st.roots, repo: st.repo,
			comps: maps.Clone(st.comps), checks: maps.Clone(st.checks)}
	}
	var comps, checks []string
	for k := range deps {
		switch k[:1] {
		case keyCompose:
			comps = append(comps, k[1:])
		case keyCheck:
			checks = append(checks, k[1:])
		}
	}
	sort.Strings(comps)
	sort.Strings(checks)
	for _, p := range comps {
		delete(next.comps, p)
		if c.files.Stat(p) == compose.Missing {
			s.remove(keyCompose + p)
			continue
		}
		comp := c.compose(next, p)
		next.comps[p] = comp
		s.setReads(keyCompose+p, comp.Reads, next.roots)
		d.Recomposed++
	}
	for _, r := range checks {
		delete(next.checks, r)
		if c.files.Stat(r) != compose.Directory {
			s.remove(keyCheck + r)
			continue
		}
		res := c.check(s, next, r, next.comps)
		next.checks[r] = res
		s.setReads(keyCheck+r, res.Reads, next.roots)
		d.Rechecked++
	}
	s.state.Store(next)
	d.Envs = append(d.Envs, s.env)
}

// Refresh stats the paths env's bundles read outside every root (the
// ancestors searched for a root bundle, settings files, a file:// include
// elsewhere: what no watch reports), at most MaxLoose of them, and takes
// in those that changed (see Update).
func (c *Catalog) Refresh(env compose.Env) *Delta {
	c.mu.Lock()
	s := c.scopes[env]
	c.mu.Unlock()
	if s == nil {
		return &Delta{}
	}
	s.build.Lock()
	loose := make([]string, 0, min(len(s.looseN), MaxLoose))
	for p := range s.looseN {
		if len(loose) == MaxLoose {
			break
		}
		loose = append(loose, p)
	}
	s.build.Unlock()
	sort.Strings(loose)
	stale := c.files.Stale(loose)
	if len(stale) == 0 {
		return &Delta{}
	}
	return c.Update(stale, nil)
}

// Delta is what an Update changed.
type Delta struct {
	// Envs are the Envs whose locations, compositions or checks were made
	// again.
	Envs []compose.Env
	// Relocated are those whose locations were read again: their roots
	// may have changed.
	Relocated []compose.Env
	// Recomposed and Rechecked count the compositions and the repository
	// checks made again.
	Recomposed, Rechecked int
}

// View is the bundles of one Env at one moment. What it has published is
// immutable; what it makes when asked (a composition, a check) is kept
// for the next question and, like everything kept, made again when a
// path it read changes.
type View struct {
	c  *Catalog
	s  *scope
	st *state
}

// Env returns where the view looks for bundles.
func (v *View) Env() compose.Env { return v.s.env }

// Files returns what the view reads through.
func (v *View) Files() compose.Files { return v.c.files }

// Locations returns the view's locations.
func (v *View) Locations() *compose.Locations { return v.st.loc }

// Version counts the states of the view's Env: one more per change.
func (v *View) Version() uint64 { return v.st.version }

// Roots returns the directories the view's bundles come from that may be
// watched: the repository it stands in (Repo), the project's
// .amplifier/bundles, $AMPLIFIER_HOME/bundles and the runtime's cache. A
// watcher of them, told to Update, keeps the view fresh; what is read
// elsewhere Refresh stats.
func (v *View) Roots() []string { return slices.Clone(v.st.roots) }

// Repo returns the bundle repository the Env stands in: the outermost
// root bundle's directory at or above the working directory that may be
// watched; "" when there is none.
func (v *View) Repo() string { return v.st.repo }

// Bundles lists the bundles found (see compose.Locations.Bundles).
func (v *View) Bundles() []compose.Found { return v.st.loc.Bundles(v.c.files) }

// Resolve returns the bundle file ref names (see
// compose.Locations.Resolve); the error wraps compose.ErrNotFound.
func (v *View) Resolve(ref string) (string, error) { return v.st.loc.Resolve(v.c.files, ref) }

// Parse returns the parse of the bundle file at path.
func (v *View) Parse(path string) (*bundle.File, error) {
	return v.c.files.Parse(path, bundle.KindBundle)
}

// Compose returns the composition of the bundle file at path: the kept
// one, else one made now (and kept).
func (v *View) Compose(path string) *compose.Composition {
	path = filepath.Clean(path)
	if comp := v.st.comps[path]; comp != nil {
		return comp
	}
	s := v.s
	s.build.Lock()
	defer s.build.Unlock()
	st := s.state.Load()
	if comp := st.comps[path]; comp != nil {
		return comp
	}
	comp := v.c.compose(st, path)
	if len(st.comps) >= v.c.maxComps {
		return comp
	}
	next := *st
	next.version++
	next.comps = maps.Clone(st.comps)
	next.comps[path] = comp
	s.setReads(keyCompose+path, comp.Reads, st.roots)
	s.state.Store(&next)
	return comp
}

// Check returns the check of the bundle repository at root (see
// check.Check), its bundles composed as Compose composes them: the kept
// one, else one made now (and kept).
func (v *View) Check(root string) *check.Result {
	root = filepath.Clean(root)
	if res := v.st.checks[root]; res != nil {
		return res
	}
	s := v.s
	s.build.Lock()
	defer s.build.Unlock()
	st := s.state.Load()
	if res := st.checks[root]; res != nil {
		return res
	}
	next := *st
	next.version++
	next.comps = maps.Clone(st.comps)
	res := v.c.check(s, &next, root, next.comps)
	next.checks = maps.Clone(st.checks)
	next.checks[root] = res
	s.setReads(keyCheck+root, res.Reads, st.roots)
	s.state.Store(&next)
	return res
}

func envLess(a, b compose.Env) bool {
	if a.WorkDir != b.WorkDir {
		return a.WorkDir < b.WorkDir
	}
	if a.AmplifierHome != b.AmplifierHome {
		return a.AmplifierHome < b.AmplifierHome
	}
	if a.Home != b.Home {
		return a.Home < b.Home
	}
	if a.ProjectDir != b.ProjectDir {
		return a.ProjectDir < b.ProjectDir
	}
	return !a.NoWellKnown && b.NoWellKnown
}

func sortEnvs(es []compose.Env) { sort.Slice(es, func(i, j int) bool { return envLess(es[i], es[j]) }) }
