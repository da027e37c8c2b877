package daemon

import (
	"fmt"
	"sort"
	"time"

	"github.com/amplidex/amplidex/index"
)

// saveRetry is how long the writer waits before it tries again to write
// what a failed index write left unsaved.
const saveRetry = time.Second

// wakeWriter asks the index writer to write what is pending.
func (d *Daemon) wakeWriter() {
	select {
	case d.writeWake <- struct{}{}:
	default:
	}
}

// writer writes the index, one batch at a time, off the path that
// publishes snapshots: a save is visible before its fsync. It owns every
// Apply; it writes once more when stopped, then closes writerDone.
func (d *Daemon) writer() {
	defer close(d.writerDone)
	for {
		select {
		case <-d.writeWake:
			d.write()
		case <-d.stopWriter:
			d.write()
			d.mu.Lock()
			d.writtenGen = d.writeGen
			d.wrote.Broadcast()
			d.mu.Unlock()
			return
		}
	}
}

// write applies what the cache stored and the deletions since the last
// write. When the write fails (the disk is full, say), nothing is lost:
// the records and deletions are kept for the next write, retried every
// saveRetry, and until one succeeds the change log is known to lag, so
// `changes` answers with the full state.
func (d *Daemon) write() {
	d.mu.Lock()
	gen := d.writeGen
	puts, err := d.cache.takePending()
	gone := d.unsavedGone
	d.unsavedGone = nil
	d.mu.Unlock()
	if err == nil && (len(puts) > 0 || len(gone) > 0) {
		sort.Strings(gone)
		_, err = d.store.Apply(index.Batch{Put: puts, Delete: gone})
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.wrote.Broadcast()
	d.writtenGen = max(d.writtenGen, gen)
	if d.store.ReadOnly() {
		// Nothing can be written in this life, so there is nothing to
		// keep or retry: answers come from memory, and the change log
		// lags once anything changed. Open already warned.
		d.unsaved = d.unsaved || len(puts) > 0 || len(gone) > 0
		return
	}
	if err == nil {
		if d.unsaved {
			d.unsaved = false
			d.log.Info("index writes succeed again")
		}
		return
	}
	d.cache.requeue(puts)
	d.unsavedGone = append(gone, d.unsavedGone...)
	if !d.unsaved {
		d.unsaved = true
		w := fmt.Sprintf("%s: index write failed (%v); answers stay right, changes --since answers with the full state until a write succeeds",
			d.now().Format(time.RFC3339), err)
		d.warnings = append(d.warnings, w)
		d.log.Error("index write failed; retrying", "err", err)
	}
	if !d.retryPending && d.ctx.Err() == nil {
		d.retryPending = true
		time.AfterFunc(saveRetry, func() {
			d.mu.Lock()
			d.retryPending = false
			d.mu.Unlock()
			d.wakeWriter()
		})
	}
}

// waitWrites waits until the writer has handled every commit made so far,
// or found that it cannot write. d.mu is held; Wait releases it meanwhile.
func (d *Daemon) waitWrites() {
	target := d.writeGen
	for d.writtenGen < target && !d.unsaved {
		d.wrote.Wait()
	}
}
