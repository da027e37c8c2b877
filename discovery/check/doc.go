// Package check finds what is wrong between the files of a collection
// over a resolved Set: extends that do not resolve, cycle or run too
// deep; a merged profile that lacks a required key; agent names and
// @mentions that do not resolve or leave their collection; requires that
// are not installed or not met; and collections another of the same name
// shadows. Collection gives one collection's diagnostics, at most
// diag.MaxPerArea of an area for each file; RefNames gives the names its
// answer depends on, so that a caller checks it again only when one of
// them resolves otherwise.
//
// It is also where the diagnostics of a file are composed, for every
// surface: Compose gives those of a collection's files (their own, the
// cross-references and the shadowing) with the suppression comments of
// its files applied, and Lock those of a root's lock file. A catalog View
// composes the files on disk with them, and the analysis engine the
// collections an editor's buffers make.
//
// It does not resolve names (the resolve package does, and says why a
// reference does not), does not check a file on its own (its syntax and
// schema are checked as the model reads it), and does not read suppression
// comments (package suppress does, into each file's Facts). It imports the
// model (discovery), resolve, lock, diag and syntax.
//
// # Concurrency
//
// Functions read a Set, which is immutable, and its caches, which are
// guarded: many collections may be checked at once, from any goroutine.
// They stat the file system only for a mention of a file that is not a
// resource (see CollectionStat).
//
// # Caveats
//
//   - One mistake, one diagnostic, at its root cause: references into a
//     collection that is required but not installed are not checked (one
//     deps/not-installed at the requires entry says so), so that an answer
//     does not depend on what else happens to be installed.
//   - What is past a file's limit is counted, not made: a file of half a
//     million mentions that do not resolve costs their lookups, not their
//     messages.
//   - An answer that stat()ed the file system (CollectionStat's statted)
//     cannot be kept across runs without asking again.
package check
