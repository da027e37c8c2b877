package daemon

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	bundlecat "github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
)

// subscriptions are the open subscriptions. Each is told, after every
// published change, which collection directories and lock files of its
// project may have changed, and computes the diagnostics of those only;
// or that its project was forgotten, which ends it.
type subscriptions struct {
	// current returns the latest State. It is set once, before the first
	// notify.
	current func() *catalog.State

	mu   sync.Mutex // guards subs
	subs map[*subscriber]struct{}
}

// subscriber is one open subscription.
type subscriber struct {
	project string
	// env, when set, is the place whose bundle repository's diagnostics
	// are followed too.
	env  *compose.Env
	wake chan struct{}

	mu sync.Mutex // guards fields below
	// dirs and locks are what changed since the subscriber last looked;
	// all says everything may have.
	dirs  map[string]bool
	locks map[string]bool
	all   bool
	// bundles says the bundles of env changed.
	bundles bool
	// forgotten says the project has no View any more: the subscription
	// ends.
	forgotten bool
}

func newSubscriptions() *subscriptions {
	return &subscriptions{subs: map[*subscriber]struct{}{}}
}

// add registers a subscriber of a project's View, and of the bundles of
// env when it is set.
func (s *subscriptions) add(project string, env *compose.Env) *subscriber {
	sub := &subscriber{project: project, env: env, wake: make(chan struct{}, 1), dirs: map[string]bool{}, locks: map[string]bool{}, all: true}
	s.mu.Lock()
	s.subs[sub] = struct{}{}
	s.mu.Unlock()
	return sub
}

func (s *subscriptions) remove(sub *subscriber) {
	s.mu.Lock()
	delete(s.subs, sub)
	s.mu.Unlock()
}

// notify tells every subscriber what d changed in its project's View, and
// those whose project has no View any more that it was forgotten.
func (s *subscriptions) notify(d *catalog.Delta) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st *catalog.State
	for sub := range s.subs {
		vd, ok := d.Views[sub.project]
		if !ok {
			if s.current == nil {
				continue
			}
			if st == nil {
				st = s.current()
			}
			if _, ok := st.View(sub.project); ok {
				continue
			}
		}
		sub.mu.Lock()
		sub.forgotten = sub.forgotten || !ok
		for _, dir := range vd.Dirs {
			sub.dirs[dir] = true
		}
		for _, l := range vd.Locks {
			sub.locks[l] = true
		}
		sub.mu.Unlock()
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
}

// notifyBundles tells the subscribers of the bundles of envs that they
// changed.
func (s *subscriptions) notifyBundles(envs []compose.Env) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.subs {
		if sub.env == nil || !slices.Contains(envs, *sub.env) {
			continue
		}
		sub.mu.Lock()
		sub.bundles = true
		sub.mu.Unlock()
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
}

// takeBundles says whether the bundles changed since the last call, and
// forgets it.
func (sub *subscriber) takeBundles() bool {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	b := sub.bundles
	sub.bundles = false
	return b
}

// take returns what changed since the last call, and forgets it; and
// whether the project was forgotten.
func (sub *subscriber) take() (dirs, locks []string, all, forgotten bool) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for d := range sub.dirs {
		dirs = append(dirs, d)
	}
	for l := range sub.locks {
		locks = append(locks, l)
	}
	all = sub.all
	clear(sub.dirs)
	clear(sub.locks)
	sub.all = false
	return dirs, locks, all, sub.forgotten
}

// follower computes, for one subscription, the diagnostics that changed.
// It keeps the last diagnostics sent, grouped by the collection directory
// (or lock file) they belong to, so that a change costs what it touched.
type follower struct {
	paths []string // followed files and directories; none means all
	// last holds, per group (a collection directory or a lock file), the
	// diagnostics of each followed file that has any.
	last map[string]map[string][]diag.Diagnostic
}

// follows reports whether path is followed.
func (f *follower) follows(path string) bool {
	if len(f.paths) == 0 {
		return true
	}
	for _, q := range f.paths {
		if path == q || strings.HasPrefix(path, q+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// group returns the diagnostics of the followed files of one group of v:
// the collection at dir, or the lock file.
func (f *follower) group(v *catalog.View, key string, lock bool) map[string][]diag.Diagnostic {
	var ds []diag.Diagnostic
	if lock {
		ds, _ = v.LockDiagnostics(key)
	} else if c := v.Set.At(key); c != nil {
		ds = v.CollectionDiagnostics(c)
	}
	out := map[string][]diag.Diagnostic{}
	for _, d := range ds {
		if f.follows(d.Path) {
			out[d.Path] = append(out[d.Path], d)
		}
	}
	return out
}

// changes brings f up to date with v for the groups given (every group
// when all is set) and returns the files whose diagnostics changed.
func (f *follower) changes(v *catalog.View, dirs, locks []string, all bool) []query.FileDiagnostics {
	if all {
		dirs, locks = dirs[:0], nil
		for key := range f.last {
			if !strings.HasPrefix(key, bundleGroup) {
				dirs = append(dirs, key) // gone groups must be cleared
			}
		}
		for _, c := range v.Set.Collections() {
			dirs = append(dirs, c.Dir)
		}
		locks = v.LockFiles()
		dirs = slices.DeleteFunc(dirs, func(d string) bool { return slices.Contains(locks, d) })
	}
	seen := map[string]bool{}
	changed := map[string][]diag.Diagnostic{}
	update := func(key string, lock bool) {
		if seen[key] {
			return
		}
		seen[key] = true
		f.apply(key, f.group(v, key, lock), changed)
	}
	for _, l := range locks {
		update(l, true)
	}
	for _, d := range dirs {
		if !strings.HasPrefix(d, bundleGroup) {
			update(d, false)
		}
	}
	return fileDiagnostics(changed)
}

// fileDiagnostics lists changed by file, sorted.
func fileDiagnostics(changed map[string][]diag.Diagnostic) []query.FileDiagnostics {
	out := make([]query.FileDiagnostics, 0, len(changed))
	for path, ds := range changed {
		out = append(out, query.FileDiagnostics{Path: path, Diagnostics: ds})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// apply makes cur the diagnostics of group key, and records in changed
// the files whose diagnostics it changed.
func (f *follower) apply(key string, cur map[string][]diag.Diagnostic, changed map[string][]diag.Diagnostic) {
	old := f.last[key]
	for path, ds := range cur {
		if !slices.Equal(ds, old[path]) {
			changed[path] = ds
		}
	}
	for path := range old {
		if _, ok := cur[path]; !ok && changed[path] == nil {
			// Cleared, unless another group now has some.
			changed[path] = []diag.Diagnostic{}
		}
	}
	if len(cur) == 0 {
		delete(f.last, key)
	} else {
		f.last[key] = cur
	}
}

// bundleGroup prefixes the group of a bundle repository's diagnostics.
const bundleGroup = "bundles\x00"

// bundleChanges brings f up to date with the check of the bundle
// repository v stands in (none: its group is cleared) and returns the
// files whose diagnostics changed.
func (f *follower) bundleChanges(v *bundlecat.View) []query.FileDiagnostics {
	changed := map[string][]diag.Diagnostic{}
	repo := v.Repo()
	for key := range f.last {
		if strings.HasPrefix(key, bundleGroup) && key != bundleGroup+repo {
			f.apply(key, nil, changed) // another repository's, stood in before
		}
	}
	if repo != "" {
		cur := map[string][]diag.Diagnostic{}
		ds, _ := v.Check(repo).Report() // suppression comments applied
		for _, d := range ds {
			if f.follows(d.Path) {
				cur[d.Path] = append(cur[d.Path], d)
			}
		}
		f.apply(bundleGroup+repo, cur, changed)
	}
	return fileDiagnostics(changed)
}

// Follow calls fn with the diagnostics of the project's files below paths
// (every file when paths is empty): first those that have any, in an
// update marked Initial that goes even when none has any, then, after
// each change, those whose diagnostics changed. It returns nil when ctx
// ends, fn's error, or a query.Error with CodeNotFound when the project is
// forgotten (see forgottenError): it ends then, even should the project be
// registered again.
func (d *Daemon) Follow(ctx context.Context, project string, paths []string, fn func(query.Update) error) error {
	return d.FollowRoots(ctx, query.Common{Project: project}, paths, fn)
}

// FollowRoots is Follow of the View a question with scope's parameters is
// about: a client's own roots, and the collection it stands in; and, when
// scope.Bundles is set, of the bundle repository the client stands in.
func (d *Daemon) FollowRoots(ctx context.Context, scope query.Common, paths []string, fn func(query.Update) error) error {
	project, err := d.ingest.checkScope(scope, d.cfg.Load().bundled)
	if err != nil {
		return err
	}
	env, release, err := d.followBundles(ctx, scope)
	if err != nil {
		return err
	}
	defer release()
	defer d.ingest.follow(project)()
	if _, _, err := d.ingest.view(ctx, project, false); err != nil {
		return err
	}
	return d.follow(ctx, project, env, paths, fn)
}

// followBundles readies the bundles of the place scope names, when it
// names one in a bundle repository, to be followed: its roots watched,
// its changes taken in, and its place kept for as long as release is not
// called.
func (d *Daemon) followBundles(ctx context.Context, scope query.Common) (*compose.Env, func(), error) {
	if scope.Bundles == nil {
		return nil, func() {}, nil
	}
	if err := d.waitReady(ctx); err != nil {
		return nil, nil, err
	}
	if env, err := checkBundleScope(scope.Bundles); err != nil {
		return nil, nil, err
	} else if d.bidx.cat.RepoOf(env) == "" {
		return nil, func() {}, nil // no bundle repository here: nothing to follow
	}
	v, err := d.bidx.view(ctx, scope.Bundles, scope.NoSync)
	if err != nil {
		return nil, nil, err
	}
	env := v.Env()
	return &env, d.bidx.cat.Hold(env), nil
}

// follow is Follow of a project registered already (under its key): it
// registers nothing, so a project forgotten since ends it at once rather
// than being registered again.
func (d *Daemon) follow(ctx context.Context, project string, env *compose.Env, paths []string, fn func(query.Update) error) error {
	for i := range paths {
		paths[i] = filepath.Clean(paths[i])
	}
	sub := d.subs.add(project, env)
	defer d.subs.remove(sub)
	f := &follower{paths: paths, last: map[string]map[string][]diag.Diagnostic{}}
	for initial := true; ; initial = false {
		dirs, locks, all, forgotten := sub.take()
		st := d.cat.State()
		v, ok := st.View(project)
		if forgotten || !ok {
			return forgottenError(project)
		}
		files := f.changes(v, dirs, locks, all)
		if env != nil && (sub.takeBundles() || initial) {
			files = mergeFiles(files, f.bundleChanges(d.bidx.cat.View(*env)))
		}
		// The first update goes even when empty: it says which files
		// have diagnostics, so that one left out has none.
		if len(files) > 0 || initial {
			if err := fn(query.Update{Clock: d.clockAt(st.Version), Files: files, Initial: initial}); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-sub.wake:
		}
	}
}

// mergeFiles merges two lists of files' diagnostics, sorted: a file in
// both (a bundle repository's file that a collection holds too) gets
// both its lists.
func mergeFiles(a, b []query.FileDiagnostics) []query.FileDiagnostics {
	if len(b) == 0 {
		return a
	}
	byPath := map[string]int{}
	for i, f := range a {
		byPath[f.Path] = i
	}
	for _, f := range b {
		if i, ok := byPath[f.Path]; ok {
			a[i].Diagnostics = append(slices.Clone(a[i].Diagnostics), f.Diagnostics...)
			continue
		}
		a = append(a, f)
	}
	sort.Slice(a, func(i, j int) bool { return a[i].Path < a[j].Path })
	return a
}

// forgottenError ends the subscriptions of a forgotten project.
func forgottenError(project string) error {
	return query.Errorf(query.CodeNotFound,
		"project %s was forgotten (by forget, or as gone or unused): its diagnostics are no longer followed", catalog.Label(project))
}
