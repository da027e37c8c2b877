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
// again (resolve.Set.Apply), and only the collections whose references
// go through those names are checked again. Publishing after one save does
// not grow with the number of collections.
//
// It makes every Set: a View's, and a Sketch, the Set a View over some
// roots would hold, made from what the catalog holds of them and a read
// of the others' names only (ReadNames, through its Loader's FileCache),
// for an answer that cannot wait for a project's registration.
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
// State may be called from any goroutine at any time and never waits;
// nor does WithArguments, which works from the latest State. Roots and
// Projects take the catalog's lock only to copy what it holds.
// Changes (Update, AddProject, RemoveProject, Reconfigure) may come from
// several goroutines at once. Each does its work in three steps, as a
// gopls snapshot is made: it reads files outside every lock; it records
// what it read under the catalog's lock, briefly; then it brings the
// Views of the projects it touched up to date outside that lock, and
// publishes each only if no newer change landed meanwhile (else it takes
// that in first). Two loads of one directory apply in the order they
// started, so an older read never replaces a newer one.
//
// The locks, and what each guards:
//
//   - Catalog.mu: the bookkeeping of the roots, the lock files, the
//     registered projects and the log of changes not yet in every View.
//     It is held for work in proportion to one change: never while a
//     file is read or stat()ed, a View is built or checked, or anything
//     is waited for.
//   - project.build, one per project: the making of that project's
//     Views, one change after another. Only changes to that project's
//     roots take it; a slow check of one project (a registration of ten
//     thousand collections) holds back no other project. It is taken
//     before Catalog.mu, never after.
//   - resolve.Set's own lock guards only its caches of stats and
//     parsed constraints, and is never held while the file system is
//     asked.
//
// A change returns once every published View it touched has taken it
// in, so a question asked after it sees it. A project registered twice
// at once is read once: the second caller waits, holding nothing. A
// project removed while it is registered is never published.
//
// # Faults
//
// An error is never an empty answer. A root that cannot be listed keeps
// the collections of its last listing, a collection directory that cannot
// be listed (or whose files cannot be read for want of descriptors or
// memory) keeps its last complete load, and a lock file that cannot be
// read so keeps its last read: each is reported in State.Roots and named
// in Delta.Retry, for the caller to read again later. Records are dropped
// only on evidence that a file is gone.
//
// # Caveats
//
//   - Checking cross-references and lock-file entries stats the file
//     system; it happens while a View is made, under that project's build
//     lock only.
//   - A project whose collections directory is the user's is no project:
//     its View is the View of no project (the user and bundled roots).
//   - Lock files lie beside the roots, not in them: the caller says when
//     one changed (Change.Lock).
//   - The catalog does not retry by itself: it has no goroutines. The
//     daemon reads what Delta.Retry names again, backing off.
package catalog
