// Package query answers questions about collections and bundles and
// carries them over the socket: the Snapshot that answers every query
// method from a resolved resolve.Set, or from a bundle View (package
// discovery/bundle/catalog) for the bundle methods (the same code serves
// the daemon and the in-process scan, so both print the same), the
// method table, the result types the command line prints as JSON, the
// client the command line and editors use, the wire types both ends
// exchange, and the file locations both sides agree on (Paths). The
// server the daemon runs is package query/server.
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
// The transport does not know what a query means: this package declares
// Handler (and Mux, which dispatches on the method name), the server
// serves one, and the daemon supplies the index, the cookies and the
// dispatch. The package never imports the index package, nor the server.
// What the operating system says about the socket (who owns its directory
// and who may enter it, the peer's credentials, whether it hung up) is
// asked through query/internal/sockos; where the socket lives and whose it
// must be, which both ends decide alike, through query/internal/trust.
//
// # Concurrency
//
// A Client is safe for concurrent use: calls share one connection and are
// matched to their answers by id; each subscription has a connection of
// its own, so a slow subscriber never delays calls. A SyncClient asks one
// question at a time on the calling goroutine and starts none. Every
// goroutine a Client starts is owned by it and has ended when Close
// returns. A Mux is read-only once it serves.
//
// # Caveats
//
//   - Request and notification lines are limited to MaxLineSize bytes: a
//     Client does not send a longer request (ErrLineTooLong), and the
//     server answers one with an invalid-request error (see query/server).
//   - A server whose queue of connections not yet accepted is full (the
//     kernel says EAGAIN: a flood of other clients) is busy, not gone:
//     Dial tries again, every few milliseconds, for up to 10 seconds
//     within its context, and only then reports ErrNoDaemon.
//   - A Client accepts response lines up to MaxResponseSize (1 GiB). A longer
//     one is discarded as it is read and its call fails with
//     ErrResponseTooLarge, which is not ErrNoDaemon: the connection stays
//     usable. A Client decodes a response once, straight into the result;
//     when Call returns an error, the result may be partly filled. An
//     answer the server could only partly encode carries an internal
//     error, and the error is what a Client reports.
//   - Nothing another user controls is trusted. Dial checks the socket's
//     directory before connecting, and changes nothing: a directory of
//     another user, or with any permission for group or others, is
//     ErrUnsafeDir. (The server's Listen makes the directory 0700, or
//     refuses it: see query/server.)
//   - Both ends check the other's uid with the kernel's peer credentials
//     (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS; on other unix
//     systems every connection is refused; Windows: see below). A server
//     whose uid is not the client's is refused by Dial and Subscribe with
//     ErrUntrustedServer before anything is sent to it; a client the
//     server refuses gets a forbidden error.
//   - Windows (10 and later) has AF_UNIX sockets but no uids, no mode bits
//     and no peer credentials: the socket directory's access list (DACL) is
//     the access check (see package query/internal/sockos, and
//     query/server for what Listen makes of the directory). Dial refuses
//     a directory whose DACL lets in anyone but the user, SYSTEM and the
//     Administrators group (who can take any file anyway), and requires
//     the user's own SID as the directory's owner: a directory owned by
//     the Administrators group is another account's.
//   - A call abandoned by its context is not cancelled on the server; its
//     answer, when it comes, is dropped by the client.
//   - Unix socket paths are limited to 107 bytes. DefaultPaths replaces a
//     longer socket path by <hash>.sock in /tmp/amplidex-<uid>; Listen and
//     Dial reject a longer path with a clear error. Another user can create
//     /tmp/amplidex-<uid> first, so for a socket there both ends search the
//     same list (query/internal/trust): /tmp/amplidex-<uid>, then
//     /tmp/amplidex-<uid>.1 to .9. The first of them that is a directory
//     (not a link) of the user's wins; when there is none, Listen creates
//     the first that does not exist (os.Mkdir, mode 0700) and Dial reports
//     ErrNoDaemon. A directory of another user, a link or a file is
//     skipped. The search is the same on both ends, so they agree as long
//     as nobody removes the user's directory.
package query
