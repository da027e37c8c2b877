package daemon

import "github.com/amplidex/amplidex/watcher"

// HandleBatch hands b to the daemon as if its watcher had delivered it.
func (d *Daemon) HandleBatch(b watcher.Batch) { d.ingest.handleBatch(b, d.cfg.Load().bundles) }

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

// IsWatchedDir reports whether dir is watched for a manifest.
func (d *Daemon) IsWatchedDir(dir string) bool { return d.isWatchedDir(dir) }

// WatchedRoots returns the paths the watcher watches.
func (d *Daemon) WatchedRoots() []string {
	var out []string
	for _, s := range d.w.Status() {
		out = append(out, s.Path)
	}
	return out
}

// FailWatch makes a reload's watch of path fail with err; an empty path
// ends that.
func (d *Daemon) FailWatch(path string, err error) {
	d.watchFail = func(p string) error {
		if path != "" && p == path {
			return err
		}
		return nil
	}
}
