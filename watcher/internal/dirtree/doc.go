// Package dirtree interns directory paths as a tree of names: a directory
// is a Node, an index into an arena of entries, not a string. Each entry
// holds its own name (one path component), its parent and its place among
// its siblings, and a value of the caller's; a path is built from the
// names on the way up when it is asked for, and a path is looked up by
// walking its components from the top, each found through one hash table
// of int32 indices that the whole tree shares.
//
// It exists for the watcher, which keeps one entry per watched directory:
// tens of thousands of them, each of which a map keyed by full path (and a
// struct per directory, and a slice of children per directory) made cost
// a few hundred bytes. Here an entry costs its struct in the arena and
// two int32 slots of hash table, and the entries hold no pointer but their
// name (and whatever the caller's value holds) for the garbage collector
// to trace.
//
// It does not touch the file system, and knows nothing of what a path
// means: paths are strings split at the platform's separators.
//
// # Concurrency
//
// A Tree and an Index are not safe for concurrent use: their owner calls
// them from one goroutine (or guards them).
//
// # Caveats
//
//   - Paths are clean (filepath.Clean) and, to be found again, spelled the
//     same way each time. A path's first component is its volume root with
//     the separator ("/", `C:\`) when it has one, else its first name.
//   - A Node is an index and is reused: once its entry is freed, the same
//     Node may name another directory. Hold a Ref across changes that may
//     free entries, and Deref it before use.
//   - A held entry is one the caller inserted and has not released. An
//     entry that is not held stays only while it has children (a bare
//     directory on the way to held ones), and is freed with its last child.
//   - Insert shares storage with the path it is given: a held entry's name
//     is a substring of the path it was inserted with, so that a caller that
//     keeps that path anyway (the watcher hands it to fsnotify, which keeps
//     it for as long as the watch) pays nothing for the name. Names of bare
//     entries, and of entries released while they still have children, are
//     copies (strings.Clone), so that no full path is kept alive by an entry
//     its caller let go.
//   - A pointer returned by Value is valid only until the next Insert, which
//     may move the arena.
//   - An Index holds Nodes and never their keys: its hash and equality are
//     the caller's, computed from the entries, so a key must not change while
//     its Node is in an Index.
package dirtree
