// Package server serves a query.Handler on the daemon's unix socket: it
// makes the socket and its directory private, screens each peer, reads
// requests within their bounds, and writes answers and notifications
// (the protocol is described in package query).
//
// It does not know what a query means: the Handler (in the daemon, a
// query.Mux of the method table) answers, and the server counts, bounds
// and writes. It never imports the index package. Where the socket lives
// and whose it must be is decided with query/internal/trust, as the
// client decides it, and what the operating system says about the socket
// is asked through query/internal/sockos.
//
// # Concurrency
//
// A Server answers requests of one connection concurrently (up to 64 at a
// time) and writes each response or notification as one whole line. The
// calls of a peer that hung up are cancelled: nobody reads their answers.
// Every goroutine the Server starts (the accept loop, one per connection,
// one per request being answered and per subscription) is owned by it and
// has ended when Close returns.
//
// # Caveats
//
//   - Request and notification lines are limited to query.MaxLineSize
//     bytes. A longer request line is discarded as it is read and answered
//     with an invalid-request error, naming its id when the line starts
//     with one; a line that is not a valid request gets the same, with the
//     id when it can be recovered. The connection stays usable in both
//     cases.
//   - Memory held for requests is bounded over all connections, not only
//     per line. Each connection reads through a small fixed buffer; a line
//     longer than that is gathered in a buffer of its own whose size is
//     taken from the server's RequestBudget (DefaultRequestBudget, 64 MiB)
//     as it grows, and given back once the request is answered. A line the
//     budget cannot hold is discarded as it is read, without being kept, and
//     answered with query.CodeOverloaded; small requests, on that connection and
//     others, are still answered.
//   - Connections and requests are bounded, over all peers and per peer
//     process (as the kernel's peer credentials name it): MaxConns and
//     MaxPeerConns (256 and 64), MaxRequests and MaxPeerRequests (256 and
//     128 being answered). A connection beyond them gets one overloaded
//     error line and is closed at once, before the next is accepted, so
//     that a flood of connections waits in the kernel's queue and holds
//     no descriptor of the server's; a request beyond them is answered
//     overloaded, not run. Refusals are logged at most once per 10 seconds
//     of each kind, with their number.
//   - A peer that hung up (closed its end whole) has its calls cancelled
//     as soon as the end of its input is read. One that only shut down
//     its writing side still gets its answers, and is looked at every
//     50 ms while they run: once it hangs up they are cancelled too. The
//     difference is told by the socket's POLLHUP (unix); on Windows a
//     call is cancelled only when its answer cannot be written.
//   - A connection holds a write buffer (32 KiB) only while it writes an
//     answer; one that waits holds its small read buffer alone.
//   - Responses have no line limit. A result that is a slice or an
//     iter.Seq[any] is written one element at a time straight into the
//     connection's buffered writer, and a query.Object one field at a
//     time, so the server never holds the whole answer; other results are
//     marshalled whole. Each write, not each line, has WriteTimeout: a peer
//     that stops reading is disconnected after it, and what its answers
//     held is let go.
//   - Memory held for answers is bounded too. A connection's answers wait
//     for their turn to write unencoded, and one at a time is encoded. A
//     streamed answer holds the connection's small write buffer; one
//     marshalled whole and larger than that takes its bytes from the
//     server's AnswerBudget (DefaultAnswerBudget, 64 MiB) until it is
//     written, and is answered with query.CodeOverloaded instead when the budget
//     cannot hold it (unless nothing else is held: an answer larger than
//     the whole budget still goes, alone). An element that fails to encode
//     ends the array: the line then carries the partial result and an
//     internal error.
//   - Nothing another user controls is trusted. Listen creates the socket's
//     directory with mode 0700. An existing directory owned by the server's
//     effective uid is tightened to 0700 when it is merely readable by
//     others; one owned by another user, or writable by group or others
//     (such as /tmp), is refused with query.ErrUnsafeDir, naming its
//     owner, rather than changed. The socket itself is made 0600.
//   - A client whose uid (the kernel's peer credentials: SO_PEERCRED on
//     Linux, LOCAL_PEERCRED on macOS; on other unix systems every
//     connection is refused) is not the server's effective uid gets a
//     forbidden error line and is closed.
//   - Windows (10 and later) has no uids, no mode bits and no peer
//     credentials: the socket directory's access list (DACL) is the access
//     check. Listen creates the directory owned by the user, with a
//     protected DACL (nothing inherited from the parent) that gives full
//     control to the user and SYSTEM alone, inherited by what it holds
//     (see package query/internal/sockos). An existing directory of the
//     user's whose DACL lets in anyone else, or inherits from its parent,
//     gets that DACL instead, as chmod 700 elsewhere; it is not refused for being open,
//     since the index, the pid file and the log create it moments before.
//     A directory must have the user's own SID as its owner: one owned by
//     the Administrators group is another account's. Every peer that can
//     open the socket is accepted. The lock beside the socket is a
//     LockFileEx lock.
//   - Serve takes a listening socket another made (systemd's socket
//     activation) instead: it checks peers as Listen does, but neither the
//     socket's directory nor a lock, and never removes the socket file.
//   - Listen holds an advisory lock on "<socket>.lock" for the server's life,
//     so two servers never race to replace each other's socket; the lock file
//     is left in place. A socket no server answers on is removed; a live one
//     makes Listen fail with ErrInUse.
//   - A Handler must return when its context ends: the server cancels it when
//     shutting down, and Close waits for it.
//   - Unix socket paths are limited to 107 bytes; Listen rejects a longer
//     one. A socket asked for in the first fallback directory,
//     /tmp/amplidex-<uid>, goes to the first of it and .1 to .9 that is a
//     directory of the user's, or that Listen creates, as Dial searches
//     them (see package query). A directory of another user, a link or a
//     file is skipped with a warning in the server's log; Path tells where
//     the socket went. When all ten are taken, Listen fails with
//     query.ErrUnsafeDir.
package server
