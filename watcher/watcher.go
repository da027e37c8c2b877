package watcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ErrClosed is returned when a method is called on a Watcher that is closed
// or closing.
var ErrClosed = errors.New("watcher: closed")

// ErrUnknownRoot is returned by RemoveRoot when the path was never added.
var ErrUnknownRoot = errors.New("watcher: unknown root")

// ErrTooLarge is wrapped by the error AddRoot returns for a root that
// holds more directories than Options.MaxRootDirs: it is neither watched
// nor polled.
var ErrTooLarge = errors.New("watcher: too many directories")

// Default option values, used when the matching Options field is zero.
const (
	DefaultDebounce     = 30 * time.Millisecond
	DefaultMaxWait      = 250 * time.Millisecond
	DefaultPollInterval = time.Second
)

// Options configure a Watcher. The zero value is ready to use.
type Options struct {
	// Debounce is the quiet period after the last change of a root before its
	// batch is delivered. Zero means DefaultDebounce.
	Debounce time.Duration
	// MaxWait bounds how long a batch waits after its first change, however
	// busy the root stays. Zero means DefaultMaxWait.
	MaxWait time.Duration
	// PollInterval is how often a polled root is walked. Zero means
	// DefaultPollInterval.
	PollInterval time.Duration
	// MaxWatches, when positive, is a budget of kernel watches for all roots
	// together: adding one more fails as the kernel's ENOSPC does, and the
	// root that needed it is polled instead.
	MaxWatches int
	// MaxRootDirs, when positive, bounds the directories of one root's own
	// tree: a root that holds more, when it is added or as it grows, or
	// once polled, is neither watched nor polled (StateTooLarge), and
	// says so in its warnings. MaxLinkDirs bounds likewise each
	// collection linked into a root: one that holds more is no longer
	// followed, the root's own tree still is.
	MaxRootDirs, MaxLinkDirs int
	// FollowLink, when set, decides whether the directory symlink link,
	// directly in a root, is followed to real, its resolved directory: an
	// error says why not, in the root's warnings, and nothing below real
	// is watched. It is called from the Watcher's own goroutine.
	FollowLink func(link, real string) error
	// SyncDir is the directory in which New creates the private directory
	// Flush writes its cookie files to; Close removes it again. Empty means
	// os.TempDir(). A directory on tmpfs (such as $XDG_RUNTIME_DIR) makes
	// Flush several times cheaper than one on a disk.
	SyncDir string
	// Logger receives warnings (queue overflows, watch limits, unreadable
	// directories). Nil discards them.
	Logger *slog.Logger
	// Now is the clock used for debouncing and polling. Nil means time.Now.
	Now func() time.Time
	// BeforeWatch, when set, is called from the Watcher's own goroutine
	// before each kernel watch on a root's directory is added (not the one
	// on the sync directory); an error it returns is taken as the kernel's
	// refusal. It is a fault hook for the tests of those who embed a
	// Watcher, so that they can play EMFILE on macOS or ENOSPC on Linux;
	// leave it nil.
	BeforeWatch func(dir string) error
	// OnListing, when set, is handed every directory listing that the
	// walks of watched trees make: AddRoot's, and the later ones (a root
	// that appears or is replaced, every root after an overflow, a
	// directory that appears), so that a consumer that scans a root need
	// not list its directories again. root is the root, as AddRoot cleaned
	// it; dir is the directory, spelled as Batch paths are (under root);
	// entries are its entries, sorted by name, and are the callee's to
	// keep. A walk lists a tree depth first in name order: a directory,
	// then each of its subdirectories' trees in name order, so that a
	// consumer reading the tree in that order meets the listings as they
	// are made.
	//
	// The directory's kernel watch was in place before its listing was
	// read, so every change to its entries made after the listing is
	// reported in a later Batch, as a path or as a Rescan of the root (see
	// the package documentation for the exact guarantee). It is called
	// from the Watcher's own goroutine, which waits for it: it must be
	// quick and must not call the Watcher's methods. It may run
	// concurrently with handle.
	OnListing func(root, dir string, entries []fs.DirEntry)
}

// Batch is what a Watcher delivers for one root.
type Batch struct {
	// Root is the root these paths belong to, as AddRoot cleaned it.
	Root string
	// Paths are the paths that may have changed (created, written, removed,
	// renamed from or to, attributes changed): absolute, cleaned, sorted and
	// unique. The consumer lstats each one. A path that is a directory means
	// the directory entry changed: entries the consumer knew below it that
	// are no longer there must be dropped, as a directory moved away reports
	// only its own path; a path that is no longer a directory (gone, a file,
	// a dangling link) has nothing below it any more. Paths is empty when
	// Rescan is set.
	Paths []string
	// Rescan says the whole root must be rescanned: the kernel queue
	// overflowed, the root appeared, vanished or was replaced, watches were
	// lost, or the root switched to polling.
	Rescan bool
	// Reasons says why Rescan is set: every reason that arose since the
	// root's previous batch. It is zero when Rescan is not set.
	Reasons Reason
}

// State is how a root is being watched.
type State string

// The states of a root.
const (
	StateWatching State = "watching"  // kernel watches on every directory
	StatePolling  State = "polling"   // walked every PollInterval
	StateMissing  State = "missing"   // does not exist; its nearest ancestor is watched (or polled)
	StateTooLarge State = "too large" // holds more than Options.MaxRootDirs directories: neither watched nor polled
)

// RootStatus describes one root.
type RootStatus struct {
	// Path is the root, as AddRoot cleaned it.
	Path string
	// State is how the root is being watched.
	State State
	// Watches counts the kernel watches the root uses: its directories,
	// those of its linked collections, the directories above them, and the
	// ancestor a missing root waits on. Watches shared with another root
	// count for both.
	Watches int
	// Warnings are the root's cumulative warnings (queue overflows, watch
	// and open-file limits, lost watches, unreadable directories), each with
	// its count when it happened more than once.
	Warnings []string
}

// A Watcher watches roots and delivers batches of changed paths to its
// handle function. It is safe for concurrent use.
type Watcher struct {
	opts    Options
	handle  func(Batch)
	log     *slog.Logger
	now     func() time.Time
	fsw     *fsnotify.Watcher
	syncDir string
	hooks   hooks
	paths   paths // the walks' directory paths; the run goroutine's

	stop      chan struct{} // closed by Close
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	reqs    chan request  // API calls to the run goroutine
	wake    chan struct{} // the drain goroutine queued something
	outWake chan struct{} // the run goroutine queued something to deliver

	qmu   sync.Mutex // guards fields below
	queue []item

	omu sync.Mutex // guards fields below
	out []outItem

	smu    sync.Mutex // guards fields below
	status map[string]RootStatus

	// Fields below belong to the run goroutine.
	roots     map[string]*root
	order     []*root // roots sorted by path
	ws        watches
	flushes   map[string]chan struct{} // cookie file name → Flush waiting on it
	cookieSeq int
	spare     []item
}

// hooks are test hooks; see export_test.go.
type hooks struct {
	// drainGate, when set, holds the drain goroutine back until it is closed.
	drainGate <-chan struct{}
	// addWatch, when set, is called by the run goroutine before each kernel
	// watch on a root's directory is added; an error it returns is taken
	// as fsnotify's.
	addWatch func(dir string) error
}

// item is one thing fsnotify reported: an event or an error.
type item struct {
	event fsnotify.Event
	err   error
}

// outItem is a batch to deliver, or a Flush to release once every batch
// queued before it has been handled.
type outItem struct {
	batch Batch
	done  chan struct{}
}

type requestOp int

const (
	opAdd requestOp = iota
	opRemove
	opFlush
)

type request struct {
	op    requestOp
	path  string
	reply chan error    // for opAdd, opRemove
	done  chan struct{} // for opFlush
}

// New starts a Watcher that calls handle for every batch, from a single
// goroutine and never concurrently. It watches nothing until AddRoot.
func New(opts Options, handle func(Batch)) (*Watcher, error) {
	return newWatcher(opts, handle, hooks{})
}

func newWatcher(opts Options, handle func(Batch), h hooks) (*Watcher, error) {
	if handle == nil {
		return nil, errors.New("new watcher: nil handle function")
	}
	if opts.Debounce < 0 || opts.MaxWait < 0 || opts.PollInterval < 0 || opts.MaxWatches < 0 {
		return nil, errors.New("new watcher: negative option")
	}
	if opts.Debounce == 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if h.addWatch == nil {
		h.addWatch = opts.BeforeWatch
	}
	w := &Watcher{
		opts:    opts,
		handle:  handle,
		log:     opts.Logger,
		now:     opts.Now,
		hooks:   h,
		stop:    make(chan struct{}),
		reqs:    make(chan request),
		wake:    make(chan struct{}, 1),
		outWake: make(chan struct{}, 1),
		status:  make(map[string]RootStatus),
		roots:   make(map[string]*root),
		ws:      newWatches(),
		flushes: make(map[string]chan struct{}),
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.now == nil {
		w.now = time.Now
	}

	dir, err := os.MkdirTemp(opts.SyncDir, "amplidex-watch-")
	if err != nil {
		return nil, fmt.Errorf("new watcher: create sync directory: %w", err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	w.syncDir = dir
	// Events and Errors must stay unbuffered: the drain goroutine then
	// receives them in exactly the order fsnotify read them, which Flush and
	// overflow handling rely on.
	w.fsw, err = fsnotify.NewWatcher()
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("new watcher: %w", err)
	}
	if err := w.fsw.Add(dir); err != nil {
		w.fsw.Close()
		os.Remove(dir)
		return nil, fmt.Errorf("new watcher: watch sync directory %s: %w", dir, err)
	}

	w.wg.Add(3)
	go w.drain()
	go w.run()
	go w.deliver()
	return w, nil
}

// AddRoot starts watching path, which need not exist yet. It returns once
// the root is watched (or polled, or waited for through its nearest existing
// ancestor), so a scan the caller starts afterwards misses nothing the
// Watcher will not report. Adding a root twice is a no-op. A root that
// holds more than Options.MaxRootDirs directories is kept, neither watched
// nor polled, and AddRoot returns an error wrapping ErrTooLarge, now and
// when it is added again.
func (w *Watcher) AddRoot(path string) error {
	if path == "" {
		return errors.New("add root: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("add root %s: %w", path, err)
	}
	return w.call(request{op: opAdd, path: abs})
}

// RemoveRoot stops watching path and drops its batches not yet delivered.
// It returns ErrUnknownRoot when path was never added.
func (w *Watcher) RemoveRoot(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("remove root %s: %w", path, err)
	}
	return w.call(request{op: opRemove, path: abs})
}

func (w *Watcher) call(req request) error {
	req.reply = make(chan error, 1)
	select {
	case w.reqs <- req:
	case <-w.stop:
		return ErrClosed
	}
	select {
	case err := <-req.reply:
		return err
	case <-w.stop:
		return ErrClosed
	}
}

// Flush delivers every change made before it was called, skipping the
// debounce, and returns once handle has returned for all of them. It waits
// for the kernel to hand over pending events (by writing a cookie file and
// waiting for its event) and polls polled roots once. It must not be called
// from handle.
func (w *Watcher) Flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case w.reqs <- request{op: opFlush, done: done}:
	case <-w.stop:
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("flush: %w", ctx.Err())
	}
	select {
	case <-done:
		return nil
	case <-w.stop:
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("flush: %w", ctx.Err())
	}
}

// Status reports every root, sorted by path.
func (w *Watcher) Status() []RootStatus {
	w.smu.Lock()
	defer w.smu.Unlock()
	out := make([]RootStatus, 0, len(w.status))
	for _, s := range w.status {
		s.Warnings = slices.Clone(s.Warnings)
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b RootStatus) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Close stops the Watcher. In order, it: closes the stop channel, so that
// every call in progress or to come returns ErrClosed; closes the fsnotify
// watcher, which ends the kernel reads; waits for the drain, run and deliver
// goroutines to exit (a handle call in progress is finished, batches not yet
// delivered are dropped); and removes the private sync directory. Close
// must not be called from handle. Calling it again returns the first
// result.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		close(w.stop)
		var errs []error
		if err := w.fsw.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close watcher: %w", err))
		}
		w.wg.Wait()
		if err := os.RemoveAll(w.syncDir); err != nil {
			errs = append(errs, fmt.Errorf("close watcher: remove %s: %w", w.syncDir, err))
		}
		w.closeErr = errors.Join(errs...)
	})
	return w.closeErr
}

// stopped reports whether Close has begun.
func (w *Watcher) stopped() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

// drain moves everything fsnotify reports into the queue, and does nothing
// else, so that the kernel queue is emptied as fast as possible and fsnotify
// never waits on a goroutine that is itself calling into fsnotify.
func (w *Watcher) drain() {
	defer w.wg.Done()
	if w.hooks.drainGate != nil {
		select {
		case <-w.hooks.drainGate:
		case <-w.stop:
			return
		}
	}
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.enqueue(item{event: ev})
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.enqueue(item{err: err})
		case <-w.stop:
			return
		}
	}
}

func (w *Watcher) enqueue(it item) {
	w.qmu.Lock()
	w.queue = append(w.queue, it)
	w.qmu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run owns the watch state: it handles queued events, API requests,
// debounce deadlines and polls, until Close.
func (w *Watcher) run() {
	defer w.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		w.publish()
		if at, ok := w.nextDeadline(); ok {
			timer.Reset(max(at.Sub(w.now()), 0))
		} else {
			timer.Stop()
		}
		select {
		case <-w.stop:
			return
		case <-w.wake:
			w.processQueue()
		case req := <-w.reqs:
			w.serve(req)
		case <-timer.C:
		}
		w.tick()
	}
}

func (w *Watcher) processQueue() {
	w.qmu.Lock()
	items := w.queue
	w.queue = w.spare[:0]
	w.qmu.Unlock()
	for _, it := range items {
		if w.stopped() {
			break
		}
		if it.err != nil {
			w.handleError(it.err)
		} else {
			w.handleEvent(it.event)
		}
	}
	clear(items)
	if cap(items) > maxSpare {
		items = nil // let a burst's buffer go
	}
	w.spare = items[:0]
}

// maxSpare is the largest queue buffer kept for reuse between bursts.
const maxSpare = 4096

func (w *Watcher) serve(req request) {
	switch req.op {
	case opAdd:
		err := w.addRoot(req.path)
		w.publish()
		req.reply <- err
	case opRemove:
		err := w.removeRoot(req.path)
		w.publish()
		req.reply <- err
	case opFlush:
		w.startFlush(req.done)
	}
}

// nextDeadline is the earliest moment a batch falls due or a root must be
// polled.
func (w *Watcher) nextDeadline() (time.Time, bool) {
	var at time.Time
	found := false
	consider := func(t time.Time) {
		if !found || t.Before(at) {
			at, found = t, true
		}
	}
	for _, r := range w.order {
		if !r.pend.empty() {
			consider(r.pend.due(w.opts.Debounce, w.opts.MaxWait))
		}
		if r.polled {
			consider(r.nextPoll)
		}
	}
	return at, found
}

// tick polls the roots that are due and delivers the batches that are due.
func (w *Watcher) tick() {
	now := w.now()
	for _, r := range w.order {
		if r.polled && !now.Before(r.nextPoll) {
			w.poll(r)
		}
	}
	for _, r := range w.order {
		if !r.pend.empty() && !now.Before(r.pend.due(w.opts.Debounce, w.opts.MaxWait)) {
			w.emit(r)
		}
	}
}

// emit queues r's pending batch for delivery.
func (w *Watcher) emit(r *root) {
	p := &r.pend
	if p.empty() {
		return
	}
	b := Batch{Root: r.path, Rescan: p.rescan, Reasons: p.reasons}
	if !p.rescan {
		b.Paths = make([]string, 0, len(p.paths))
		for path := range p.paths {
			b.Paths = append(b.Paths, path)
		}
		slices.Sort(b.Paths)
	}
	*p = pending{}
	w.push(outItem{batch: b})
}

// emitAll queues every pending batch, due or not.
func (w *Watcher) emitAll() {
	for _, r := range w.order {
		w.emit(r)
	}
}

func (w *Watcher) push(it outItem) {
	w.omu.Lock()
	w.out = append(w.out, it)
	w.omu.Unlock()
	select {
	case w.outWake <- struct{}{}:
	default:
	}
}

// deliver calls handle for each queued batch, in order, and releases
// flushes once the batches queued before them have been handled.
func (w *Watcher) deliver() {
	defer w.wg.Done()
	for {
		w.omu.Lock()
		if len(w.out) == 0 {
			w.out = nil
			w.omu.Unlock()
			select {
			case <-w.stop:
				return
			case <-w.outWake:
			}
			continue
		}
		it := w.out[0]
		w.out[0] = outItem{}
		w.out = w.out[1:]
		w.omu.Unlock()

		if w.stopped() {
			return
		}
		if it.done != nil {
			close(it.done)
			continue
		}
		w.handle(it.batch)
	}
}

// dropQueued removes the undelivered batches of a root.
func (w *Watcher) dropQueued(path string) {
	w.omu.Lock()
	defer w.omu.Unlock()
	w.out = slices.DeleteFunc(w.out, func(it outItem) bool {
		return it.done == nil && it.batch.Root == path
	})
}

// publish copies the state of changed roots to where Status reads it.
func (w *Watcher) publish() {
	var changed []RootStatus
	for _, r := range w.order {
		if r.dirty {
			r.dirty = false
			changed = append(changed, r.status())
		}
	}
	if len(changed) == 0 {
		return
	}
	w.smu.Lock()
	defer w.smu.Unlock()
	for _, s := range changed {
		w.status[s.Path] = s
	}
}

// startFlush writes a cookie file into the sync directory; when its event
// comes back, every event queued before it has been handled.
func (w *Watcher) startFlush(done chan struct{}) {
	w.cookieSeq++
	name := fmt.Sprintf("cookie-%d", w.cookieSeq)
	path := filepath.Join(w.syncDir, name)
	err := os.WriteFile(path, nil, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		w.restoreSyncDir()
		err = os.WriteFile(path, nil, 0o600)
	}
	if err != nil {
		w.log.Warn("watcher: flush without kernel sync", "err", err)
		w.finishFlush(done)
		return
	}
	w.flushes[name] = done
}

// handleCookie finishes the Flush waiting for the cookie name.
func (w *Watcher) handleCookie(name string, op fsnotify.Op) {
	done, ok := w.flushes[name]
	if !ok || !op.Has(fsnotify.Create) {
		return
	}
	delete(w.flushes, name)
	os.Remove(filepath.Join(w.syncDir, name))
	w.finishFlush(done)
}

// finishFlushes finishes every Flush still waiting for its cookie.
func (w *Watcher) finishFlushes() {
	for name, done := range w.flushes {
		delete(w.flushes, name)
		os.Remove(filepath.Join(w.syncDir, name))
		w.finishFlush(done)
	}
}

func (w *Watcher) finishFlush(done chan struct{}) {
	for _, r := range w.order {
		if r.polled {
			w.poll(r)
		}
	}
	w.emitAll()
	w.publish()
	w.push(outItem{done: done})
}

// restoreSyncDir recreates and rewatches the sync directory after something
// removed it, and finishes the flushes whose cookies went with it.
func (w *Watcher) restoreSyncDir() {
	if err := os.MkdirAll(w.syncDir, 0o700); err != nil {
		w.log.Warn("watcher: recreate sync directory", "dir", w.syncDir, "err", err)
	} else if err := w.fsw.Add(w.syncDir); err != nil {
		w.log.Warn("watcher: watch sync directory", "dir", w.syncDir, "err", err)
	}
	w.finishFlushes()
}
