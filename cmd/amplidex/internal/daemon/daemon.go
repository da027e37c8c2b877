package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/index"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// ErrRunning is returned by Start when another daemon already runs for
// this user; the error names its pid when it is known.
var ErrRunning = errors.New("daemon: another amplidex daemon is running")

// Options configure a Daemon.
type Options struct {
	// Paths are amplidex's own files: index, socket, pid file.
	Paths query.Paths
	// Home is the user's home directory, whose .amplifier/collections is
	// the user root.
	Home string
	// Bundled are the bundled roots, lowest precedence.
	Bundled []string
	// Schema is passed to the discovery loader.
	Schema discovery.SchemaOptions
	// Watch configures the watcher.
	Watch watcher.Options
	// Logger receives the daemon's log; nil discards it.
	Logger *slog.Logger
	// ReadFile reads files for discovery; os.ReadFile when nil. Tests count
	// reads with it.
	ReadFile func(string) ([]byte, error)
	// Now tells the time; time.Now when nil.
	Now func() time.Time
	// NoSync skips fsync of index commits (tests and benchmarks only).
	NoSync bool
	// Prepare, when set, keeps the prepared bundle of each of Manifests
	// warm: a change of a manifest's bytes builds its new entry in the
	// background.
	Prepare   *prepare.Cache
	Manifests []string
	// NoSocket runs the engine without serving the socket (an in-process
	// `amplidex watch`).
	NoSocket bool
}

// rootState is one watched root and the collections last loaded from it.
type rootState struct {
	root discovery.Root
	cols map[string]*discovery.Collection // by collection directory
	// sorted holds cols in resolution order; nil after cols changed.
	sorted []*discovery.Collection
}

// ordered returns the root's collections in resolution order.
func (rs *rootState) ordered() []*discovery.Collection {
	if rs.sorted == nil {
		rs.sorted = make([]*discovery.Collection, 0, len(rs.cols))
		for _, c := range rs.cols {
			rs.sorted = append(rs.sorted, c)
		}
		discovery.SortInRoot(rs.sorted)
	}
	return rs.sorted
}

// state is what queries read: published whole after every batch.
type state struct {
	snaps map[string]*query.Snapshot // by project directory
}

// Daemon is a running engine. Start it with Start; stop it with Close.
type Daemon struct {
	opts   Options
	log    *slog.Logger
	now    func() time.Time
	start  time.Time
	pid    int
	store  *index.Store
	cache  *fileCache
	w      *watcher.Watcher
	srv    *query.Server
	closed chan struct{}
	// writeWake wakes the index writer; stopWriter ends it (after a last
	// write), and writerDone is closed when it has.
	writeWake  chan struct{}
	stopWriter chan struct{}
	writerDone chan struct{}
	// ctx ends when the daemon closes; background builds run under it.
	ctx    context.Context
	cancel context.CancelFunc
	builds sync.WaitGroup

	state atomic.Pointer[state]

	mu       sync.Mutex // guards fields below
	loader   *discovery.Loader
	bundled  []string
	roots    map[string]*rootState // by root path
	projects map[string]bool       // registered project directories
	warnings []string
	subs     map[*subscriber]struct{}
	// stale is set when batches changed the roots since the last publish;
	// publishPending when a delayed publish is scheduled.
	stale          bool
	publishPending bool
	lastPublish    time.Time
	// unsaved is set while index writes fail; unsavedGone holds the
	// deletions still to write, retryPending a scheduled retry. writeGen
	// counts commits, writtenGen the last one the writer has handled;
	// wrote is signalled when it moves.
	unsaved      bool
	unsavedGone  []string
	retryPending bool
	writeGen     uint64
	writtenGen   uint64
	wrote        *sync.Cond
	// fresh holds the projects whose view was built since the last
	// publish; any other view is rebuilt when it is asked for.
	fresh map[string]bool
	// checkers keep each project's cross-reference diagnostics between
	// publishes, so that a batch re-checks only what it can affect.
	checkers map[string]*discovery.Checker
	// bundles are the watched manifests; bundleDirs indexes them by the
	// directory watched for them. Both are fixed after Start.
	bundles    []*bundle
	bundleDirs map[string][]*bundle
}

// Start opens the index, reconciles it with the disk, starts watching and
// serves the socket. A second daemon fails with ErrRunning.
func Start(ctx context.Context, opts Options) (*Daemon, error) {
	d := &Daemon{
		opts: opts, log: opts.Logger, now: opts.Now, pid: os.Getpid(),
		cache: newFileCache(), closed: make(chan struct{}),
		writeWake: make(chan struct{}, 1), stopWriter: make(chan struct{}), writerDone: make(chan struct{}),
		roots: map[string]*rootState{}, projects: map[string]bool{}, subs: map[*subscriber]struct{}{},
		bundled: opts.Bundled, bundleDirs: map[string][]*bundle{}, checkers: map[string]*discovery.Checker{}, fresh: map[string]bool{},
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.wrote = sync.NewCond(&d.mu)
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	d.start = d.now()
	d.loader = &discovery.Loader{Schema: opts.Schema, Cache: d.cache, ReadFile: opts.ReadFile}
	d.state.Store(&state{snaps: map[string]*query.Snapshot{}})

	if err := os.MkdirAll(filepath.Dir(opts.Paths.Index), 0o700); err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	store, err := index.Open(opts.Paths.Index, index.Options{Timeout: 500 * time.Millisecond, Logger: d.log, NoSync: opts.NoSync})
	if errors.Is(err, index.ErrLocked) {
		return nil, d.runningError()
	}
	if err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	d.store = store
	d.warnings = append(d.warnings, store.Warnings()...)
	if err := d.writePid(); err != nil {
		store.Close()
		return nil, err
	}
	go d.writer()
	wopts := opts.Watch
	wopts.Logger = d.log
	if wopts.SyncDir == "" {
		wopts.SyncDir = opts.Paths.StateDir
	}
	d.w, err = watcher.New(wopts, d.handleBatch)
	if err != nil {
		d.closeAll()
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	if err := d.reconcile(); err != nil {
		d.closeAll()
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	// The first scan leaves much garbage (parse trees, file contents);
	// give it back now rather than keep it for the daemon's whole life.
	debug.FreeOSMemory()
	if err := d.startBundles(); err != nil {
		d.closeAll()
		return nil, fmt.Errorf("start daemon: watch manifests: %w", err)
	}
	if opts.NoSocket {
		return d, nil
	}
	d.srv = query.NewServer(d.mux(), d.clock)
	d.srv.Logger = d.log
	if err := d.srv.Listen(opts.Paths.Socket); err != nil {
		d.srv = nil
		d.closeAll()
		if errors.Is(err, query.ErrInUse) {
			return nil, d.runningError()
		}
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	d.log.Info("daemon ready", "socket", opts.Paths.Socket, "index", opts.Paths.Index,
		"files", len(d.cache.paths()), "analyzed", d.cache.analyzed(), "took", d.now().Sub(d.start).Round(time.Millisecond))
	return d, nil
}

// loadIndex fills the file cache from the index. An index with a record
// that does not decode is kept aside and replaced by an empty one, as Open
// does for a file it cannot use.
func (d *Daemon) loadIndex() error {
	dropped, err := d.cache.load(d.store)
	if errors.Is(err, index.ErrCorrupt) {
		if err := d.replaceCorruptIndex(err); err != nil {
			return err
		}
		dropped, err = d.cache.load(d.store)
	}
	if err != nil {
		return fmt.Errorf("load index: %w", err)
	}
	if dropped > 0 {
		d.log.Warn("index records without usable facts; their files will be read again", "count", dropped)
	}
	return nil
}

// replaceCorruptIndex moves the open index aside and opens a new one.
func (d *Daemon) replaceCorruptIndex(cause error) error {
	path := d.store.Path()
	d.store.Close()
	aside := fmt.Sprintf("%s.corrupt-%d", path, d.now().Unix())
	if err := os.Rename(path, aside); err != nil {
		return fmt.Errorf("start daemon: move corrupt index aside: %w", err)
	}
	w := fmt.Sprintf("index %s had an unreadable record (%v); kept as %s and rebuilt", path, cause, aside)
	d.log.Warn(w)
	d.warnings = append(d.warnings, w)
	d.cache = newFileCache()
	d.loader.Cache = d.cache
	store, err := index.Open(path, index.Options{Timeout: 500 * time.Millisecond, Logger: d.log, NoSync: d.opts.NoSync})
	if err != nil {
		return fmt.Errorf("start daemon: %w", err)
	}
	d.store = store
	return nil
}

// runningError names the pid of the daemon that holds the index.
func (d *Daemon) runningError() error {
	if b, err := os.ReadFile(d.opts.Paths.PidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			return fmt.Errorf("%w (pid %d; socket %s)", ErrRunning, pid, d.opts.Paths.Socket)
		}
	}
	return fmt.Errorf("%w (index %s is locked)", ErrRunning, d.opts.Paths.Index)
}

func (d *Daemon) writePid() error {
	p := d.opts.Paths.PidFile
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	tmp := p + ".tmp"
	err := os.WriteFile(tmp, []byte(strconv.Itoa(d.pid)+"\n"), 0o600)
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("start daemon: write pid file: %w", err)
	}
	return nil
}

// reconcile registers the user and bundled roots and the projects known
// from the last run, scans them (unchanged files come from the index),
// drops the records of files that are gone, and publishes.
func (d *Daemon) reconcile() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var projects []string
	if b, err := d.store.Meta("projects"); err == nil && b != nil {
		_ = json.Unmarshal(b, &projects)
	}
	// Decode the index while the watcher walks the roots: the two are
	// independent, and both must be done before the roots are scanned.
	loaded := make(chan error, 1)
	go func() { loaded <- d.loadIndex() }()
	roots := discovery.Roots("", d.opts.Home, d.bundled)
	for _, p := range projects {
		roots = append(roots, discovery.Roots(p, "", nil)...)
	}
	var werr error
	for _, r := range roots {
		if err := d.w.AddRoot(r.Path); err != nil && werr == nil {
			werr = fmt.Errorf("watch %s: %w", r.Path, err)
		}
	}
	if err := <-loaded; err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	for _, r := range discovery.Roots("", d.opts.Home, d.bundled) {
		if err := d.addRoot(r); err != nil {
			return err
		}
	}
	for _, p := range projects {
		if err := d.addProject(p); err != nil {
			d.log.Warn("project from the last run not restored", "project", p, "err", err)
		}
	}
	// Records of files no collection holds any more.
	live := map[string]bool{}
	for _, rs := range d.roots {
		for _, c := range rs.cols {
			for p := range c.Facts {
				live[p] = true
			}
		}
	}
	var gone []string
	for _, p := range d.cache.paths() {
		if !live[p] {
			gone = append(gone, p)
		}
	}
	d.cache.forget(gone)
	return d.commit(gone, true)
}

// addRoot starts watching r and loads its collections. d.mu is held.
func (d *Daemon) addRoot(r discovery.Root) error {
	if _, ok := d.roots[r.Path]; ok {
		return nil
	}
	if err := d.w.AddRoot(r.Path); err != nil {
		return fmt.Errorf("watch %s: %w", r.Path, err)
	}
	rs := &rootState{root: r, cols: map[string]*discovery.Collection{}}
	d.roots[r.Path] = rs
	d.rescan(rs)
	return nil
}

// addProject registers a project: its root is watched from now on, and it
// gets a snapshot of its own. d.mu is held.
func (d *Daemon) addProject(project string) error {
	if d.projects[project] {
		return nil
	}
	for _, r := range discovery.Roots(project, "", nil) {
		if err := d.addRoot(r); err != nil {
			return err
		}
	}
	d.projects[project] = true
	list := make([]string, 0, len(d.projects))
	for p := range d.projects {
		list = append(list, p)
	}
	sort.Strings(list)
	b, _ := json.Marshal(list)
	// A read-only index (Open warned) remembers no projects for the next
	// run; this one still serves them.
	if err := d.store.SetMeta("projects", b); err != nil && !errors.Is(err, index.ErrReadOnly) {
		return err
	}
	return nil
}

// project makes sure project is registered and its snapshot is up to date
// with every batch handled so far, and returns it.
func (d *Daemon) project(project string) (*query.Snapshot, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if project != "" && !d.projects[project] {
		if err := d.addProject(project); err != nil {
			return nil, err
		}
		if err := d.commit(nil, true); err != nil {
			return nil, err
		}
	}
	if d.stale {
		d.publish()
	}
	return d.view(project), nil
}

// published returns the project's snapshot without waiting for pending
// changes or for the engine's lock (a query that opted out of
// read-your-writes): brought up to date with the batches handled so far
// when the lock is free, else the one built last. A project without one yet
// is registered first.
func (d *Daemon) published(project string) (*query.Snapshot, error) {
	snap := d.state.Load().snaps[project]
	if snap == nil {
		return d.project(project)
	}
	if d.mu.TryLock() {
		if d.stale {
			d.publish()
		}
		snap = d.view(project)
		d.mu.Unlock()
	}
	return snap, nil
}

// handleBatch is the watcher's handle function: it re-discovers the
// collections the batch touches, writes the index and publishes.
func (d *Daemon) handleBatch(b watcher.Batch) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.bundleDirs[b.Root]; ok {
		d.bundleBatch(b.Root)
	}
	rs := d.roots[b.Root]
	if rs == nil {
		return
	}
	var gone []string
	if b.Rescan {
		d.log.Info("rescanning root", "root", b.Root, "reason", b.Reasons)
		// A root appearing is expected; anything else with it is not.
		if b.Reasons != 0 && b.Reasons != watcher.ReasonRootAppeared {
			d.warnings = append(d.warnings, fmt.Sprintf("%s: %s: rescanned %s", d.now().Format(time.RFC3339), b.Root, b.Reasons))
		}
		gone = d.rescan(rs)
	} else {
		dirty := map[string]bool{}
		for _, p := range b.Paths {
			rel, err := filepath.Rel(b.Root, p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				continue
			}
			if rel == "." {
				gone = append(gone, d.rescan(rs)...)
				dirty = nil
				break
			}
			first, _, _ := strings.Cut(rel, string(filepath.Separator))
			dirty[filepath.Join(b.Root, first)] = true
		}
		for dir := range dirty {
			gone = append(gone, d.reload(rs, dir)...)
		}
	}
	if err := d.commit(gone, false); err != nil {
		d.log.Error("index write failed; the snapshot is still updated", "err", err)
	}
}

// rescan reloads every collection of a root, loading them in parallel,
// and returns the paths of files that are gone. d.mu is held.
func (d *Daemon) rescan(rs *rootState) []string {
	seen := map[string]bool{}
	var dirs []string
	add := func(dir string) {
		if !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	for dir := range rs.cols {
		add(dir)
	}
	if entries, err := os.ReadDir(rs.root.Path); err == nil {
		for _, e := range entries {
			add(filepath.Join(rs.root.Path, e.Name()))
		}
	}
	d.cache.setRoot(rs.root.Path)
	loaded := make([]*discovery.Collection, len(dirs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(dirs); i = int(next.Add(1)) - 1 {
				loaded[i] = d.load(rs, dirs[i])
			}
		}()
	}
	wg.Wait()
	var gone []string
	for i, dir := range dirs {
		gone = append(gone, d.replace(rs, dir, loaded[i])...)
	}
	return gone
}

// reload loads the collection directory dir of root rs again, returning the
// paths of files it held before and holds no more. d.mu is held.
func (d *Daemon) reload(rs *rootState, dir string) []string {
	d.cache.setRoot(rs.root.Path)
	return d.replace(rs, dir, d.load(rs, dir))
}

// load reads the collection directory dir of root rs; nil when it is not
// one (any more). It may run in parallel with other loads of the same root.
func (d *Daemon) load(rs *rootState, dir string) *discovery.Collection {
	name := filepath.Base(dir)
	if discovery.IsEditorDropping(name) || strings.HasPrefix(name, "_") {
		return nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	return d.loader.Load(rs.root, dir)
}

// replace puts c (nil: nothing) in the place of dir's collection and
// returns the paths of files the old one held and c does not. d.mu is held.
func (d *Daemon) replace(rs *rootState, dir string, c *discovery.Collection) []string {
	old := rs.cols[dir]
	if c == nil {
		delete(rs.cols, dir)
	} else {
		rs.cols[dir] = c
	}
	if c != nil || old != nil {
		rs.sorted = nil
	}
	if old == nil {
		return nil
	}
	var gone []string
	for p := range old.Facts {
		if c == nil || c.Facts[p] == nil {
			gone = append(gone, p)
		}
	}
	return d.cache.forget(gone)
}

// dropRoot forgets every file of a root no longer watched. d.mu is held.
func (d *Daemon) dropRoot(rs *rootState) []string {
	var paths []string
	for _, c := range rs.cols {
		for p := range c.Facts {
			paths = append(paths, p)
		}
	}
	return d.cache.forget(paths)
}

// publishEvery bounds how often batches rebuild the snapshots: during a
// burst, batches only update the index, and the snapshots are rebuilt at
// most this often, or at once when a query that waits for changes comes.
const publishEvery = 100 * time.Millisecond

// commit publishes, at once when force is set or the last publish is old
// enough, else a little later; and hands what the cache stored and the
// deletions to the index writer. d.mu is held.
func (d *Daemon) commit(gone []string, force bool) error {
	// Publish first: subscribers and queries need not wait for the index
	// write and its fsync. Clocks read the index's tick, so an answer may
	// carry a clock a little behind what it shows, never ahead.
	d.stale = true
	switch {
	case force || d.now().Sub(d.lastPublish) >= publishEvery:
		d.publish()
	case !d.publishPending:
		d.publishPending = true
		time.AfterFunc(publishEvery, func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.publishPending = false
			if d.stale && d.ctx.Err() == nil {
				d.publish()
			}
		})
	}
	d.unsavedGone = append(d.unsavedGone, gone...)
	d.writeGen++
	d.wakeWriter()
	return nil
}

// publish makes every project's view out of date with the batches handled
// so far and wakes the subscribers; a view's snapshot is built when it is
// next asked for (by a query that waits for its writes, or a subscriber),
// so a batch costs nothing for a project nobody is looking at. d.mu is
// held.
func (d *Daemon) publish() {
	d.fresh = map[string]bool{}
	d.stale, d.lastPublish = false, d.now()
	for s := range d.subs {
		s.notify()
	}
}

// view returns the project's snapshot, building it when batches came since
// it was built: the set over the project's roots, the cross-references
// checked again where they can have changed, and the lock files. Views of
// other projects are kept as they are. d.mu is held.
func (d *Daemon) view(project string) *query.Snapshot {
	old := d.state.Load()
	if snap := old.snaps[project]; snap != nil && d.fresh[project] {
		return snap
	}
	roots := discovery.Roots(project, d.opts.Home, d.bundled)
	cols := make([][]*discovery.Collection, len(roots))
	for i, r := range roots {
		if rs := d.roots[r.Path]; rs != nil {
			cols[i] = rs.ordered()
		}
	}
	set := discovery.NewSet(roots, cols)
	k := d.checkers[project]
	if k == nil {
		k = &discovery.Checker{}
		d.checkers[project] = k
	}
	snap := query.NewSnapshotFrom(set, k.Check(set), discovery.CheckLocks(set))
	st := &state{snaps: maps.Clone(old.snaps)}
	st.snaps[project] = snap
	d.state.Store(st)
	d.fresh[project] = true
	return snap
}

// clock is the current clock of this daemon.
func (d *Daemon) clock() query.Clock {
	return query.Clock{Start: d.start.UnixNano(), PID: d.pid, Tick: d.store.Tick()}
}

// Analyzed returns how many files the daemon analyzed (read and parsed)
// rather than took from the index, since it started.
func (d *Daemon) Analyzed() int { return d.cache.analyzed() }

// Flush waits until every change made before it was called is indexed.
func (d *Daemon) Flush(ctx context.Context) error { return d.w.Flush(ctx) }

// Done is closed when the daemon has stopped.
func (d *Daemon) Done() <-chan struct{} { return d.closed }

// Close stops the daemon: the socket server first (no new queries, and
// the socket file is removed), then the watcher (no new batches), then the
// background builds (cancelled, and waited for), then the index, and last
// the pid file.
func (d *Daemon) Close() error {
	select {
	case <-d.closed:
		return nil
	default:
	}
	err := d.closeAll()
	close(d.closed)
	return err
}

func (d *Daemon) closeAll() error {
	var errs []error
	if d.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, d.srv.Shutdown(ctx))
		cancel()
	}
	if d.w != nil {
		errs = append(errs, d.w.Close())
	}
	d.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	d.waitBundles(ctx)
	cancel()
	if d.store != nil {
		close(d.stopWriter)
		<-d.writerDone
		errs = append(errs, d.store.Close())
		if b, err := os.ReadFile(d.opts.Paths.PidFile); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(d.pid) {
			os.Remove(d.opts.Paths.PidFile)
		}
	}
	return errors.Join(errs...)
}

// Reload applies a new configuration: bundled roots added or removed, and
// schema options (every file is analyzed again when they change).
func (d *Daemon) Reload(bundled []string, schema discovery.SchemaOptions) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if schema != d.loader.Schema {
		d.loader = &discovery.Loader{Schema: schema, Cache: d.cache, ReadFile: d.opts.ReadFile}
		d.cache.clearFacts()
	}
	want := map[string]bool{}
	for _, r := range discovery.Roots("", "", bundled) {
		want[r.Path] = true
		if err := d.addRoot(r); err != nil {
			return err
		}
	}
	var gone []string
	for p, rs := range d.roots {
		if rs.root.Kind == discovery.RootBundled && !want[p] {
			gone = append(gone, d.dropRoot(rs)...)
			_ = d.w.RemoveRoot(p)
			delete(d.roots, p)
		}
	}
	d.bundled = bundled
	for _, rs := range d.roots {
		gone = append(gone, d.rescan(rs)...)
	}
	return d.commit(gone, true)
}
