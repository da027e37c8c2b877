// Package catalog is the one model of the collection roots that every
// consumer drives: the daemon, the command line's in-process answer and the
// language server. It owns the roots, the collections loaded from them
// (with the facts of their files, through discovery.Loader), the resolved
// set of each project, the cross-reference and lock-file diagnostics, and
// the per-project Views that answers are computed from.
//
// It is told what changed — this collection directory, this whole root,
// this lock file — and reloads only that; a change then costs what it
// touches: the names the changed collections had or have are resolved
// again (discovery.Set.Apply), and only the collections whose references
// go through those names are checked again. Publishing after one save does
// not grow with the number of collections.
//
// It does not watch files, store anything or serve requests: it imports
// no watcher, index or query code, no bbolt and no sockets. The daemon
// feeds it the watcher's batches and persists what its Loader's FileCache
// records; the command line builds one for a single answer.
//
// # Versions
//
// Every change publishes a new State, numbered one above the last. A State
// and the Views it holds are immutable: a caller that asks several
// questions of one State gets answers of one consistent version, and a
// newer State shares all that did not change with the older one.
//
// # Concurrency
//
// State may be called from any goroutine at any time and never waits.
// Changes (Update, AddProject, RemoveProject, Reconfigure) may come from
// several goroutines: files are read and parsed outside any lock, and a
// change is applied under the catalog's writer lock, which only changes
// take. Two loads of one directory apply in the order they started, so an
// older read never replaces a newer one.
//
// # Caveats
//
//   - While a change is applied, resolving @mentions of files that are not
//     resources and checking lock-file entries stat the file system; no file
//     is read or parsed under the writer lock.
//   - A project whose collections directory is the user's is no project:
//     its View is the View of no project (the user and bundled roots).
//   - Lock files lie beside the roots, not in them: the caller says when
//     one changed (Change.Lock).
package catalog
