// Package resolve answers what a name means across the roots: a Set holds
// every collection of every root, resolved by name (project over user
// over bundled, and within a root a flat layout over a nested one, then
// path order), and answers what a collection name, a profile reference,
// an agent name or an @mention resolves to, and why not when it does not.
// It follows extends chains (Chain) and merges a profile with its parents
// as the reference loader does (Effective, MergeProfile).
//
// It makes no diagnostic of a document's own, and it checks nothing: the
// checks of a collection's cross-references are the check package's,
// over a Set. It reads no document; it stats a path only to answer a
// mention of a file that is not a resource. It imports the model
// (discovery), diag and syntax.
//
// # Concurrency
//
// A Set is immutable once built: Apply returns a new Set that shares what
// did not change with the old one, which stays valid. A Set's caches (the
// stats of paths that are not resources, parsed constraints, suggestions,
// merged sessions) are guarded and may be filled from any goroutine; their
// lock is held only to look an answer up or keep it, never while the file
// system is asked.
//
// # Caveats
//
//   - Resolution is by metadata name; an unusable directory (no
//     pyproject.toml, or one that names no collection) answers to its
//     directory name too, so that a reference can say why it is skipped.
//   - A change costs what it changes: Apply touches the names whose
//     candidates changed, and its Delta says which names and bare agent
//     names now resolve otherwise (NamesDep and AnyAgentDep when a name
//     started or stopped resolving at all).
//   - An extends chain is followed through at most MaxExtendsDepth
//     profiles; merged profiles keep the authors' key order.
package resolve
