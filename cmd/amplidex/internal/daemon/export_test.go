package daemon

import (
	"context"
	"time"

	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

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

// Crash stops the daemon as a kill would leave it: the socket, the
// watcher and every goroutine stop, but what was committed and not yet
// written to the index is lost, no summary is saved, the projects' last
// use is not saved and the pid file stays.
func (d *Daemon) Crash() {
	d.closeOnce.Do(func() {
		d.reloadMu.Lock()
		d.closing = true
		d.reloadMu.Unlock()
		if d.pruner != nil {
			d.pruner.close()
		}
		if d.idle != nil {
			d.idle.close()
		}
		if d.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			d.srv.Shutdown(ctx)
			cancel()
		}
		close(d.ingest.stop)
		d.w.Close()
		d.ingest.close()
		d.cfg.Load().bundles.close()
		d.persist.abandon.Store(true)
		d.persist.close(nil)
		close(d.closed)
	})
}

// Catalog returns the daemon's catalog.
func (d *Daemon) Catalog() *catalog.Catalog { return d.cat }

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

// ViewWithin returns the View of the question scope asks, registering it
// on the first question as a client's question does, with ctx as the
// client's life.
func (d *Daemon) ViewWithin(ctx context.Context, scope query.Common) (*catalog.View, error) {
	v, _, err := d.viewFor(ctx, scope)
	return v, err
}

// Registered returns the keys of the registered projects and sets of a
// client's roots, as status lists them.
func (d *Daemon) Registered() map[string]time.Time { return d.ingest.registered() }

// Waiting returns how many questions waited for another's registration.
func (d *Daemon) Waiting() int {
	in := d.ingest
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	for _, r := range in.registering {
		n += r.waiters
	}
	return n
}

// Watches returns the kernel watches the daemon's watcher holds, over
// every root (a watch two roots share counts twice).
func (d *Daemon) Watches() int {
	n := 0
	for _, s := range d.w.Status() {
		n += s.Watches
	}
	return n
}
