// Package discovery is the model of collections and its loader: it finds
// collections in a root (flat, nested and hybrid layouts), lists their
// profiles, agents, context files, scenario tools and modules, reads each
// collection's pyproject.toml into its Metadata, and gives every file it
// reads its Facts (what other files refer to, the references it makes and
// its own diagnostics), from the file's bytes alone.
//
// The domain is split into packages that each do one job, and that every
// family of documents (collections today, bundles next) plugs into:
//
//	discovery/diag      the diagnostics vocabulary: Diagnostic, Severity,
//	                    Position, Range, the codes, the per-file limit, hints
//	discovery/syntax    the text of documents: reading a file, positions,
//	                    front matter, YAML and TOML, @mentions, versions
//	discovery/schema    what each kind of document may hold, and checking
//	                    a document against it
//	discovery/suppress  suppression comments, applied to any file's
//	                    diagnostics
//	discovery           this package: collections, resources, Facts, the
//	                    Loader and the roots
//	discovery/resolve   names across the roots: the Set, precedence,
//	                    extends chains, merged profiles
//	discovery/check     the cross-reference checks of a collection over a
//	                    Set
//	discovery/lock      a root's collections.lock and its check
//	discovery/catalog   the one incremental model of the roots that every
//	                    consumer drives
//	discovery/bundle    bundle repositories: their files, compositions
//	                    (bundle/compose) and checks (bundle/check)
//
// Dependencies go one way: diag imports nothing of the module; syntax
// imports diag; schema, suppress and lock import diag and syntax; this
// package imports diag, syntax, schema and suppress; resolve imports this
// package; check imports resolve; catalog imports them all. The bundle
// packages import diag and syntax, and know no collection.
//
// It does not resolve names, check cross-references, watch files, store
// anything, or talk to other processes: those are the jobs of resolve,
// check, the watcher, the index and query, which build on this one.
//
// # Concurrency
//
// Functions here are pure or read the file system only; values they return
// are not shared with the package afterwards, so callers may use them from
// any goroutine. A Loader may load many collections at once. A Collection
// is not changed once a caller has it: Keep returns a copy, and Clone a
// copy that may be changed.
//
// # Caveats
//
//   - Paths in values are absolute and cleaned; resource lists are sorted
//     component by component (see diag.ComparePaths).
//   - A file that cannot be read, is not a regular file or is larger than
//     the Loader reads is one warning in its Facts, never opened unless it
//     is a regular file.
//   - One mistake, one diagnostic, at its root cause: a collection whose
//     pyproject.toml names it resolves and is checked whatever else the
//     file gets wrong (see Usable); the file carries the error, and
//     references into the collection are not made errors of their own.
//   - A Loader with Details keeps brief Facts (see Facts.Brief), and Keep
//     gives a collection's values objects of its own: no Facts value is
//     shared between files, and what a collection keeps lives and dies
//     with it.
package discovery
