// Package sockos is what the operating system says about the daemon's
// socket: who owns a file (FileOwner), a directory private to the user
// (MkdirPrivate, MakePrivate, CheckPrivate: mode bits on unix, an access
// list on Windows), the uid and process at the other end of a connection
// (PeerUID, PeerPID), whether that peer hung up (PeerGone), the longest
// path a socket takes (MaxPath) and whether a server's queue of
// connections is full (QueueFull).
//
// It decides nothing about where a socket lives or whom to refuse:
// package query/internal/trust, the client (query) and the server
// (query/server) do, with these answers. Each
// function has one file per system; the judgement of a Windows access
// list (acl.go) needs no Windows API, so that it is tested everywhere.
//
// # Concurrency
//
// Functions hold no state and may be called from any goroutine.
//
// # Caveats
//
//   - Windows has no uids: FileOwner reports the process's own (-1) for
//     a file the user owns and OtherAccount for any other; PeerUID
//     reports the process's own uid, and PeerPID 0, for every peer. Other
//     unix systems than Linux and macOS refuse every peer.
//   - MakePrivate refuses (ErrUnsafeDir) a unix directory writable by
//     others, whose contents cannot be trusted; on Windows it replaces an
//     access list that lets others in, and logs whom it let in.
//   - PeerGone tells a peer that closed its end whole from one that only
//     shut down its writing side (POLLHUP); on Windows it reports false.
package sockos
