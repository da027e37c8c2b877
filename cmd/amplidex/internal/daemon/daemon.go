package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/index"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/server"
	"github.com/amplidex/amplidex/watcher"
)

// ErrRunning is returned by Start when another daemon already runs for
// this user; the error names its pid when it is known.
var ErrRunning = errors.New("daemon: another amplidex daemon is running")

// ErrClosed is returned by Reload once Close has begun.
var ErrClosed = errors.New("daemon: closed")

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
	Schema schema.Options
	// Watch configures the watcher.
	Watch watcher.Options
	// Logger receives the daemon's log; nil discards it.
	Logger *slog.Logger
	// ReadFile reads files for discovery; syntax.ReadFile when nil.
	// Tests count reads with it.
	ReadFile func(string) ([]byte, error)
	// ReadDir lists directories for discovery; os.ReadDir when nil. Tests
	// make listings fail with it.
	ReadDir func(string) ([]os.DirEntry, error)
	// Stat tells discovery what a path is (a collection's layout, a file
	// before it is read); os.Stat when nil. Tests inject failures here.
	Stat func(string) (fs.FileInfo, error)
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
	// MaxProjects bounds the registered projects; DefaultMaxProjects when
	// zero.
	MaxProjects int
	// MaxRootSets bounds the sets of a client's own roots (the
	// query.Common.Roots that differ from the daemon's) followed at once;
	// DefaultMaxRootSets when zero. Beyond it, the set used least
	// recently that no subscription follows is forgotten; when every one
	// is followed, a question naming another is answered overloaded.
	MaxRootSets int
	// ForgetRootSetsAfter forgets a set of a client's roots that no
	// client used for that long (no question named it, no subscription
	// follows it); DefaultForgetRootSetsAfter when zero. Such sets are
	// never remembered for the next run.
	ForgetRootSetsAfter time.Duration
	// MaxConns and MaxPeerConns bound the socket's connections, in all
	// and per client process, MaxRequests and MaxPeerRequests the
	// requests being answered (see server.Server); the server's defaults when
	// zero.
	MaxConns, MaxPeerConns       int
	MaxRequests, MaxPeerRequests int
	// Listener, when set, is served instead of a socket made at
	// Paths.Socket: the one systemd made and handed over (socket
	// activation). The daemon closes it, and leaves the socket file.
	Listener *net.UnixListener
	// Mode is how the daemon was started, for status and for clients
	// deciding whether they may replace it; ModeForeground when empty.
	Mode query.Mode
	// Build is the build status reports; query.ReadBuild() when zero.
	Build query.Build
	// ForgetAfter drops a project nobody asked about for that long;
	// DefaultForgetAfter when zero, never when negative. A project whose
	// directory is gone is dropped whatever its age.
	ForgetAfter time.Duration
	// PruneEvery is how often projects are checked for that;
	// DefaultPruneEvery when zero.
	PruneEvery time.Duration
	// IdleExit, when positive, stops the daemon once no client has been
	// connected to its socket for that long: no connection open, so no
	// request and no subscription. StopRequested is closed then, as for a
	// shutdown request. Zero: never (a daemon in the foreground, or the
	// service manager's). A reload may change it.
	IdleExit time.Duration
	// Memory is the process's memory policy (see Memory): the zero value
	// leaves the runtime's settings alone, and gives memory back only when
	// the daemon ends a piece of work it knows to be large.
	Memory Memory
}

// config is the part of the options a reload changes, with the bundles
// built for its manifests. Reload publishes a new one whole (Daemon.cfg);
// one published is never written again, so a reader loads it once and
// uses that one throughout.
type config struct {
	bundled   []string
	schema    schema.Options
	manifests []string
	prepare   *prepare.Cache
	// bundles keep the manifests warm; a reload that changes the manifests
	// or the cache makes new ones and closes these.
	bundles *bundles
}

// Daemon is a running engine. Start it with Start; stop it with Close.
type Daemon struct {
	// opts are the options Start was given, never written after Start
	// returns. Those a reload changes (Bundled, Schema, Manifests and
	// Prepare) are read from cfg instead.
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	start    time.Time
	pid      int
	cat      *catalog.Catalog
	w        *watcher.Watcher
	persist  *persister
	subs     *subscriptions
	ingest   *ingest
	srv      *server.Server
	warnings *warnings
	closed   chan struct{}
	// ready is closed when the first scan is done: until then only
	// status, version and shutdown answer, and every other method waits.
	// progress counts what the scan has seen.
	ready    chan struct{}
	progress *progress
	// early is the summary the last run left, which answers a no_sync
	// resolve until the first scan ends (see early.go); nil after.
	early atomic.Pointer[summary]
	// prior holds the cross-reference results the last run left, which
	// spare the first scan checking again what did not change (see
	// checks.go); nil after it.
	prior atomic.Pointer[map[string]*catalog.Checks]
	// mem keeps the memory policy (Options.Memory) in force.
	mem *memory
	// listings are the listings of the first scan's roots that the
	// watcher's walks made, for the first scan's loader (see listings);
	// nil once the first scan has ended.
	listings atomic.Pointer[listings]
	// stopReq is closed when a client asked the daemon to stop, or it
	// had no client for Options.IdleExit.
	stopReq  chan struct{}
	stopOnce sync.Once
	// pruner forgets projects that are gone or unused.
	pruner *pruner
	// idle asks the daemon to stop once it has had no client for
	// Options.IdleExit; nil without a socket.
	idle *idler
	// cfg is the configuration in force (see config).
	cfg atomic.Pointer[config]
	// watchFail, when set, fails a reload's watch of a path (a test hook).
	watchFail func(path string) error
	// bidx serves the bundles of the places clients stand in.
	bidx *bundleIndex

	// reloadMu lets one Reload run at a time, and Close wait for the one
	// running; no request takes it.
	reloadMu sync.Mutex // guards fields below
	closing  bool       // Close has begun: no reload any more

	closeOnce sync.Once
	closeErr  error
}

// Start opens the index, serves the socket, then reconciles the index
// with the disk and starts watching: the first scan. The socket answers
// from the moment the index is open, status with the scan's progress;
// other questions wait for the scan. Start returns once the scan is done.
// A second daemon fails with ErrRunning before it serves anything.
func Start(ctx context.Context, opts Options) (*Daemon, error) {
	d := &Daemon{opts: opts, log: opts.Logger, now: opts.Now, pid: os.Getpid(),
		subs: newSubscriptions(), closed: make(chan struct{}), ready: make(chan struct{}),
		stopReq: make(chan struct{})}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	d.start = d.now()
	d.progress = newProgress(d.now)
	d.warnings = &warnings{now: d.now}
	d.mem = newMemory(opts.Memory, func() {
		began := time.Now()
		debug.FreeOSMemory()
		d.log.Debug("a burst of work ended: memory given back", "took", time.Since(began).Round(time.Microsecond))
	})
	if opts.MaxProjects <= 0 {
		opts.MaxProjects = DefaultMaxProjects
		d.opts.MaxProjects = DefaultMaxProjects
	}
	if d.opts.MaxRootSets <= 0 {
		d.opts.MaxRootSets = DefaultMaxRootSets
	}
	if d.opts.ForgetRootSetsAfter <= 0 {
		d.opts.ForgetRootSetsAfter = DefaultForgetRootSetsAfter
	}
	if d.opts.Mode == "" {
		d.opts.Mode = query.ModeForeground
	}
	if d.opts.Build == (query.Build{}) {
		d.opts.Build = query.ReadBuild()
	}

	if err := os.MkdirAll(filepath.Dir(opts.Paths.Index), 0o700); err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	store, err := d.openIndex()
	if err != nil {
		return nil, err
	}
	if err := d.writePid(); err != nil {
		store.Close()
		return nil, err
	}
	d.persist = newPersister(store, d.log, d.warnings.add)
	d.persist.ended = d.mem.ended
	d.cfg.Store(&config{bundled: d.ownBundled(opts.Bundled), schema: opts.Schema, manifests: slices.Clone(opts.Manifests),
		prepare: opts.Prepare, bundles: newBundles(opts.Prepare, opts.Manifests, d.log, d.now)})
	d.early.Store(d.loadSummary())
	if !opts.NoSocket {
		if err := d.serve(); err != nil {
			d.Close()
			if errors.Is(err, server.ErrInUse) {
				return nil, d.runningError()
			}
			return nil, fmt.Errorf("start daemon: %w", err)
		}
		d.log.Info("daemon listening; first scan", "socket", d.socketPath(), "mode", d.opts.Mode,
			"socket_activated", opts.Listener != nil)
	}
	if err := d.open(); err != nil {
		d.Close()
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	// The first scan is done: the last run's summary, which answered
	// while it ran, and the last run's checks, which its views took in,
	// are garbage, like the scan's parse trees and file contents. Give
	// it all back now rather than keep it for the daemon's whole life
	// (at 10,000 collections the summary and the checks are about 8 MiB
	// of RssAnon after a restart).
	d.early.Store(nil)
	d.prior.Store(nil)
	d.mem.ended()
	d.restoreLastUsed()
	d.mem.settle()
	close(d.ready)
	if d.idle != nil {
		d.idle.start()
	}
	d.pruner = d.startPruner()
	if opts.Memory.TrimEvery > 0 {
		d.mem.every(opts.Memory.TrimEvery)
	}
	d.log.Info("daemon ready", "socket", d.socketPath(), "index", opts.Paths.Index,
		"files", files(d.cat.State()), "analyzed", d.persist.cache.analyzed(), "took", d.now().Sub(d.start).Round(time.Millisecond))
	return d, nil
}

// serve starts the socket server: on the handed listener, or on a socket
// of its own.
func (d *Daemon) serve() error {
	srv := server.New(d.mux(), d.clockNow)
	srv.Logger = d.log
	d.idle = newIdler(d.opts.IdleExit, d.now, func(after time.Duration) {
		d.requestStop("no client for " + after.String())
	})
	srv.Activity = d.idle.activity
	srv.MaxConns, srv.MaxPeerConns = d.opts.MaxConns, d.opts.MaxPeerConns
	srv.MaxRequests, srv.MaxPeerRequests = d.opts.MaxRequests, d.opts.MaxPeerRequests
	srv.Build = d.opts.Build // the build "version" reports, which clients compare
	// Set before the first question can come: status asks it where the
	// socket is as soon as the socket answers.
	d.srv = srv
	var err error
	if d.opts.Listener != nil {
		err = srv.Serve(d.opts.Listener)
	} else {
		err = srv.Listen(d.opts.Paths.Socket)
	}
	if err != nil {
		d.srv = nil
		return err
	}
	return nil
}

// isReady reports whether the first scan is done.
func (d *Daemon) isReady() bool {
	select {
	case <-d.ready:
		return true
	default:
		return false
	}
}

// waitReady waits until the first scan is done, ctx ends or the daemon
// stops.
func (d *Daemon) waitReady(ctx context.Context) error {
	if d.isReady() {
		return nil
	}
	select {
	case <-d.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-d.closed:
		return query.Errorf(query.CodeShuttingDown, "the daemon stopped before its first scan ended")
	}
}

// clockNow is the clock of the latest State; before the first scan ends,
// that of tick 0.
func (d *Daemon) clockNow() query.Clock {
	if !d.isReady() {
		return d.clockAt(0)
	}
	return d.clockAt(d.cat.State().Version)
}

// StopRequested is closed when a client asked the daemon to stop
// ("shutdown"), or when it has had no client for Options.IdleExit; the
// owner of the daemon then calls Close.
func (d *Daemon) StopRequested() <-chan struct{} { return d.stopReq }

// requestStop asks the owner to stop the daemon, saying why in the log.
func (d *Daemon) requestStop(why string) {
	d.stopOnce.Do(func() {
		d.log.Info("stop requested: "+why, "mode", d.opts.Mode)
		close(d.stopReq)
	})
}

// openIndex opens the index; a second daemon finds it locked.
func (d *Daemon) openIndex() (*index.Store, error) {
	store, err := index.Open(d.opts.Paths.Index, index.Options{Timeout: 500 * time.Millisecond, Logger: d.log, NoSync: d.opts.NoSync})
	if errors.Is(err, index.ErrLocked) {
		return nil, d.runningError()
	}
	if err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	for _, w := range store.Warnings() {
		d.warnings.add(w)
	}
	return store, nil
}

// open builds the engine on the open index: it decodes the index while the
// watcher walks the roots, reads the roots (unchanged files come from the
// index), drops the records of files that are gone, and starts the writer
// and the bundles.
func (d *Daemon) open() error {
	d.ingest = &ingest{persist: d.persist, subs: d.subs, log: d.log, warn: d.warnings.add, warnNew: d.warnings.addNew,
		now: d.now, max: d.opts.MaxProjects, maxSets: d.opts.MaxRootSets, isRoot: d.isRoot, ownerUID: os.Geteuid(),
		homeDir: d.opts.Home, progress: d.progress, mem: d.mem, ready: make(chan struct{}), stop: make(chan struct{}), queues: map[string]*rootQueue{},
		projects: map[string]time.Time{}, registering: map[string]*registration{}, locks: map[string]index.File{},
		retries: map[catalog.Change]*retry{}, lifecycles: map[string]*lifecycle{}, rootLocks: map[string]*lifecycle{},
		intents: map[string]int{}, following: map[string]int{}}
	d.ingest.drained = sync.NewCond(&d.ingest.mu)
	// Nothing but verifyIndex touches the store or the cache until it is
	// done: it may replace both.
	remembered := d.persist.projects()
	d.progress.setPhase(phaseLoading)
	loaded := make(chan error, 1)
	go func() {
		err := d.verifyIndex()
		if err == nil {
			// The last run's checks, decoded while the roots are walked,
			// not before the socket answers.
			if prior := d.loadChecks(); prior != nil {
				d.prior.Store(&prior)
			}
		}
		loaded <- err
	}()
	var err error
	first := newListings()
	d.listings.Store(first)
	d.bidx = newBundleIndex(d.log, d.warnings.addNew, d.opts.Home, os.Geteuid())
	d.bidx.needed = d.needsRoot
	d.bidx.changed = d.subs.notifyBundles
	d.ingest.bundleOnly = func(root string) bool { return d.bidx.isRoot(root) && !d.needsRoot(root) }
	d.w, err = watcher.New(d.watchOptions(), func(b watcher.Batch) {
		d.bidx.batch(b)
		d.ingest.handleBatch(b, d.cfg.Load().bundles)
	})
	if err != nil {
		<-loaded
		return err
	}
	d.ingest.w = d.w
	d.bidx.w = d.w
	var projects []string
	var watch []discovery.Root
	for _, p := range remembered {
		if catalog.IsScopeKey(p) {
			// A client's own roots, which an older run remembered: they
			// are watched again when a client asks, not before.
			d.log.Info("a client's roots from the last run not restored; a client that names them registers them again", "project", catalog.Label(p))
			continue
		}
		if err := validProject(p, os.Geteuid()); err != nil {
			d.log.Warn("project from the last run not restored", "project", p, "err", err)
			continue
		}
		projects = append(projects, p)
		watch = append(watch, discovery.Roots(p, "", nil)...)
	}
	cfg := d.cfg.Load()
	roots := append(discovery.Roots("", d.opts.Home, cfg.bundled), watch...)
	// The watcher walks the roots while the index is verified and the
	// daemon's own roots are read: the reads follow the walk (listings).
	walked := make(chan error, 1)
	go func() {
		var werr error
		for _, r := range roots {
			err := d.w.AddRoot(r.Path)
			if errors.Is(err, watcher.ErrTooLarge) {
				// Read once, not watched: status says so.
				d.log.Warn("root too large; not watched", "root", r.Path, "err", err)
				d.warnings.addNew(fmt.Sprintf("%v: read once, not watched, so changes in it are not seen", err))
				continue
			}
			if err != nil && werr == nil {
				werr = fmt.Errorf("watch %s: %w", r.Path, err)
			}
		}
		first.stopRecording()
		walked <- werr
	}()
	if err := <-loaded; err != nil {
		<-walked
		return err
	}
	d.bidx.store.Store(d.persist.store)
	// The first scan's records are written while it runs (nothing reads
	// the index until it ends); the writer starts now.
	d.persist.cache.writeDirect(true, d.persist.kick)
	d.persist.start()
	d.progress.setPhase(phaseReading)
	d.cat = catalog.New(catalog.Options{Loader: d.loader(cfg.schema), Home: d.opts.Home, Bundled: cfg.bundled,
		Version: d.persist.store.Tick(), Prior: d.priorChecks})
	d.ingest.cat = d.cat
	d.subs.current = d.cat.State
	d.persist.cache.settle = d.ingest.settle
	_, err = d.ingest.register(context.Background(), "")
	if werr := <-walked; werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	for _, p := range projects {
		if _, err := d.ingest.register(context.Background(), p); err != nil {
			d.log.Warn("project from the last run not restored", "project", catalog.Label(p), "err", err)
		}
	}
	// Batches wait until now, so that each change made after a listing the
	// scan took from the watcher is applied over what the scan read.
	d.listings.Store(nil)
	close(d.ingest.ready)
	// Records of files no collection holds any more.
	var live []string
	seen := map[*discovery.Collection]bool{}
	for _, v := range d.cat.State().Views() {
		for _, c := range v.Set.Collections() {
			if !seen[c] {
				seen[c] = true
				for p := range c.Facts {
					live = append(live, p)
				}
			}
		}
	}
	slices.Sort(live)
	gone, err := d.persist.cache.absent(slices.Compact(live))
	if err != nil {
		return err
	}
	d.persist.cache.writeDirect(false, nil)
	d.persist.scanDone(d.cat.State().Version, gone)
	for _, dir := range cfg.bundles.watchDirs() {
		if err := d.w.AddRoot(dir); err != nil {
			return fmt.Errorf("watch manifests: %w", err)
		}
	}
	cfg.bundles.kickAll()
	d.bidx.restore()
	return nil
}

// isRoot reports a root the daemon needs besides its Views': a
// manifest's directory, or a root of the bundles of a place.
func (d *Daemon) isRoot(dir string) bool {
	return d.isWatchedDir(dir) || d.bidx != nil && d.bidx.isRoot(dir)
}

// needsRoot reports a root the daemon watches for its collections or a
// manifest: one the bundles' places no longer needing it leave watched.
func (d *Daemon) needsRoot(root string) bool {
	if d.isWatchedDir(root) {
		return true
	}
	if d.cat == nil {
		return false
	}
	for _, r := range d.cat.Roots() {
		if r.Path == root {
			return true
		}
	}
	return false
}

// watchOptions are the watcher's options, with the daemon's logger and
// its state directory for cookies unless set.
func (d *Daemon) watchOptions() watcher.Options {
	w := d.opts.Watch
	w.Logger = d.log
	next := w.OnListing
	w.OnListing = func(root, dir string, entries []fs.DirEntry) {
		if l := d.listings.Load(); l != nil {
			l.record(root, dir, entries)
		}
		if next != nil {
			next(root, dir, entries)
		}
	}
	if w.SyncDir == "" {
		w.SyncDir = d.opts.Paths.StateDir
	}
	if w.MaxRootDirs == 0 {
		w.MaxRootDirs = DefaultMaxRootDirs
	}
	if w.MaxLinkDirs == 0 {
		w.MaxLinkDirs = DefaultMaxLinkDirs
	}
	if w.FollowLink == nil {
		w.FollowLink = followLink
	}
	return w
}

// loader returns the catalog's loader for the schema options: it trusts,
// and makes, only the records of those options.
func (d *Daemon) loader(schema schema.Options) *discovery.Loader {
	cache := d.persist.cache.forSchema(schema)
	return &discovery.Loader{Schema: schema, Cache: countingCache{cache, d.progress}, ReadFile: d.opts.ReadFile, ReadDir: d.readDir, Stat: d.opts.Stat, RealPath: d.realPath,
		Details: cache.details, Mentions: cache.mentions}
}

// readDir lists dir for discovery: from the watcher's listing while the
// first scan runs and one is left (see listings), else with
// Options.ReadDir.
func (d *Daemon) readDir(dir string) ([]os.DirEntry, error) {
	if l := d.listings.Load(); l != nil {
		if entries, ok := l.take(dir); ok {
			return entries, nil
		}
	}
	if d.opts.ReadDir != nil {
		return d.opts.ReadDir(dir)
	}
	return os.ReadDir(dir)
}

// realPath resolves a collection directory's links for discovery: with
// the watcher's listings while the first scan runs (see listings), else
// with filepath.EvalSymlinks.
func (d *Daemon) realPath(dir string) (string, error) {
	if l := d.listings.Load(); l != nil {
		return l.realPath(dir)
	}
	return filepath.EvalSymlinks(dir)
}

// isWatchedDir reports a directory watched for a manifest of the
// configuration in force.
func (d *Daemon) isWatchedDir(dir string) bool {
	return slices.Contains(d.cfg.Load().bundles.watchDirs(), dir)
}

// verifyIndex reads every record of the index once, so that an index with
// a record that does not decode is found now: it is kept aside and
// replaced by an empty one, as Open does for a file it cannot use.
func (d *Daemon) verifyIndex() error {
	err := d.persist.store.Verify()
	if errors.Is(err, index.ErrCorrupt) {
		return d.replaceCorruptIndex(err)
	}
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	return nil
}

// replaceCorruptIndex moves the open index aside and opens a new one.
func (d *Daemon) replaceCorruptIndex(cause error) error {
	path := d.persist.store.Path()
	d.persist.store.Close()
	aside := fmt.Sprintf("%s.corrupt-%d", path, d.now().Unix())
	if err := os.Rename(path, aside); err != nil {
		return fmt.Errorf("move corrupt index aside: %w", err)
	}
	d.warnings.add(fmt.Sprintf("index %s had an unreadable record (%v); kept as %s and rebuilt", path, cause, aside))
	d.log.Warn("index had an unreadable record; kept aside and rebuilt", "index", path, "aside", aside, "err", cause)
	store, err := index.Open(path, index.Options{Timeout: 500 * time.Millisecond, Logger: d.log, NoSync: d.opts.NoSync})
	if err != nil {
		return err
	}
	d.persist.store = store
	d.persist.cache = newFileCache(store, d.log)
	d.persist.version, d.persist.written = store.Tick(), store.Tick()
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

// socketPath is where the socket is served.
func (d *Daemon) socketPath() string {
	if d.srv != nil {
		if p := d.srv.Path(); p != "" {
			return p
		}
	}
	return d.opts.Paths.Socket
}

// clockAt is this daemon's clock at a catalog version.
func (d *Daemon) clockAt(version uint64) query.Clock {
	return query.Clock{Start: d.start.UnixNano(), PID: d.pid, Tick: version}
}

// Analyzed returns how many files the daemon analyzed (read and parsed)
// rather than took from the index, since it started.
func (d *Daemon) Analyzed() int { return d.persist.cache.analyzed() }

// Flush waits until every change made before it was called is indexed
// and published.
func (d *Daemon) Flush(ctx context.Context) error {
	if err := d.w.Flush(ctx); err != nil {
		return err
	}
	return d.ingest.waitRoots(ctx, nil)
}

// Done is closed when the daemon has stopped.
func (d *Daemon) Done() <-chan struct{} { return d.closed }

// Close stops the daemon, in order: reloads (a running one ends first,
// and none starts after), the pruner (and the projects' last use saved),
// the memory policy's looks (a trim under way ends first), the socket server (no new queries, the socket file removed unless it was
// handed over, every subscription ended), the watcher (no new batches),
// the bundles' builds (cancelled, and waited for to their end), the
// persister (a last write, then the index closed), and last the pid file.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() {
		var errs []error
		d.reloadMu.Lock()
		d.closing = true
		d.reloadMu.Unlock()
		if d.pruner != nil {
			d.pruner.close()
			d.saveLastUsed()
		}
		if d.mem != nil {
			d.mem.close()
		}
		if d.idle != nil {
			d.idle.close()
		}
		if d.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			errs = append(errs, d.srv.Shutdown(ctx))
			cancel()
		}
		if d.ingest != nil {
			close(d.ingest.stop)
		}
		if d.w != nil {
			errs = append(errs, d.w.Close())
		}
		if d.ingest != nil {
			d.ingest.close()
		}
		if d.bidx != nil {
			d.bidx.close()
		}
		if cfg := d.cfg.Load(); cfg != nil {
			cfg.bundles.close()
		}
		if d.persist != nil {
			d.persist.start() // when it never started: close needs its writer
			errs = append(errs, d.persist.close(d.saveSummary))
			if b, err := os.ReadFile(d.opts.Paths.PidFile); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(d.pid) {
				os.Remove(d.opts.Paths.PidFile)
			}
		}
		d.closeErr = errors.Join(errs...)
		close(d.closed)
	})
	return d.closeErr
}

// Reload applies a new configuration: bundled roots added or removed,
// schema options (every file is analyzed again when they change), the
// manifests kept warm and the idle time. What it cannot change while running (the watcher's
// timings, amplidex's own paths, the home directory) is named in a
// warning in status, and in the error it returns; so is a reload that
// failed.
//
// A reload applies whole or not at all. First it checks the options and
// watches what they add; should that fail, it takes back the watches it
// added and returns the error, the old configuration still in force. Then
// it changes the catalog and publishes the new configuration in one step.
// Last it drops what only the old one needed: watches, and the bundles of
// manifests no longer kept warm (their builds cancelled and waited for).
// Reloads run one at a time, and none once Close has begun.
func (d *Daemon) Reload(opts Options) error {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if d.closing {
		return fmt.Errorf("reload: %w", ErrClosed)
	}
	if err := checkReload(opts); err != nil {
		d.warnings.add(fmt.Sprintf("configuration not reloaded: %v", err))
		return err
	}
	var restart []string
	if opts.Watch.Debounce != d.opts.Watch.Debounce || opts.Watch.MaxWait != d.opts.Watch.MaxWait ||
		opts.Watch.PollInterval != d.opts.Watch.PollInterval || opts.Watch.MaxWatches != d.opts.Watch.MaxWatches {
		restart = append(restart, "[watch]")
	}
	if opts.Paths != d.opts.Paths {
		restart = append(restart, "amplidex's paths")
	}
	if opts.Home != d.opts.Home {
		restart = append(restart, "the home directory")
	}

	old := d.cfg.Load()
	next := &config{bundled: d.ownBundled(opts.Bundled), schema: opts.Schema, manifests: slices.Clone(opts.Manifests),
		prepare: opts.Prepare, bundles: old.bundles}
	rebuild := !slices.Equal(opts.Manifests, old.manifests) || opts.Prepare != old.prepare
	if rebuild {
		next.bundles = newBundles(opts.Prepare, opts.Manifests, d.log, d.now)
	}
	if err := d.watchAll(next, rebuild); err != nil {
		if rebuild {
			next.bundles.close() // it built nothing yet
		}
		d.warnings.add(fmt.Sprintf("configuration not reloaded: %v", err))
		return err
	}

	var loader *discovery.Loader
	if opts.Schema != old.schema {
		loader = d.loader(opts.Schema)
	}
	d.ingest.applied(d.cat.Reconfigure(next.bundled, loader))
	d.cfg.Store(next)
	if d.idle != nil {
		d.idle.setAfter(opts.IdleExit)
	}

	keep := map[string]bool{}
	for _, r := range d.cat.Roots() {
		keep[r.Path] = true
	}
	for _, dir := range next.bundles.watchDirs() {
		keep[dir] = true
	}
	for _, r := range discovery.Roots("", "", old.bundled) {
		if !keep[r.Path] {
			d.ingest.dropWatch(r.Path)
		}
	}
	if rebuild {
		old.bundles.close()
		for _, dir := range old.bundles.watchDirs() {
			if !keep[dir] {
				d.ingest.dropWatch(dir)
			}
		}
		next.bundles.kickAll()
	}
	d.log.Info("configuration reloaded", "bundled", next.bundled, "manifests", len(next.manifests),
		"schema_changed", loader != nil)
	if len(restart) > 0 {
		msg := "configuration reloaded, but " + strings.Join(restart, ", ") + " change only with a restart"
		d.warnings.add(msg)
		return errors.New(msg)
	}
	return nil
}

// checkReload checks the options a reload changes: bundled roots and
// manifests are absolute paths.
func checkReload(opts Options) error {
	for _, b := range opts.Bundled {
		if b != "" && !filepath.IsAbs(b) {
			return fmt.Errorf("reload: bundled root %q is not an absolute path", b)
		}
	}
	for _, m := range opts.Manifests {
		if !filepath.IsAbs(m) {
			return fmt.Errorf("reload: manifest %q is not an absolute path", m)
		}
	}
	return nil
}

// watchAll watches the bundled roots of cfg and, when withBundles is set,
// the directories of its manifests, those not watched yet. When one fails
// it stops watching those it added, and returns the error.
func (d *Daemon) watchAll(cfg *config, withBundles bool) error {
	watched := map[string]bool{}
	for _, w := range d.w.Status() {
		watched[w.Path] = true
	}
	paths := []string{}
	for _, r := range discovery.Roots("", "", cfg.bundled) {
		paths = append(paths, r.Path)
	}
	if withBundles {
		paths = append(paths, cfg.bundles.watchDirs()...)
	}
	var added []string
	for _, p := range paths {
		if watched[p] {
			continue
		}
		err := d.ingest.addWatch(p, d.watch)
		if errors.Is(err, watcher.ErrTooLarge) {
			d.warnings.addNew(fmt.Sprintf("%v: read once, not watched, so changes in it are not seen", err))
			err = nil
		}
		if err != nil {
			for _, a := range added {
				d.ingest.dropWatch(a)
			}
			return fmt.Errorf("reload: watch %s: %w", p, err)
		}
		watched[p] = true
		added = append(added, p)
	}
	return nil
}

// watch adds a root to the watcher.
func (d *Daemon) watch(path string) error {
	if d.watchFail != nil {
		if err := d.watchFail(path); err != nil {
			return err
		}
	}
	return d.w.AddRoot(path)
}

// Warn records a warning for status (a configuration that failed to
// reload, say).
func (d *Daemon) Warn(msg string) { d.warnings.add(msg) }

// warnings are the daemon's warnings for status, newest last, at most
// maxWarnings of them.
type warnings struct {
	now  func() time.Time
	mu   sync.Mutex // guards msgs
	msgs []string
}

const maxWarnings = 100

// addNew records a warning unless one with the same text is held: what
// many questions run into is said once.
func (w *warnings) addNew(msg string) {
	w.mu.Lock()
	for _, m := range w.msgs {
		if _, text, _ := strings.Cut(m, ": "); text == msg {
			w.mu.Unlock()
			return
		}
	}
	w.mu.Unlock()
	w.add(msg)
}

// add records a warning, stamped with the time.
func (w *warnings) add(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, w.now().Format(time.RFC3339)+": "+msg)
	if len(w.msgs) > maxWarnings {
		w.msgs = slices.Delete(w.msgs, 0, len(w.msgs)-maxWarnings)
	}
}

// list returns the warnings.
func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.msgs...)
}
