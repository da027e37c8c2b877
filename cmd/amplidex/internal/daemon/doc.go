// Package daemon is the engine behind `amplidex daemon`: it watches the
// collection roots, re-discovers only the collections a batch of changes
// touches, persists per-file facts in the index, publishes an immutable
// snapshot per project after every batch, and answers queries from it over
// the socket.
//
// It wires the watcher, index, discovery and query packages together and is
// the only place that knows all four; it holds no domain logic of its own.
//
// # Concurrency
//
// Batches are handled one at a time, on the watcher's delivery goroutine,
// under the engine's mutex; registering a project takes the same mutex.
// A batch reloads the collections it touches and publishes new snapshots
// (at most every 100 ms during a burst); a writer goroutine of its own then
// writes the batch to the index, so a save is visible before its fsync.
// Queries read the snapshot published last through an atomic pointer; a
// query that waits for its writes (the default) first waits until every
// change made before it arrived has been handled and published.
//
// # Caveats
//
//   - Only this process opens the index; a second daemon fails fast, naming
//     the pid of the first.
//   - A restart trusts a file's record when its size, modification time and
//     inode are unchanged; a file whose bytes match its recorded hash is not
//     analyzed again.
//   - Cross-references are recomputed only for the collections a batch can
//     affect (discovery.Checker); files are re-read only when they changed.
//   - A failed index write (a full disk) loses nothing: it is retried, and
//     meanwhile `changes` answers with the full state.
//   - Lock files live beside the roots, not in them, so an edit to a lock file
//     alone is seen with the next batch or query of its project.
package daemon
