// Package query answers questions about collections and bundles and
// carries them over the socket: the Snapshot that answers every query
// method from a resolved resolve.Set, or from a bundle View (package
// discovery/bundle/catalog) for the bundle methods (the same code serves
// the daemon and the in-process scan, so both print the same), the result types the command line prints as JSON,
// the server the daemon runs, the client the command line and editors use,
// the wire types they exchange, and the file locations both sides agree on
// (Paths).
//
// The protocol is one JSON object per line each way over a unix socket. A
// request is {"id", "method", "params"}, with "build" when its client
// names its build (a server of another build refuses it); its answer is {"id", "result",
// "clock"} or {"id", "error": {"code", "message"}, "clock"}. A method whose
// Handler returns a *Stream opens a subscription: after the answer, the
// server pushes notifications {"method", "subscription", "params", "clock"}
// and finally {"method", "subscription", "end": true} (with "error" when the
// stream failed) until the client disconnects or the server shuts down.
//
// The transport does not know what a query means: it declares Handler and
// leaves the index, the cookies and the dispatch to the daemon. The package
// never imports the index package. What the operating system says about
// the socket (who owns its directory and who may enter it, the peer's
// credentials, whether it hung up) is asked through
// query/internal/sockos.
//
// # Concurrency
//
// A Server answers requests of one connection concurrently (up to 64 at a
// time) and writes each response or notification as one whole line. The
// calls of a peer that hung up are cancelled: nobody reads their answers. A Client
// is safe for concurrent use: calls share one connection and are matched to
// their answers by id; each subscription has a connection of its own, so a
// slow subscriber never delays calls. A SyncClient asks one question at a
// time on the calling goroutine and starts none. Every goroutine either
// side starts is owned by its Server or Client and has ended when Close
// returns.
//
// # Caveats
//
//   - Request and notification lines are limited to MaxLineSize bytes. A
//     longer request line is discarded as it is read and answered with an
//     invalid-request error, naming its id when the line starts with one; a
//     line that is not a valid request gets the same, with the id when it
//     can be recovered. The connection stays usable in both cases.
//   - Memory held for requests is bounded over all connections, not only
//     per line. Each connection reads through a small fixed buffer; a line
//     longer than that is gathered in a buffer of its own whose size is
//     taken from the server's RequestBudget (DefaultRequestBudget, 64 MiB)
//     as it grows, and given back once the request is answered. A line the
//     budget cannot hold is discarded as it is read, without being kept, and
//     answered with CodeOverloaded; small requests, on that connection and
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
//   - A server whose queue of connections not yet accepted is full (the
//     kernel says EAGAIN: a flood of other clients) is busy, not gone:
//     Dial tries again, every few milliseconds, for up to 10 seconds
//     within its context, and only then reports ErrNoDaemon.
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
//     connection's buffered writer, and an Object one field at a time, so
//     the server never holds the whole answer; other results are
//     marshalled whole. Each write, not each line, has WriteTimeout: a peer
//     that stops reading is disconnected after it, and what its answers
//     held is let go.
//   - Memory held for answers is bounded too. A connection's answers wait
//     for their turn to write unencoded, and one at a time is encoded. A
//     streamed answer holds the connection's small write buffer; one
//     marshalled whole and larger than that takes its bytes from the
//     server's AnswerBudget (DefaultAnswerBudget, 64 MiB) until it is
//     written, and is answered with CodeOverloaded instead when the budget
//     cannot hold it (unless nothing else is held: an answer larger than
//     the whole budget still goes, alone). An element that fails to encode
//     ends the array: the line then carries the partial result and an
//     internal error, and the error is what a Client reports.
//   - A Client accepts response lines up to MaxResponseSize (1 GiB). A longer
//     one is discarded as it is read and its call fails with
//     ErrResponseTooLarge, which is not ErrNoDaemon: the connection stays
//     usable. A Client decodes a response once, straight into the result;
//     when Call returns an error, the result may be partly filled.
//   - Nothing another user controls is trusted. Listen creates the socket's
//     directory with mode 0700. An existing directory owned by the server's
//     effective uid is tightened to 0700 when it is merely readable by
//     others; one owned by another user, or writable by group or others
//     (such as /tmp), is refused with ErrUnsafeDir, naming its owner, rather
//     than changed. The socket itself is made 0600. Dial checks the same
//     before connecting, and changes nothing: a directory of another user,
//     or with any permission for group or others, is ErrUnsafeDir.
//   - Both ends check the other's uid with the kernel's peer credentials
//     (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS; on other unix
//     systems every connection is refused; Windows: see below). A client whose uid is not the server's
//     effective uid gets a forbidden error line and is closed; a server
//     whose uid is not the client's is refused by Dial and Subscribe with
//     ErrUntrustedServer before anything is sent to it.
//   - Windows (10 and later) has AF_UNIX sockets but no uids, no mode bits
//     and no peer credentials: the socket directory's access list (DACL) is
//     the access check. Listen creates the directory owned by the user,
//     with a protected DACL (nothing inherited from the parent) that gives
//     full control to the user and SYSTEM alone, inherited by what it holds
//     (see package query/internal/sockos). An existing directory of the
//     user's whose DACL lets in anyone else, or inherits from its parent,
//     gets that DACL instead, as chmod 700 elsewhere; it is not refused for being open,
//     since the index, the pid file and the log create it moments before.
//     Dial refuses a directory whose DACL lets in anyone but the user,
//     SYSTEM and the Administrators group (who can take any file anyway).
//     Both require the user's own SID as the directory's owner: a directory
//     owned by the Administrators group is another account's. Every peer
//     that can open the socket is accepted. The lock beside the socket is a
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
//   - A call abandoned by its context is not cancelled on the server; its
//     answer, when it comes, is dropped by the client.
//   - Unix socket paths are limited to 107 bytes. DefaultPaths replaces a
//     longer socket path by <hash>.sock in /tmp/amplidex-<uid>; Listen and
//     Dial reject a longer path with a clear error. Another user can create
//     /tmp/amplidex-<uid> first, so for a socket there both ends search the
//     same list: /tmp/amplidex-<uid>, then /tmp/amplidex-<uid>.1 to .9. The
//     first of them that is a directory (not a link) of the user's wins;
//     when there is none, Listen creates the first that does not exist
//     (os.Mkdir, mode 0700) and Dial reports ErrNoDaemon. A directory of
//     another user, a link or a file is skipped, with a warning in the
//     server's log; Server.Path tells where the socket went. The search is
//     the same on both ends, so they agree as long as nobody removes the
//     user's directory; when all ten are taken, Listen fails with
//     ErrUnsafeDir.
package query
