// Package trust is the user both ends of the socket trust, and where they
// look for the socket: the effective uid, who owns a file and who is at
// the other end of a connection (as the system tells it, or a test), and
// the fallback directories that the server (query/server) and the client
// (query) search in the same order, so that they agree on where the
// socket went.
//
// What each end does with the answers (Listen makes a directory private
// or refuses it, Dial refuses a server of another user) is the end's.
//
// # Concurrency
//
// A User is a value: its functions hold no state and may be called from
// any goroutine.
//
// # Caveats
//
//   - Another user can create the first fallback directory,
//     /tmp/amplidex-<uid>, before the user's daemon does: the search
//     skips a directory of another user, a link or a file, and goes on to
//     .1 to .9 (FallbackDirs in all).
//   - The search only reads: it neither creates nor changes a directory.
package trust
