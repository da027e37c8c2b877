// Package discovery is the domain of amplidex: collections, the resources
// they hold, the documents authors write, and the diagnostics those
// documents earn.
//
// It finds collections in a root (flat, nested and hybrid layouts), lists
// their profiles, agents, context files, scenario tools and modules, parses
// pyproject.toml, front matter and lock files, validates them against strict
// schemas, resolves names across the project, user and bundled roots, and
// checks cross-references (extends, agent names, @mentions, requires),
// saying why a reference does not resolve. Suppression comments
// (`# amplidex: ignore[code]`) are read from a file's bytes and applied to
// its diagnostics by Suppress, for every caller alike.
//
// It does not watch files, store anything, or talk to other processes: those
// are the jobs of the watcher, index and query packages, which build on this
// one. It imports no other package of this module.
//
// # Concurrency
//
// Functions here are pure or read the file system only; values they return
// are not shared with the package afterwards, so callers may use them from
// any goroutine. A Set (the resolved view over all roots) is immutable once
// built.
//
// # Caveats
//
//   - Every position in a Diagnostic is 0-based, with the character counted
//     in UTF-16 code units, as the Language Server Protocol counts them.
//   - Paths in values are absolute and cleaned; resource lists are sorted
//     component by component (see ComparePaths).
//   - Parsers never panic on any input and are bounded in time and memory:
//     oversize files and YAML alias expansion are cut off with a diagnostic.
//   - Diagnostics are bounded per file: each producer (a parser, the
//     cross-reference check of a collection, the lock check) makes at most
//     diag.MaxPerArea of one area for one file, in a fixed order, and
//     then one CodeTooManyDiagnostics that counts the rest without making
//     them.
//   - One mistake, one diagnostic, at its root cause: a collection whose
//     pyproject.toml names it resolves and is checked whatever else the
//     file gets wrong (see Usable); the file carries the error, and
//     references into the collection are not made errors of their own.
//     Likewise a collection that another requires but that is not
//     installed is one CodeDepNotInstalled warning at the requires entry;
//     the requirer's references into it are not checked, so that its
//     answer does not depend on what else is installed.
//   - Decoded front matter keeps what its author wrote: mappings are *Map,
//     in the author's key order, and a float is a Float (10.0 stays 10.0),
//     in JSON and YAML alike; merged profiles keep that order too (see
//     Set.Effective).
package discovery
