// Package query answers questions about collections and carries them over
// the socket: the Snapshot that answers every query method from a resolved
// discovery.Set (the same code serves the daemon and the in-process scan, so
// both print the same), the result types the command line prints as JSON,
// the server the daemon runs, the client the command line and editors use,
// the wire types they exchange, and the file locations both sides agree on
// (Paths).
//
// The protocol is one JSON object per line each way over a unix socket. A
// request is {"id", "method", "params"}; its answer is {"id", "result",
// "clock"} or {"id", "error": {"code", "message"}, "clock"}. A method whose
// Handler returns a *Stream opens a subscription: after the answer, the
// server pushes notifications {"method", "subscription", "params", "clock"}
// and finally {"method", "subscription", "end": true} (with "error" when the
// stream failed) until the client disconnects or the server shuts down.
//
// The transport does not know what a query means: it declares Handler and
// leaves the index, the cookies and the dispatch to the daemon. The package
// never imports the index package.
//
// # Concurrency
//
// A Server answers requests of one connection concurrently (up to 64 at a
// time) and writes each response or notification as one whole line. A Client
// is safe for concurrent use: calls share one connection and are matched to
// their answers by id; each subscription has a connection of its own, so a
// slow subscriber never delays calls. Every goroutine either side starts is
// owned by its Server or Client and has ended when Close returns.
//
// # Caveats
//
//   - Lines are limited to MaxLineSize bytes. A longer request line is
//     discarded and answered with an invalid-request error; a line that is not
//     a valid request gets the same, with the id when it can be recovered. The
//     connection stays usable in both cases.
//   - Listen creates the socket's directory with mode 0700. An existing
//     directory owned by the server's user is tightened to 0700 when it is
//     merely readable by others; one owned by another user, or writable by
//     group or others (such as /tmp), is refused with ErrUnsafeDir rather
//     than changed. The socket itself is made 0600.
//   - Listen holds an advisory lock on "<socket>.lock" for the server's life,
//     so two servers never race to replace each other's socket; the lock file
//     is left in place. A socket no server answers on is removed; a live one
//     makes Listen fail with ErrInUse.
//   - Every connection is checked with the kernel's peer credentials: a peer
//     whose uid is not the server's effective uid gets a forbidden error line
//     and is closed.
//   - A Handler must return when its context ends: the server cancels it when
//     shutting down, and Close waits for it.
//   - A call abandoned by its context is not cancelled on the server; its
//     answer, when it comes, is dropped by the client.
//   - Unix socket paths are limited to 107 bytes. DefaultPaths replaces a
//     longer socket path by a short one under /tmp/amplidex-<uid>/; Listen and
//     Dial reject a longer path with a clear error.
package query
