package daemon

import "github.com/amplidex/amplidex/watcher"

// HandleBatch hands b to the daemon as if its watcher had delivered it.
func (d *Daemon) HandleBatch(b watcher.Batch) { d.ingest.handleBatch(b, d.bundles) }
