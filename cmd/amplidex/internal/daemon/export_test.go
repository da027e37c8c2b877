package daemon

import "github.com/amplidex/amplidex/watcher"

// HandleBatch hands b to the daemon as if its watcher had delivered it.
func (d *Daemon) HandleBatch(b watcher.Batch) { d.ingest.handleBatch(b, d.bundles) }

// WaitApplied waits until every root's worker has applied what was handed
// to it, not counting the re-reads promised to files that turned empty.
func (d *Daemon) WaitApplied() {
	in := d.ingest
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, q := range in.queues {
		for q.done < q.queued && !in.stopped {
			in.drained.Wait()
		}
	}
}

// WaitWritten waits until the index holds everything committed.
func (d *Daemon) WaitWritten() { d.persist.waitWritten() }
