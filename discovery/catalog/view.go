package catalog

import (
	"crypto/sha256"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/check"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/internal/pmap"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// State is one published version of the catalog: a View for every
// registered project.
type State struct {
	// Version numbers the State: each change publishes the next.
	Version uint64
	views   map[string]*View
	roots   []RootInfo
}

// RootInfo is one root the catalog holds.
type RootInfo struct {
	Root        discovery.Root
	Collections int
	// Failed says why the last listing of the root failed ("" when it
	// listed); its collections are then those of the last listing that
	// did.
	Failed string
	// Unlisted is set while no listing of the root has succeeded: what it
	// holds is not known (with Failed set, the listing failed).
	Unlisted bool
	// Degraded are the collection directories whose last load was
	// incomplete; each keeps its last complete load, when there was one.
	Degraded []DegradedDir
}

// DegradedDir is a collection directory whose last load was incomplete,
// and why.
type DegradedDir struct {
	Dir string
	Why string
}

// Healthy reports whether the root and all its collections were read
// completely the last time.
func (ri RootInfo) Healthy() bool { return ri.Failed == "" && len(ri.Degraded) == 0 }

// View returns the View of a project directory ("" for no project), and
// whether the project is registered. A project whose collections
// directory is the user's is no project (see Catalog.ProjectKey).
func (s *State) View(project string) (*View, bool) {
	v, ok := s.views[project]
	return v, ok
}

// Views returns every View, by project directory.
func (s *State) Views() map[string]*View { return s.views }

// Roots describes every root the catalog holds, project roots first.
func (s *State) Roots() []RootInfo { return s.roots }

// Delta says what one change altered, for those who follow the catalog:
// the files read for the collections it brought, the files no collection
// holds any more, and per project the collection directories and lock
// files whose diagnostics may have changed.
type Delta struct {
	Version uint64
	// Loaded are the files of every collection the change brought (read
	// again, or taken from the Loader's FileCache when unchanged).
	Loaded []string
	// Gone are the files that no collection holds any more.
	Gone  []string
	Views map[string]ViewDelta
	// Retry are the reads of the change that failed (a root or directory
	// that could not be listed, a file or lock file that could not be
	// read for want of resources): what they held before stands, and
	// they are to be read again later.
	Retry []Change
}

// ViewDelta is what one change altered in one project's View.
type ViewDelta struct {
	// Dirs are the directories of the collections that came, went, were
	// read again or were checked again, or whose shadowing changed.
	Dirs []string
	// Locks are the lock files whose diagnostics may have changed.
	Locks []string
}

// View is one project's resolved collections and every diagnostic about
// them, at one version. It is immutable.
type View struct {
	// Project is the project directory, "" for none.
	Project string
	// Version is the State's version the View belongs to.
	Version uint64
	// Set is the collections of the project's roots, resolved.
	Set *resolve.Set

	// cross holds the cross-reference diagnostics of each collection, by
	// its directory; deps what each collection's references go through
	// (check.RefNames), by its directory; refs the reverse: for
	// each name, the directories of the collections that refer to it.
	cross pmap.Map[string, []diag.Diagnostic]
	deps  pmap.Map[string, []string]
	refs  pmap.Map[string, pmap.Map[string, struct{}]]
	locks []lockFile
	// volatile holds the directories of the collections whose check asked
	// the file system (check.CollectionStat): their results
	// are not kept across runs.
	volatile pmap.Map[string, struct{}]

	diagOnce sync.Once
	diags    []diag.Diagnostic
}

// lockFile is the diagnostics of one lock file of a View: its own and the
// comparison with its root, as state, the read they come from, says.
type lockFile struct {
	path  string
	root  discovery.Root
	state *lockState
	diags []diag.Diagnostic
}

// buildView computes a project's View from what snap holds, checking the
// collections on as many goroutines as workers. With prior, the results
// of an earlier run over the same collections and files (see Checks),
// the collections are not checked again, but for the volatile ones.
func buildView(project string, snap *snapshot, workers int, prior *Checks) *View {
	cols := make([][]*discovery.Collection, len(snap.roots))
	for i := range snap.roots {
		for _, e := range snap.cols[i].All() {
			if e.c != nil {
				cols[i] = append(cols[i], e.c)
			}
		}
	}
	set := newSet(snap.roots, cols)
	v := &View{Project: project, Set: set}
	// Each collection is checked on its own against the set, which is safe
	// for concurrent use: the checks run on as many goroutines as loads
	// do, and their results are gathered in order.
	all := set.Collections()
	type checked struct {
		diags   []diag.Diagnostic
		names   []string
		statted bool
	}
	res := make([]checked, len(all))
	var again map[string]bool // of prior: the volatile collections
	if prior != nil && prior.Inventory == Inventory(set) {
		again = make(map[string]bool, len(prior.Volatile))
		for _, d := range prior.Volatile {
			again[d] = true
		}
	} else {
		prior = nil
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range min(workers, len(all)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(all); i = int(next.Add(1)) - 1 {
				col := all[i]
				if prior != nil && !again[col.Dir] {
					res[i] = checked{diags: prior.Cross[col.Dir], names: prior.Deps[col.Dir]}
					continue
				}
				ds, names, statted := check.WithNames(set, col)
				sort.Strings(names)
				res[i] = checked{ds, names, statted}
			}
		}()
	}
	wg.Wait()
	names := make([][]string, len(res))
	for i := range res {
		names[i] = res[i].names
	}
	packNames(names)
	for i := range res {
		res[i].names = names[i]
	}
	cross := map[string][]diag.Diagnostic{}
	deps := map[string][]string{}
	refs := map[string][]string{}
	volatile := map[string]struct{}{}
	for i, col := range all {
		if ds := res[i].diags; len(ds) > 0 {
			cross[col.Dir] = ds
		}
		if res[i].statted {
			volatile[col.Dir] = struct{}{}
		}
		names := res[i].names
		if len(names) > 0 {
			deps[col.Dir] = names
		}
		for _, n := range names {
			refs[n] = append(refs[n], col.Dir)
		}
	}
	rs := make(map[string]pmap.Map[string, struct{}], len(refs))
	for n, ds := range refs {
		sort.Strings(ds)
		rs[n] = pmap.Build(func(yield func(string, struct{}) bool) {
			for _, d := range ds {
				if !yield(d, struct{}{}) {
					return
				}
			}
		})
	}
	v.cross = pmap.Build(sortedEntries(cross))
	v.deps = pmap.Build(sortedEntries(deps))
	v.refs = pmap.Build(sortedEntries(rs))
	v.volatile = pmap.Build(sortedEntries(volatile))
	for _, r := range snap.roots {
		if lp := discovery.LockPath(r); lp != "" && r.Kind != discovery.RootArgument {
			v.locks = append(v.locks, checkLock(set, r, lp, snap.locks[lp]))
		}
	}
	return v
}

// packNames moves lists into one slice, each a part of it clipped to its
// length, and their names into one string, each name once. A View keeps
// them for its life, and the Views after it share them; as checked (or
// decoded from an earlier run's results) they are an object for every
// list and for many names, tens of thousands at 10,000 collections,
// scattered over the memory that the first scan's garbage leaves half
// empty.
func packNames(lists [][]string) {
	n, size := 0, 0
	seen := map[string]bool{}
	for _, l := range lists {
		n += len(l)
		for _, name := range l {
			if !seen[name] {
				seen[name] = true
				size += len(name)
			}
		}
	}
	// Each name is written once, into one string, and every list's copy
	// of it is that part.
	var text strings.Builder
	text.Grow(size)
	parts := make(map[string]string, len(seen))
	for _, l := range lists {
		for _, name := range l {
			if _, ok := parts[name]; !ok {
				start := text.Len()
				text.WriteString(name)
				parts[name] = text.String()[start:]
			}
		}
	}
	all := make([]string, 0, n)
	for i, l := range lists {
		if l == nil {
			continue
		}
		start := len(all)
		for _, name := range l {
			all = append(all, parts[name])
		}
		lists[i] = all[start:len(all):len(all)]
	}
}

func sortedEntries[V any](m map[string]V) func(func(string, V) bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return func(yield func(string, V) bool) {
		for _, k := range keys {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}

// checkLock computes the diagnostics of the lock file lp of root r, read
// as ls says (nil: not read yet), with check.Lock. It stats the file
// system (the entries' paths).
func checkLock(set *resolve.Set, r discovery.Root, lp string, ls *lockState) lockFile {
	lf := lockFile{path: lp, root: r, state: ls}
	if ls != nil {
		lf.diags = check.Lock(set, r, lp, ls.lock, ls.diags)
	}
	return lf
}

// apply returns the View after b, and what changed in it; v is left as
// it is.
func (v *View) apply(b *batch) (*View, ViewDelta) {
	var removed, added []*discovery.Collection
	rootChanged := map[discovery.Root]bool{}
	for _, r := range v.Set.Roots {
		removed = append(removed, b.removed[r.Path]...)
		added = append(added, b.added[r.Path]...)
		if len(b.removed[r.Path])+len(b.added[r.Path]) > 0 {
			rootChanged[r] = true
		}
	}
	lockChanged := false
	for _, lf := range v.locks {
		if b.locks[lf.path] != nil || rootChanged[lf.root] {
			lockChanged = true
		}
	}
	if len(removed) == 0 && len(added) == 0 && !lockChanged {
		return v, ViewDelta{}
	}
	set, sd := v.Set.Apply(removed, added)
	w, changed := v.derive(set, sd, removed, added)
	var vd ViewDelta
	if lockChanged {
		w.locks = make([]lockFile, len(v.locks))
		for i, lf := range v.locks {
			if ls := b.locks[lf.path]; ls != nil || rootChanged[lf.root] {
				if ls == nil {
					ls = lf.state
				}
				w.locks[i] = checkLock(set, lf.root, lf.path, ls)
				if !slices.Equal(w.locks[i].diags, lf.diags) {
					vd.Locks = append(vd.Locks, lf.path)
				}
			} else {
				w.locks[i] = lf
			}
		}
	}
	vd.Dirs = changed
	return w, vd
}

// derive returns the View over set, which is v's Set after the
// collections in removed went and those in added came (sd says what
// that changed), and the directories of the collections whose
// diagnostics or shadowing may have changed, sorted. Only the collections
// added, and those whose references go through a name that changed, are
// checked again. The new View shares v's lock files; v is left as it is.
func (v *View) derive(set *resolve.Set, sd resolve.Delta, removed, added []*discovery.Collection) (*View, []string) {
	w := &View{Project: v.Project, Set: set, cross: v.cross, deps: v.deps, refs: v.refs, locks: v.locks, volatile: v.volatile}
	changed := map[string]bool{}
	touched := map[string]bool{}
	for _, n := range sd.Names {
		touched[n] = true
		// Shadowing of every candidate of the name may have changed.
		for _, col := range set.Resolve(n).Shadowed {
			changed[col.Dir] = true
		}
		if wn := set.Lookup(n); wn != nil {
			changed[wn.Dir] = true
		}
	}
	for _, a := range sd.Agents {
		touched[resolve.AgentDep+a] = true
	}
	recheck := map[string]bool{}
	for _, col := range added {
		touched[filepath.Base(col.Dir)] = true
		changed[col.Dir] = true
		recheck[col.Dir] = true
	}
	for _, col := range removed {
		touched[filepath.Base(col.Dir)] = true
		changed[col.Dir] = true
		if !recheck[col.Dir] {
			// Gone for good; one read again is checked below.
			w.dropDeps(col.Dir)
			w.cross = w.cross.Delete(col.Dir)
			w.volatile = w.volatile.Delete(col.Dir)
		}
	}
	for n := range touched {
		for d := range w.refs.Value(n).All() {
			recheck[d] = true
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(recheck)) {
		col := set.At(dir)
		if col == nil {
			continue
		}
		ds, names, statted := check.WithNames(set, col)
		if statted {
			w.volatile = w.volatile.Set(dir, struct{}{})
		} else if w.volatile.Has(dir) {
			w.volatile = w.volatile.Delete(dir)
		}
		if !slices.Equal(ds, w.cross.Value(dir)) {
			changed[dir] = true
			if len(ds) == 0 {
				w.cross = w.cross.Delete(dir)
			} else {
				w.cross = w.cross.Set(dir, ds)
			}
		}
		sort.Strings(names)
		if !slices.Equal(names, w.deps.Value(dir)) {
			w.dropDeps(dir)
			w.setDeps(dir, names)
		}
	}
	return w, slices.Sorted(maps.Keys(changed))
}

// everything is the ViewDelta of a View made anew: every collection and
// lock file may have changed.
func (v *View) everything() ViewDelta {
	var vd ViewDelta
	for _, col := range v.Set.Collections() {
		vd.Dirs = append(vd.Dirs, col.Dir)
	}
	for _, lf := range v.locks {
		vd.Locks = append(vd.Locks, lf.path)
	}
	slices.Sort(vd.Dirs)
	vd.Dirs = slices.Compact(vd.Dirs)
	return vd
}

// dropDeps forgets what the collection at dir refers to.
func (v *View) dropDeps(dir string) {
	for _, n := range v.deps.Value(dir) {
		if ds := v.refs.Value(n).Delete(dir); ds.Len() == 0 {
			v.refs = v.refs.Delete(n)
		} else {
			v.refs = v.refs.Set(n, ds)
		}
	}
	v.deps = v.deps.Delete(dir)
}

// setDeps records what the collection at dir refers to; names is sorted.
func (v *View) setDeps(dir string, names []string) {
	if len(names) == 0 {
		return
	}
	v.deps = v.deps.Set(dir, names)
	for _, n := range names {
		v.refs = v.refs.Set(n, v.refs.Value(n).Set(dir, struct{}{}))
	}
}

// DiagnosticsUnder returns the diagnostics of the file or directory at
// path and of every file under it, sorted: those of Diagnostics whose path
// is path or lies below it. It looks only at the collections that can hold
// such files (see resolve.Set.Around), so that asking about one file
// after a save costs the same with ten collections as with ten thousand.
func (v *View) DiagnosticsUnder(path string) []diag.Diagnostic {
	var out []diag.Diagnostic
	keep := func(ds []diag.Diagnostic) {
		for _, d := range ds {
			if syntax.Within(d.Path, path) {
				out = append(out, d)
			}
		}
	}
	for _, col := range v.Set.Around(path) {
		keep(v.collectionDiagnostics(col))
	}
	for _, lf := range v.locks {
		keep(lf.diags)
	}
	diag.Sort(out)
	return out
}

// collectionDiagnostics returns every diagnostic about col's files (its
// own, its cross-references as checked and kept, and its shadowing) with
// the suppression comments of its files applied, in no promised order:
// check.Compose.
func (v *View) collectionDiagnostics(col *discovery.Collection) []diag.Diagnostic {
	return check.Compose(v.Set, col, v.cross.Value(col.Dir))
}

// CollectionDiagnostics returns every diagnostic about col's files: its
// own, its cross-references and its shadowing, with the suppression
// comments of its files applied, sorted.
func (v *View) CollectionDiagnostics(col *discovery.Collection) []diag.Diagnostic {
	out := v.collectionDiagnostics(col)
	diag.Sort(out)
	return out
}

// LockDiagnostics returns the diagnostics of a lock file of the View's
// roots, and whether it is one.
func (v *View) LockDiagnostics(path string) ([]diag.Diagnostic, bool) {
	for _, lf := range v.locks {
		if lf.path == path {
			return lf.diags, true
		}
	}
	return nil, false
}

// LockFiles returns the paths of the View's lock files (whether or not
// they exist).
func (v *View) LockFiles() []string {
	out := make([]string, len(v.locks))
	for i, lf := range v.locks {
		out[i] = lf.path
	}
	return out
}

// Diagnostics returns every diagnostic of the View, sorted: each
// collection's own, cross-references, shadowing and lock files, with the
// suppression comments of the files applied. The slice
// is built once per View and shared: do not modify it.
func (v *View) Diagnostics() []diag.Diagnostic {
	v.diagOnce.Do(func() {
		var out []diag.Diagnostic
		for _, col := range v.Set.Collections() {
			out = append(out, v.collectionDiagnostics(col)...)
		}
		for _, lf := range v.locks {
			out = append(out, lf.diags...)
		}
		diag.Sort(out)
		v.diags = out
	})
	return v.diags
}

// Checks are a View's cross-reference results, kept from one run to the
// next (see Options.Prior) so that a restart that finds the same
// collections and files does not check them all again.
type Checks struct {
	// Inventory is the Inventory of the View's Set.
	Inventory [32]byte `json:"inventory"`
	// Cross holds the cross-reference diagnostics of each collection,
	// and Deps what its references go through (check.RefNames),
	// by directory.
	Cross map[string][]diag.Diagnostic `json:"cross,omitempty"`
	Deps  map[string][]string          `json:"deps,omitempty"`
	// Volatile are the directories of the collections whose results
	// asked the file system: they are checked again.
	Volatile []string `json:"volatile,omitempty"`
}

// Checks returns v's cross-reference results, for a later run.
func (v *View) Checks() *Checks {
	c := &Checks{Inventory: Inventory(v.Set), Cross: map[string][]diag.Diagnostic{}, Deps: map[string][]string{}}
	for dir, ds := range v.cross.All() {
		c.Cross[dir] = ds
	}
	for dir, names := range v.deps.All() {
		c.Deps[dir] = names
	}
	for dir := range v.volatile.All() {
		c.Volatile = append(c.Volatile, dir)
	}
	return c
}

// Inventory hashes what a View's cross-reference results depend on but
// the contents of its files: its roots, and its collections (where they
// are, what they are called, their layout and validity) with the paths
// of their resources and files. Two Sets of one Inventory over files of
// the same contents give the same results (but for what asks the file
// system: see Checks.Volatile).
func Inventory(set *resolve.Set) [32]byte {
	h := sha256.New()
	// The fields go through a buffer: written one by one, each would be
	// copied to the heap to be handed to the hash.
	buf := make([]byte, 0, 32<<10)
	field := func(s string) {
		if len(buf)+len(s) >= cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
		buf = append(buf, s...)
		buf = append(buf, 0)
	}
	for _, r := range set.Roots {
		field(string(r.Kind))
		field(r.Path)
	}
	for _, c := range set.Collections() {
		field("\x01")
		field(c.Dir)
		field(c.RealDir)
		field(c.Base)
		field(c.Name)
		field(c.Version)
		field(string(c.Layout))
		field(c.Pyproject)
		field(strconv.FormatBool(c.Valid))
		field(c.Problem)
		field(c.Degraded)
		for _, r := range c.Resources {
			field(string(r.Kind))
			field(r.Path)
		}
		for _, p := range c.Files() {
			field(p)
		}
	}
	h.Write(buf)
	var out [32]byte
	h.Sum(out[:0])
	return out
}
