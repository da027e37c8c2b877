package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amplidex/amplidex/index"
)

// saveRetry is how long the persister waits before it tries again to
// write what a failed index write left unsaved.
const saveRetry = time.Second

// persister writes to the index what the catalog's changes read and
// dropped, one batch at a time, on a goroutine of its own: a save is
// visible to queries before its fsync. It owns the store and the file
// cache, and every Apply.
type persister struct {
	store *index.Store
	cache *fileCache
	log   *slog.Logger
	warn  func(string)
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	// startOnce starts the writer.
	startOnce sync.Once
	// abandon, when set before stop is closed, makes the writer stop
	// without its last write: what a kill leaves (tests only).
	abandon atomic.Bool
	// ended tells the memory policy that a large write, or the one that
	// takes the first scan's last records, ended (see Memory).
	ended func()

	mu sync.Mutex // guards fields below
	// gone are the deletions committed and not yet written; version is the
	// last version committed and written the last one the writer has
	// handled; wrote is signalled when written moves.
	gone []string
	// writingGone are the deletions a write in progress holds.
	writingGone []string
	version     uint64
	written     uint64
	wrote       *sync.Cond
	// unsaved is set while writes fail (the change log lags);
	// retryPending when a retry is scheduled; stopped once stop is closed.
	unsaved      bool
	retryPending bool
	stopped      bool
	// scanEnded is set when the first scan ends (see scanDone), until
	// the write that takes the scan's last records gives its memory back.
	scanEnded bool
}

func newPersister(store *index.Store, log *slog.Logger, warn func(string)) *persister {
	p := &persister{store: store, cache: newFileCache(store, log), log: log, warn: warn, ended: func() {},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		version: store.Tick(), written: store.Tick()}
	p.wrote = sync.NewCond(&p.mu)
	return p
}

// start runs the writer until close; once, however often it is called.
func (p *persister) start() { p.startOnce.Do(func() { go p.writer() }) }

// commit queues, for the write of version, the records of the files
// loaded and the deletion of the files gone.
func (p *persister) commit(version uint64, loaded, gone []string) {
	gone = p.cache.commit(loaded, gone)
	p.mu.Lock()
	p.gone = append(p.gone, gone...)
	p.version = max(p.version, version)
	p.mu.Unlock()
	p.kick()
}

// scanDone commits, as commit does, what the first scan's end leaves to
// write, and has the write that takes it give the memory back: the scan
// gave its own back as it ended, and the last of its records (fewer than
// a large write's) would otherwise hold theirs until a look of the memory
// policy finds a burst of work behind it, which a quiet daemon never has.
func (p *persister) scanDone(version uint64, gone []string) {
	p.mu.Lock()
	p.scanEnded = true
	p.mu.Unlock()
	p.commit(version, nil, gone)
}

func (p *persister) kick() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// writer writes the index until stop, then once more, then closes done.
func (p *persister) writer() {
	defer close(p.done)
	for {
		select {
		case <-p.wake:
			p.write()
		case <-p.stop:
			if p.abandon.Load() {
				return
			}
			p.write()
			p.mu.Lock()
			p.written = p.version
			p.wrote.Broadcast()
			p.mu.Unlock()
			return
		}
	}
}

// writeChunk bounds the records one index transaction writes, and so the
// memory a write takes: the first scan commits every file at once.
const writeChunk = 4096

// write applies what was committed since the last write, logged under the
// last version committed: every record in it was published at that
// version or before. It writes in transactions of at most writeChunk
// records. When a write fails (the disk is full, say), nothing is lost:
// the records and deletions are kept for the next write, retried every
// saveRetry, and until one succeeds the change log is known to lag, so
// `changes` answers with the full state.
func (p *persister) write() {
	p.mu.Lock()
	version := p.version
	gone := p.gone
	scanEnded := p.scanEnded
	p.gone, p.scanEnded = nil, false
	p.writingGone = gone
	p.mu.Unlock()
	sort.Strings(gone)
	var (
		err   error
		wrote int
	)
	for first := true; ; first = false {
		puts := p.cache.takeQueue(writeChunk)
		if len(puts) == 0 && (!first || len(gone) == 0) {
			break
		}
		b := index.Batch{Put: puts, Tick: max(version, p.store.Tick())}
		if first {
			b.Delete = gone
		}
		if _, err = p.store.Apply(b); err != nil {
			p.cache.requeue(puts)
			if !first {
				gone = nil // written by the first batch
			}
			break
		}
		p.cache.written(puts)
		if first {
			p.cache.deleted(gone)
		}
		wrote += len(puts)
	}
	if scanEnded || wrote > writeChunk && !p.cache.isDirect() {
		// A write this large is one of a whole root's, and the one
		// after the first scan ends takes that scan's last records:
		// their encodings and bbolt's pages are garbage now, and an idle
		// daemon would hold their memory for its whole life.
		p.ended()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.wrote.Broadcast()
	p.writingGone = nil
	p.written = max(p.written, version)
	if err == nil {
		if p.unsaved && !p.store.ReadOnly() {
			p.unsaved = false
			p.log.Info("index writes succeed again")
		}
		return
	}
	if errors.Is(err, index.ErrReadOnly) {
		// Open said so already; serve from memory, and let changes
		// answer with the full state.
		p.unsaved = true
		return
	}
	p.gone = append(gone, p.gone...)
	if !p.unsaved {
		p.unsaved = true
		p.warn(fmt.Sprintf("index write failed (%v); answers stay right, changes --since answers with the full state until a write succeeds", err))
		p.log.Error("index write failed; retrying", "err", err)
	}
	if !p.retryPending && !p.stopped {
		p.retryPending = true
		time.AfterFunc(saveRetry, func() {
			p.mu.Lock()
			p.retryPending = false
			p.mu.Unlock()
			p.kick()
		})
	}
}

// waitWritten waits until the writer has handled every version committed
// so far, or found that it cannot write; it reports whether the change log
// lags (writes fail).
func (p *persister) waitWritten() (lagging bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	target := p.version
	for p.written < target && !p.unsaved {
		p.wrote.Wait()
	}
	return p.unsaved
}

// paths returns every file indexed, as it will be once what is committed
// is written: the index's paths and the records waiting, without the
// deletions waiting.
func (p *persister) paths() ([]string, error) {
	// The deletions first: one a write finishes meanwhile is gone from the
	// index read after.
	p.mu.Lock()
	gone := map[string]bool{}
	for _, g := range p.gone {
		gone[g] = true
	}
	for _, g := range p.writingGone {
		gone[g] = true
	}
	p.mu.Unlock()
	all, err := p.cache.paths()
	for g := range gone {
		if p.cache.waiting(g) {
			delete(gone, g) // deleted, then made again
		}
	}
	if len(gone) > 0 {
		all = slices.DeleteFunc(all, func(path string) bool { return gone[path] })
	}
	return all, err
}

// saveProjects remembers the registered projects for the next run.
func (p *persister) saveProjects(projects []string) error {
	b, err := json.Marshal(projects)
	if err != nil {
		return err
	}
	if err := p.store.SetMeta("projects", b); err != nil && !errors.Is(err, index.ErrReadOnly) {
		return err
	}
	return nil
}

// projects returns the projects remembered from the last run.
func (p *persister) projects() []string {
	var out []string
	if b, err := p.store.Meta("projects"); err == nil && b != nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// close writes what is left, stops the writer, calls last (when not nil)
// and closes the store.
func (p *persister) close(last func()) error {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	close(p.stop)
	<-p.done
	if last != nil {
		last()
	}
	return p.store.Close()
}

// lagging reports whether the last write failed: the index holds less than
// what was committed.
func (p *persister) lagging() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unsaved
}
