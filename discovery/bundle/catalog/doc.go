// Package catalog is the one model of the bundles that the daemon and the
// command line's in-process answer both drive: for each Env (where a
// client stands, its $AMPLIFIER_HOME), the locations of its bundles, the
// compositions and repository checks asked for, over one file cache
// (Files) that reads and parses each file once.
//
// A View answers for one Env: the bundles found, a reference resolved, a
// bundle composed (package compose), a repository checked (package
// check). What a View is asked to make is kept. The catalog records, in a
// compose.Graph per Env, the paths each composition and check read; told
// that paths changed (Update: what a watcher reports), it forgets them in
// the file cache and makes again only the compositions and checks that
// read one, so that one save in a behavior re-composes the bundles that
// include it and nothing else. Roots says what to watch for that; what is
// read outside them (the ancestors searched for a root bundle, settings
// files) Refresh stats when asked.
//
// It does not watch, persist or serve anything, and never fetches: the
// daemon feeds it the watcher's batches and keeps its Envs across
// restarts; the command line makes one for a single answer.
//
// # Concurrency
//
// A Catalog is safe for concurrent use. Each Env has a build lock that
// its changes and its computations (a composition or a check not made
// yet) take one at a time; answers already made are read from the state
// it published, without a lock. The catalog's own lock is held for its
// bookkeeping only, never while a file is read. Files has a lock of its
// own, never held while the disk is asked.
//
// # Caveats
//
//   - A state once published is never written; a View holds one, and
//     what it makes on demand is published in a newer one, which it also
//     answers from.
//   - Bounded: at most Options.MaxScopes Envs (the least recently used
//     that nobody holds is forgotten, and the file cache then drops what
//     no Env kept reads), Options.MaxCompositions kept compositions per
//     Env, MaxLoose paths stated by Refresh.
//   - A read that a Forget of its path overtook is answered but not kept,
//     so the cache is never older than the last Update.
//   - Paths are taken as given: a change reported under a symbolic link
//     to a directory that was read through its real path is not seen.
package catalog
