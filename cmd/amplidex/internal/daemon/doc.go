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
// Queries never take it: they read the snapshot published last through an
// atomic pointer, after waiting (read-your-writes) until every change made
// before they arrived has been handled.
//
// # Caveats
//
//   - Only this process opens the index; a second daemon fails fast, naming
//     the pid of the first.
//   - A restart trusts a file's record when its size, modification time and
//     inode are unchanged; a file whose bytes match its recorded hash is not
//     analyzed again.
//   - Cross-references are recomputed over the whole set after each batch
//     that changed any file's facts; files are re-read only when they changed.
//   - Lock files live beside the roots, not in them, so an edit to a lock file
//     alone is seen with the next batch or query of its project.
package daemon
