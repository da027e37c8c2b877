// Package lock reads a root's collections.lock and checks it against the
// collections installed in that root: Parse and Read give a File and its
// diagnostics (lock/corrupt, lock/schema), and Check compares it with the
// collections installed (lock/path-missing, lock/module-escapes,
// lock/not-locked, lock/not-installed).
//
// It never writes a lock file, and it does not find one: where a root's
// lock file lies is the model's (discovery.LockPath), and when to read it
// again is the catalog's. It imports discovery/diag and discovery/syntax
// only.
//
// # Concurrency
//
// Parse is pure; Read and Check read the file system (the file, the
// entries' paths). A File is not changed once returned and may be read
// from any goroutine.
//
// # Caveats
//
//   - A lock that is not JSON, or not a lock file, is corrupt: Parse
//     returns a nil File, one lock/corrupt diagnostic at the offending
//     position, and an error matching ErrCorrupt. A corrupt file is never
//     overwritten.
//   - An entry that lacks a field or has one of the wrong type is a
//     lock/schema diagnostic; it does not make the file corrupt.
//   - Positions come from one pass over the text (a span scanner beside
//     the JSON decoder), which records keys at most five deep.
package lock
