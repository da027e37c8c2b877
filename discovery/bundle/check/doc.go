// Package check checks a bundle repository: every bundle, agent, mode,
// skill, recipe and context file in it.
//
// RootOf finds the repository around a path (the nearest root bundle at
// or above it), LoneRoot where a bundle file outside any is checked from,
// and PackagedManifest tells an amplifier-agent manifest by where it lies.
// Scan lists a repository's files and their kinds; Check parses each
// (package bundle: syntax, schemas, the mistakes the runtime loads
// without a word), composes each bundle with its includes (package
// compose), and checks what the runtime resolves only at run time: the
// agents and context files a bundle declares, and the @ns:path mentions
// of bundles, agents, modes and context files, a trailing . or : the
// runtime keeps included. Diagnostics are made only for the repository's
// own files, each once, sorted and bounded per file. Result.Report gives
// what a check of some of its files reports, their suppression comments
// applied; Result.Fix makes the fixes of a file that need no choice: the
// file's own (bundle.Fix) and the check's (Result.Fixes: a mention's
// trailing punctuation, a misspelt agent name or include near one name).
//
// It reads only through the compose.Files it is given and never fetches.
// It does not print, watch or cache: a command prints a Result, and the
// daemon keeps the files' parses and the compositions (Result.Reads and
// each Composition's Reads say what to watch).
//
// # Concurrency
//
// Check is safe for concurrent use when the Files given is. A Result is
// immutable.
//
// # Caveats
//
//   - At most MaxFiles files are checked, MaxDirDepth directories deep;
//     dot directories (but .amplifier) and .git, node_modules,
//     __pycache__ and virtual environments are not walked; of
//     .amplifier, only bundles/ is (its collections are a collections'
//     check's; its settings files are read for where bundles are found,
//     and their mistakes are bundle/settings).
//   - An @mention whose namespace no composition of the repository knows
//     is not checked: it may be an application's (@user:, @project:) or a
//     bundle not in the cache.
//   - Agents, modes and context files are checked against the namespaces
//     of the repository's root bundle; without one, against the root's
//     name only.
package check
