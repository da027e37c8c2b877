package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/index"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// DefaultMaxProjects bounds the registry of projects when
// Options.MaxProjects is zero.
const DefaultMaxProjects = 64

// DefaultMaxRootSets bounds the sets of a client's own roots (see
// query.Common.Roots) followed at once, when Options.MaxRootSets is zero.
const DefaultMaxRootSets = 16

// errAbandoned is what a registration returns to those who waited for it
// when the client that ran it went away before it was done: they run one
// of their own.
var errAbandoned = errors.New("daemon: registration abandoned by the client that asked for it")

// ingest feeds the catalog: it turns the watcher's batches into catalog
// changes, registers projects on their first question (and forgets the
// least recently asked beyond the bound), and notices edited lock files.
// After each change it hands what the catalog read to the persister and
// what changed to the subscriptions.
type ingest struct {
	cat     *catalog.Catalog
	mem     *memory // the reading target while a registration reads
	w       *watcher.Watcher
	persist *persister
	subs    *subscriptions
	log     *slog.Logger
	warn    func(string)
	warnNew func(string) // warn, unless the same is said already
	now     func() time.Time
	max     int
	// maxSets bounds the registered sets of a client's own roots (keys
	// made by catalog.ScopeKey), apart from max.
	maxSets int
	isRoot  func(string) bool // reports a root the bundles or the catalog need
	// bundleOnly reports a root watched for the bundles of the places
	// clients stand in, and for nothing else: its batches are theirs.
	bundleOnly func(string) bool
	ownerUID   int
	homeDir    string
	// progress counts what each registration reads, for status.
	progress *progress
	// ready is closed once cat is set: batches wait for it. stop is
	// closed when the daemon closes, and ends that wait.
	ready chan struct{}
	stop  chan struct{}
	// workers counts the roots' workers; drained is signalled (on mu)
	// whenever one has applied its queue.
	workers sync.WaitGroup
	drained *sync.Cond

	mu sync.Mutex // guards fields below; never held while a file is read
	// projects maps each registered project to when it was last asked
	// about; registering holds the registrations in progress.
	projects    map[string]time.Time
	registering map[string]*registration
	// following counts, by key, the subscriptions that follow its View:
	// a set of a client's roots in use is never evicted nor expired.
	following map[string]int
	// locks holds the stat of each lock file as last read.
	locks map[string]index.File
	// queues holds each root's pending work; stopped ends every wait.
	queues  map[string]*rootQueue
	stopped bool
	// retries holds the reads that failed (see catalog.Delta.Retry) and
	// when each is tried again.
	retries map[catalog.Change]*retry
	// lifecycles holds, by project, the lock that its registration and
	// its forgetting take (see lockProject); rootLocks, by root, the lock
	// that adding and removing its watch take (see addWatch); intents, by
	// root, the registrations about to hold it.
	lifecycles map[string]*lifecycle
	rootLocks  map[string]*lifecycle
	intents    map[string]int
}

// lifecycle serialises the registration and the forgetting of one
// project, so that a forget never removes a watch that a registration of
// the same project has just added. users counts who holds or waits for
// it.
type lifecycle struct {
	mu    sync.Mutex
	users int
}

// lockProject takes the lifecycle lock of project and returns the
// function that releases it. It waits without holding in.mu; no caller
// holds another project's lifecycle lock meanwhile.
func (in *ingest) lockProject(project string) (unlock func()) {
	return in.lockIn(in.lifecycles, project)
}

// lockIn takes the lock of key in locks (made when missing, dropped when
// nobody holds or waits for it; locks is guarded by in.mu) and returns
// the function that releases it. It waits without holding in.mu.
func (in *ingest) lockIn(locks map[string]*lifecycle, key string) (unlock func()) {
	in.mu.Lock()
	l := locks[key]
	if l == nil {
		l = &lifecycle{}
		locks[key] = l
	}
	l.users++
	in.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		in.mu.Lock()
		if l.users--; l.users == 0 {
			delete(locks, key)
		}
		in.mu.Unlock()
	}
}

// intend records that a registration is about to hold roots, so that no
// forget or reload removes their watches meanwhile, and returns the
// function that ends that once the catalog holds them (or the
// registration failed).
func (in *ingest) intend(roots []discovery.Root) (done func()) {
	in.mu.Lock()
	for _, r := range roots {
		in.intents[r.Path]++
	}
	in.mu.Unlock()
	return func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		for _, r := range roots {
			if in.intents[r.Path]--; in.intents[r.Path] <= 0 {
				delete(in.intents, r.Path)
			}
		}
	}
}

// addWatch watches a root, under its lock: a removal of its watch that a
// forget or a reload decided before cannot come after.
func (in *ingest) addWatch(path string, add func(string) error) error {
	unlock := in.lockIn(in.rootLocks, path)
	defer unlock()
	return add(path)
}

// dropWatch stops watching a root, under its lock, unless a View holds
// it, a registration is about to, or the daemon needs it for something
// else (a manifest's directory).
func (in *ingest) dropWatch(path string) {
	unlock := in.lockIn(in.rootLocks, path)
	defer unlock()
	for _, r := range in.cat.Roots() {
		if r.Path == path {
			return
		}
	}
	in.mu.Lock()
	intended := in.intents[path] > 0
	in.mu.Unlock()
	if intended || in.isRoot(path) {
		return
	}
	_ = in.w.RemoveRoot(path)
}

// retry is a read that failed, tried again after delay; pending is set
// while its timer runs.
type retry struct {
	delay   time.Duration
	pending bool
	timer   *time.Timer
}

// The first and the longest wait before a failed read is tried again: a
// descriptor shortage usually passes within a second, a directory made
// unreadable may stay so.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 30 * time.Second
)

// registration is one project being registered; done is closed when err
// and st are set. abandoned says the client that ran it went away first;
// waiters counts the questions that waited for it (guarded by in.mu).
type registration struct {
	done      chan struct{}
	st        *catalog.State
	err       error
	abandoned bool
	waiters   int
}

// applied hands the result of a catalog change on: the records to the
// persister, the changes to the subscriptions.
func (in *ingest) applied(st *catalog.State, d *catalog.Delta) *catalog.State {
	if d != nil {
		in.persist.commit(d.Version, d.Loaded, d.Gone)
		in.subs.notify(d)
		in.retryLater(d.Retry)
	}
	return st
}

// retryLater schedules the reads that failed to be tried again, each
// after twice its last wait (retryFirst the first time, at most
// retryMax), unless one is scheduled already.
func (in *ingest) retryLater(changes []catalog.Change) {
	if len(changes) == 0 {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.stopped {
		return
	}
	for _, ch := range changes {
		r := in.retries[ch]
		switch {
		case r == nil:
			r = &retry{delay: retryFirst}
			in.retries[ch] = r
			in.log.Warn("read failed; keeping what was known and trying again", "root", ch.Root, "dir", ch.Dir, "lock", ch.Lock, "in", r.delay)
		case r.pending:
			continue
		default:
			r.delay = min(2*r.delay, retryMax)
		}
		r.pending = true
		r.timer = time.AfterFunc(r.delay, func() {
			in.mu.Lock()
			defer in.mu.Unlock()
			r.pending = false
			key := ch.Root
			if ch.Lock != "" {
				key = ch.Lock
			}
			in.enqueueLocked(key, []catalog.Change{ch})
		})
	}
}

// retried forgets the failed reads among changes that a change read
// without failing again (retry lists those that did).
func (in *ingest) retried(changes, retry []catalog.Change) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, ch := range changes {
		r := in.retries[ch]
		if r == nil || r.pending || slices.Contains(retry, ch) {
			continue
		}
		delete(in.retries, ch)
		in.log.Info("read works again", "root", ch.Root, "dir", ch.Dir, "lock", ch.Lock)
	}
}

// handleBatch is the watcher's handle function: it hands the collections
// the batch touches to the worker of the batch's root, and returns. Roots
// are read in parallel, one worker each, so that a slow read in one
// project's root never holds back the questions of another; a question
// waits only for the roots of its own View (see wait).
func (in *ingest) handleBatch(b watcher.Batch, bundles *bundles) {
	select {
	case <-in.ready:
	case <-in.stop:
		return
	}
	bundles.changed(b.Root)
	if in.bundleOnly != nil && in.bundleOnly(b.Root) {
		return
	}
	var changes []catalog.Change
	if b.Rescan {
		in.log.Info("rescanning root", "root", b.Root, "reasons", b.Reasons)
		if b.Reasons != 0 && b.Reasons != watcher.ReasonRootAppeared {
			in.warn(fmt.Sprintf("%s: rescanned %s", b.Root, b.Reasons))
		}
		changes = append(changes, catalog.Change{Root: b.Root})
	} else {
		dirs := map[string]bool{}
		for _, p := range b.Paths {
			rel, err := filepath.Rel(b.Root, p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				continue
			}
			if rel == "." {
				dirs = nil
				changes = append(changes, catalog.Change{Root: b.Root})
				break
			}
			first, _, _ := strings.Cut(rel, string(filepath.Separator))
			dirs[filepath.Join(b.Root, first)] = true
		}
		for dir := range dirs {
			changes = append(changes, catalog.Change{Root: b.Root, Dir: dir})
		}
		// A file a watch event names is hashed again, whatever its stat
		// says: a rewrite can keep size and times.
		in.persist.cache.distrust(b.Paths)
	}
	in.enqueue(b.Root, changes)
}

// rootQueue is the work waiting for one root's worker. queued counts what
// was handed to it, done what it has applied; running is set while a
// worker runs.
type rootQueue struct {
	changes []catalog.Change
	queued  uint64
	done    uint64
	running bool
	// settling counts the re-reads promised to files that turned empty
	// (see settle): a question waits for them as for queued work.
	settling uint64
}

// enqueue hands changes of root to its worker, starting one when none
// runs. Lock files are checked with every batch, so an empty batch still
// queues that check.
func (in *ingest) enqueue(root string, changes []catalog.Change) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.enqueueLocked(root, changes)
}

// enqueueLocked is enqueue with in.mu held.
func (in *ingest) enqueueLocked(root string, changes []catalog.Change) {
	if in.stopped {
		return
	}
	q := in.queue(root)
	q.changes = append(q.changes, changes...)
	q.queued++
	if !q.running {
		q.running = true
		in.workers.Add(1)
		go in.work(root, q)
	}
}

// queue returns the queue of root. in.mu is held.
func (in *ingest) queue(root string) *rootQueue {
	q := in.queues[root]
	if q == nil {
		q = &rootQueue{}
		in.queues[root] = q
	}
	return q
}

// settleDelay is how long a document that turned empty stays as it was
// before its emptiness is believed.
const settleDelay = 50 * time.Millisecond

// settle is told by the file cache of a document found empty: most often
// an editor's save caught between its truncate and its write. The
// document keeps what was known of it for settleDelay; then its collection
// is read again, and what the file holds then is believed. Questions about
// its roots wait for that read, so they still see their writes.
func (in *ingest) settle(path string) {
	root := ""
	for _, r := range in.cat.Roots() {
		if within(path, r.Path) && len(r.Path) > len(root) {
			root = r.Path
		}
	}
	if root == "" {
		return
	}
	rel, _ := filepath.Rel(root, path)
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	change := catalog.Change{Root: root, Dir: filepath.Join(root, first)}
	in.mu.Lock()
	if in.stopped {
		in.mu.Unlock()
		return
	}
	in.queue(root).settling++
	in.mu.Unlock()
	time.AfterFunc(settleDelay, func() {
		in.persist.cache.settled(path)
		in.persist.cache.distrust([]string{path})
		in.mu.Lock()
		defer in.mu.Unlock()
		q := in.queue(root)
		q.settling--
		in.enqueueLocked(root, []catalog.Change{change})
		in.drained.Broadcast()
	})
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// work applies the queued changes of one root until none is left.
func (in *ingest) work(root string, q *rootQueue) {
	defer in.workers.Done()
	for {
		in.mu.Lock()
		if q.done == q.queued {
			q.running = false
			in.mu.Unlock()
			return
		}
		changes, target := q.changes, q.queued
		q.changes = nil
		in.mu.Unlock()
		changes = append(changes, in.staleLocks(nil)...)
		if len(changes) > 0 {
			st, d := in.cat.Update(changes...)
			in.applied(st, d)
			in.retried(changes, d.Retry)
		}
		in.mu.Lock()
		q.done = target
		in.drained.Broadcast()
		in.mu.Unlock()
	}
}

// wait waits until the workers of the roots of a project's View have
// applied everything handed to them so far, or the daemon stops.
func (in *ingest) wait(ctx context.Context, project string) error {
	var paths []string
	if v, ok := in.cat.State().View(project); ok {
		for _, r := range v.Set.Roots {
			paths = append(paths, r.Path)
		}
	} else {
		for _, r := range in.cat.RootsOf(project) {
			paths = append(paths, r.Path)
		}
	}
	return in.waitRoots(ctx, paths)
}

// waitRoots waits until the workers of the given roots (of every root when
// paths is nil) have applied everything handed to them so far, and the
// re-reads promised to files that turned empty; or until ctx ends.
func (in *ingest) waitRoots(ctx context.Context, paths []string) error {
	stop := context.AfterFunc(ctx, func() {
		in.mu.Lock()
		in.drained.Broadcast()
		in.mu.Unlock()
	})
	defer stop()
	in.mu.Lock()
	defer in.mu.Unlock()
	if paths == nil {
		for p := range in.queues {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		q := in.queues[p]
		if q == nil {
			continue
		}
		// A re-read promised to an emptied file becomes one more job when
		// it is due: it counts, and so do those the work waited for
		// promises while it runs.
		target := q.queued + q.settling
		for !in.stopped {
			if t := q.queued + q.settling; q.settling > 0 && t > target {
				target = t
			}
			if q.done >= target {
				break
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			in.drained.Wait()
		}
	}
	return nil
}

// close stops the waits and waits for the workers; the watcher must be
// closed first, so that no batch comes any more.
func (in *ingest) close() {
	in.mu.Lock()
	in.stopped = true
	for _, r := range in.retries {
		if r.timer != nil {
			r.timer.Stop()
		}
	}
	in.drained.Broadcast()
	in.mu.Unlock()
	in.workers.Wait()
}

// lockStat returns the stat of a lock file; the zero File when it does not
// exist or cannot be stat()ed.
func lockStat(path string) index.File {
	fi, err := os.Stat(path)
	if err != nil {
		return index.File{}
	}
	return index.StatOf(fi)
}

// staleLocks stats the lock files of the given projects (of every
// registered project when projects is nil) and returns a change for each
// whose stat moved since it was read.
func (in *ingest) staleLocks(projects []string) []catalog.Change {
	in.mu.Lock()
	var paths []string
	if projects == nil {
		for p := range in.locks {
			paths = append(paths, p)
		}
	} else {
		for _, p := range projects {
			paths = append(paths, lockPaths(in.cat, p)...)
		}
	}
	in.mu.Unlock()
	var changes []catalog.Change
	for _, p := range paths {
		st := lockStat(p)
		in.mu.Lock()
		old, known := in.locks[p]
		if known && !old.SameStat(st) {
			in.locks[p] = st
			changes = append(changes, catalog.Change{Lock: p})
		}
		in.mu.Unlock()
	}
	return changes
}

// lockPaths returns the lock files of a project's view.
func lockPaths(cat *catalog.Catalog, project string) []string {
	st := cat.State()
	if v, ok := st.View(project); ok {
		return v.LockFiles()
	}
	return nil
}

// checkScope validates the project and the roots a client names and
// returns the key its View is registered under: the project's own key
// when the client sent no roots, or roots equal to the daemon's own
// (bundled, the current configuration's); else the key of the client's
// Scope, whose View resolves over the client's roots.
func (in *ingest) checkScope(c query.Common, bundled []string) (string, error) {
	key, err := in.checkProject(c.Project)
	if err != nil || c.Roots == nil {
		return key, err
	}
	r := c.Roots
	if len(r.Bundled) > query.MaxBundledRoots {
		return "", query.Errorf(query.CodeInvalidParams, "roots: %d bundled roots, more than the %d taken", len(r.Bundled), query.MaxBundledRoots)
	}
	for _, p := range append([]string{r.Home}, r.Bundled...) {
		switch {
		case p == "":
		case strings.ContainsRune(p, 0):
			return "", query.Errorf(query.CodeInvalidParams, "roots: %q holds a NUL byte", p)
		case !filepath.IsAbs(p) || filepath.Clean(p) != p:
			return "", query.Errorf(query.CodeInvalidParams, "roots: %q is not an absolute, clean path", p)
		}
	}
	for _, b := range r.Bundled {
		if why := rootRefusal(b, in.homeDir, r.Home); why != "" {
			in.warnNew(fmt.Sprintf("a client's bundled root %s not watched: %s", b, why))
			return "", query.Errorf(query.CodeInvalidParams, "roots: bundled root %s is not watched: %s; a root holds collections, not the tree around them", b, why)
		}
	}
	if err := in.checkCollection(r.Collection, r.Home); err != nil {
		return "", err
	}
	if r.Home == in.homeDir && slices.Equal(r.Bundled, bundled) && r.Collection == "" {
		return key, nil
	}
	return in.cat.ScopeKey(catalog.Scope{Project: c.Project, Home: r.Home, Bundled: r.Bundled, Collection: r.Collection}), nil
}

// checkCollection validates the collection a client stands in (see
// query.Roots.Collection): "", or an absolute, clean path of an existing
// directory of the daemon's user, that holds no home directory.
func (in *ingest) checkCollection(dir, home string) error {
	if dir == "" {
		return nil
	}
	bad := func(format string, args ...any) error {
		return query.Errorf(query.CodeInvalidParams, "roots: collection %q: "+format, append([]any{dir}, args...)...)
	}
	switch {
	case strings.ContainsRune(dir, 0):
		return bad("holds a NUL byte")
	case !filepath.IsAbs(dir) || filepath.Clean(dir) != dir:
		return bad("is not an absolute, clean path")
	}
	if why := rootRefusal(dir, in.homeDir, home); why != "" {
		return bad("not watched: %s", why)
	}
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return bad("%v", errText(err))
	case !fi.IsDir():
		return bad("is not a directory")
	case !ownedBy(fi, in.ownerUID):
		return bad("belongs to another user; amplidex does not trust it")
	}
	return nil
}

// checkProject validates a project directory named by a client and
// returns the key it is registered under: "" stays ""; anything else must
// be an absolute, clean path without a NUL, of an existing directory that
// holds .amplifier/, both owned by the daemon's user.
func (in *ingest) checkProject(p string) (string, error) {
	if err := validProject(p, in.ownerUID); err != nil {
		return "", err
	}
	return in.cat.ProjectKey(p), nil
}

// validProject checks a project directory named by a client (see
// checkProject); the error is an *query.Error with CodeInvalidParams.
func validProject(p string, uid int) error {
	if p == "" {
		return nil
	}
	bad := func(format string, args ...any) error {
		return query.Errorf(query.CodeInvalidParams, "project %q: "+format, append([]any{p}, args...)...)
	}
	switch {
	case strings.ContainsRune(p, 0):
		return bad("holds a NUL byte")
	case !filepath.IsAbs(p):
		return bad("is not an absolute path")
	case filepath.Clean(p) != p:
		return bad("is not a clean path (want %s)", filepath.Clean(p))
	}
	for _, dir := range []string{p, filepath.Join(p, ".amplifier")} {
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist) && dir != p:
			return bad("has no .amplifier directory")
		case err != nil:
			return bad("%v", errText(err))
		case !fi.IsDir():
			return bad("%s is not a directory", dir)
		case !ownedBy(fi, uid):
			return bad("%s belongs to another user; amplidex does not trust it", dir)
		}
	}
	return nil
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// view returns the View of a project (registered on its first question,
// checked with checkProject before) and the version of the State it
// belongs to. Unless noSync is set, it first waits until every change
// made before it was called is handled. A client that goes away (ctx
// ends) before the project is registered leaves it unregistered.
func (in *ingest) view(ctx context.Context, project string, noSync bool) (*catalog.View, uint64, error) {
	if !noSync {
		if err := in.w.Flush(ctx); err != nil {
			return nil, 0, err
		}
		if err := in.wait(ctx, project); err != nil {
			return nil, 0, err
		}
		if changes := in.staleLocks([]string{project}); len(changes) > 0 {
			in.applied(in.cat.Update(changes...))
		}
	}
	st := in.cat.State()
	v, ok := st.View(project)
	if !ok {
		var err error
		for st, err = in.register(ctx, project); errors.Is(err, errAbandoned); st, err = in.register(ctx, project) {
		}
		if err != nil {
			return nil, 0, err
		}
		if !noSync {
			// Documents found empty by the first read settle first.
			if err := in.wait(ctx, project); err != nil {
				return nil, 0, err
			}
			st = in.cat.State()
		}
		if v, ok = st.View(project); !ok {
			// Forgotten while it was registered (a forget raced this
			// question): say so rather than answer for no project.
			return nil, 0, query.Errorf(query.CodeNotFound, "project %s was forgotten while it was registered; ask again", catalog.Label(project))
		}
	}
	in.mu.Lock()
	if _, ok := in.projects[project]; ok {
		in.projects[project] = in.now()
	}
	in.mu.Unlock()
	if err := unknownRoots(st, v); err != nil {
		return nil, 0, err
	}
	return v, st.Version, nil
}

// unknownRoots is the error of a View one of whose roots was never
// listed, its listings having failed: what the root holds is not known,
// and an answer without it would be wrong (a name it holds would resolve
// to a root below it). A root listed once keeps its last listing, and
// answers go on.
func unknownRoots(st *catalog.State, v *catalog.View) error {
	for _, ri := range st.Roots() {
		if ri.Unlisted && ri.Failed != "" && slices.Contains(v.Set.Roots, ri.Root) {
			return query.Errorf(query.CodeDegraded, "%s; trying again, ask later", ri.Failed)
		}
	}
	return nil
}

// register registers a project: its root is watched from now on, the
// catalog reads it, and it is remembered for the next run. Two
// registrations of one project share the work; a project beyond the bound
// forgets the one asked about least recently.
//
// A set of a client's own roots (a key of catalog.ScopeKey) is bounded
// apart (maxSets), and is not remembered for the next run: beyond the
// bound the set used least recently that no subscription follows is
// forgotten, and when every one is followed the registration is refused
// with CodeOverloaded.
//
// The work is the asking client's: once ctx ends, what it did is taken
// back at the next step (before each root is watched, before the roots
// are read), and register returns ctx's error; those who waited for it
// get errAbandoned, and run one of their own.
func (in *ingest) register(ctx context.Context, project string) (*catalog.State, error) {
	in.mu.Lock()
	if r := in.registering[project]; r != nil {
		r.waiters++
		in.mu.Unlock()
		select {
		case <-r.done:
			if r.abandoned {
				return nil, errAbandoned
			}
			return r.st, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		in.mu.Unlock()
		return nil, err
	}
	var evict string
	if _, known := in.projects[project]; !known {
		switch {
		case catalog.IsScopeKey(project):
			if in.countSets() >= in.maxSets {
				if evict = in.idlestSet(); evict == "" {
					in.mu.Unlock()
					return nil, query.Errorf(query.CodeOverloaded,
						"the daemon already follows %d sets of a client's roots, each in use, its limit; try again later", in.maxSets)
				}
			}
		case project != "" && in.countProjects() >= in.max:
			evict = in.oldest()
		}
	}
	r := &registration{done: make(chan struct{})}
	in.registering[project] = r
	in.mu.Unlock()
	defer func() {
		in.mu.Lock()
		delete(in.registering, project)
		in.mu.Unlock()
		close(r.done)
	}()
	if evict != "" {
		if catalog.IsScopeKey(evict) {
			in.log.Info("forgetting the client's roots used least recently", "project", catalog.Label(evict), "bound", in.maxSets)
		} else {
			in.log.Info("forgetting the project asked about least recently", "project", catalog.Label(evict), "bound", in.max)
		}
		in.forget(evict)
	}
	unlock := in.lockProject(project)
	defer unlock()
	defer in.mem.read()()
	// abandon takes back what the registration did once its client went
	// away: the watches it added that nothing else needs.
	var added []string
	abandon := func(done func()) (*catalog.State, error) {
		done()
		for _, p := range added {
			in.dropWatch(p)
		}
		r.abandoned, r.err = true, ctx.Err()
		return nil, r.err
	}
	// Status shows how far a project's registration got (the daemon's
	// own roots, key "", are the first scan's).
	watch := in.rootsToWatch(project)
	var rp *registering
	if len(watch) > 0 && in.progress != nil {
		dir, scope := project, (*query.Roots)(nil)
		if sc, ok := catalog.ParseScopeKey(project); ok {
			dir, scope = sc.Project, &query.Roots{Home: sc.Home, Bundled: sc.Bundled, Collection: sc.Collection}
		}
		rp = in.progress.begin(dir, scope, watch)
		defer in.progress.end(rp)
	}
	intended := sync.OnceFunc(in.intend(watch))
	defer intended()
	for _, root := range watch {
		if ctx.Err() != nil {
			return abandon(intended)
		}
		if err := in.addWatch(root.Path, in.w.AddRoot); err != nil {
			added = append(added, root.Path)
			intended()
			for _, p := range added {
				in.dropWatch(p)
			}
			r.err = in.tooLarge(root.Path, err)
			return nil, r.err
		}
		added = append(added, root.Path)
	}
	if ctx.Err() != nil {
		return abandon(intended)
	}
	if rp != nil {
		rp.phase.Store(regReading)
	}
	// The lock files are stat()ed before the catalog reads them: one
	// rewritten while it is read then looks changed to the next batch,
	// and is read again.
	stats := map[string]index.File{}
	for _, root := range in.cat.RootsOf(project) {
		if lp := discovery.LockPath(root); lp != "" {
			stats[lp] = lockStat(lp)
		}
	}
	r.st = in.applied(in.cat.AddProject(project))
	in.mu.Lock()
	in.projects[project] = in.now()
	for _, lp := range lockPaths(in.cat, project) {
		if _, ok := in.locks[lp]; !ok {
			st, known := stats[lp]
			if !known {
				st = lockStat(lp)
			}
			in.locks[lp] = st
		}
	}
	list := in.projectList()
	in.mu.Unlock()
	if !catalog.IsScopeKey(project) {
		if err := in.persist.saveProjects(list); err != nil {
			in.log.Warn("registered projects not saved for the next run", "err", err)
		}
	}
	return r.st, nil
}

// rootsToWatch returns the roots that registering the View of key adds to
// the watcher: its project's, for a project of the daemon's own roots
// (whose user and bundled roots are watched from the start), and every
// root of a client's Scope.
func (in *ingest) rootsToWatch(key string) []discovery.Root {
	if catalog.IsScopeKey(key) {
		return in.cat.RootsOf(key)
	}
	if key == "" {
		return nil
	}
	return discovery.Roots(key, "", nil)
}

// oldest returns the registered project asked about least recently (never
// the no-project view, nor a set of a client's roots). in.mu is held.
func (in *ingest) oldest() string {
	var best string
	var at time.Time
	for p, t := range in.projects {
		if p != "" && !catalog.IsScopeKey(p) && (best == "" || t.Before(at)) {
			best, at = p, t
		}
	}
	return best
}

// countProjects counts the registered projects, but for the no-project
// view and the sets of a client's roots. in.mu is held.
func (in *ingest) countProjects() int {
	n := 0
	for p := range in.projects {
		if p != "" && !catalog.IsScopeKey(p) {
			n++
		}
	}
	return n
}

// countSets counts the sets of a client's roots registered or being
// registered. in.mu is held.
func (in *ingest) countSets() int {
	n := 0
	for p := range in.projects {
		if catalog.IsScopeKey(p) {
			n++
		}
	}
	for p := range in.registering {
		if _, known := in.projects[p]; !known && catalog.IsScopeKey(p) {
			n++
		}
	}
	return n
}

// idlestSet returns the set of a client's roots used least recently that
// no subscription follows and no registration holds, or "" when there is
// none. in.mu is held.
func (in *ingest) idlestSet() string {
	var best string
	var at time.Time
	for p, t := range in.projects {
		if catalog.IsScopeKey(p) && in.following[p] == 0 && in.registering[p] == nil && (best == "" || t.Before(at)) {
			best, at = p, t
		}
	}
	return best
}

// follow counts a subscription of key's View, and returns the function
// that uncounts it; from then on key's time without use runs.
func (in *ingest) follow(key string) (unfollow func()) {
	in.mu.Lock()
	in.following[key]++
	in.mu.Unlock()
	return func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		if in.following[key]--; in.following[key] <= 0 {
			delete(in.following, key)
		}
		if _, ok := in.projects[key]; ok {
			in.projects[key] = in.now()
		}
	}
}

// idleSets returns the sets of a client's roots that no subscription
// follows, no registration holds, and nobody asked about since before.
func (in *ingest) idleSets(before time.Time) []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []string
	for p, t := range in.projects {
		if catalog.IsScopeKey(p) && in.following[p] == 0 && in.registering[p] == nil && t.Before(before) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// projectList returns the registered projects to remember for the next
// run, sorted: neither "" nor the sets of a client's roots, which a
// client registers again when it asks. in.mu is held.
func (in *ingest) projectList() []string {
	out := make([]string, 0, len(in.projects))
	for p := range in.projects {
		if p != "" && !catalog.IsScopeKey(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// forget drops a project: its View, and the watches of the roots no other
// project needs.
func (in *ingest) forget(project string) {
	unlock := in.lockProject(project)
	defer unlock()
	in.mu.Lock()
	delete(in.projects, project)
	in.mu.Unlock()
	in.applied(in.cat.RemoveProject(project))
	for _, root := range in.rootsToWatch(project) {
		in.dropWatch(root.Path)
	}
	in.mu.Lock()
	for lp := range in.locks {
		if !slicesContains(in.cat, lp) {
			delete(in.locks, lp)
		}
	}
	list := in.projectList()
	in.mu.Unlock()
	if !catalog.IsScopeKey(project) {
		if err := in.persist.saveProjects(list); err != nil {
			in.log.Warn("registered projects not saved for the next run", "err", err)
		}
	}
}

// slicesContains reports whether a lock file belongs to some View.
func slicesContains(cat *catalog.Catalog, lp string) bool {
	for _, v := range cat.State().Views() {
		for _, l := range v.LockFiles() {
			if l == lp {
				return true
			}
		}
	}
	return false
}

// registerSoon registers project on a goroutine the ingest's close waits
// for, unless the ingest has stopped or the project is being registered:
// the work a first resolve answered without (see firstResolve).
func (in *ingest) registerSoon(project string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.stopped || in.registering[project] != nil {
		return
	}
	in.workers.Add(1)
	go func() {
		defer in.workers.Done()
		if _, err := in.register(context.Background(), project); err != nil {
			in.log.Warn("project not registered after its first answer", "project", catalog.Label(project), "err", err)
		}
	}()
}

// registered returns the registered projects and when each was last
// asked about.
func (in *ingest) registered() map[string]time.Time {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make(map[string]time.Time, len(in.projects))
	for p, t := range in.projects {
		if p != "" {
			out[p] = t
		}
	}
	return out
}
