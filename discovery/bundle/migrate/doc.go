// Package migrate turns a collection into a bundle repository: the files
// a bundle author would write for what the collection's pyproject.toml,
// profiles, agents, context files, scenario tools and modules said.
//
// Migrate reads a discovery.Collection and returns a Result: the files of
// the repository (bundle.md, behaviors/PROFILE.yaml and bundles/PROFILE.md
// for each profile, agents with meta:, context files, scenario tools,
// modules, the files the collection's mentions name, and MIGRATION.md)
// and the notes that say what was not carried over, or was carried in
// another form. Nothing is dropped without a note. Result.Plan compares
// the repository with a directory, and Plan.Diff prints the difference as
// a unified diff; Result.Write writes it, refusing a directory that holds
// anything but nothing, a .git, or an earlier migration of the same
// collection whose files are unchanged since (MIGRATION.md records them).
//
// The mapping, in short (docs/bundles.md, "Migrating a collection", has
// the whole of it):
//
//   - [project] name, version and description become bundle.md's
//     bundle: section; the name is the namespace.
//   - Each profile P becomes behaviors/P.yaml: its session, providers,
//     tools, hooks and agents, and its extends as includes (a profile of
//     the same collection as NS:behaviors/Q, a collection the runtime
//     knows by name as that bundle, any other as C:behaviors/Q, where a
//     migration of C puts it). The root bundle.md includes the behaviors
//     of the profiles chosen (Options.Profiles; by default the only
//     profile, else every one) and takes the instruction of the one
//     profile it holds; every other profile gets bundles/P.md, the bundle
//     to run in its place.
//   - Agents keep their file and body; their name and description go
//     under meta:.
//   - @collection:path mentions of the collection itself (its name or the
//     names its directory answers to) become @NS:path; a mention of a
//     profile names the file that now holds its instruction.
//
// It does not check what it writes (package check does), and it never
// fetches. It reads the collection's files, following a link to a file as
// discovery does, and the profiles of installed collections that an
// extends names; a mention or a source that leaves the collection's
// directory (..) is not followed.
//
// # Concurrency
//
// Migrate reads the file system only; a Result is not modified after
// Migrate returns, and may be used from any goroutine.
//
// # Caveats
//
//   - Only regular files are read, each under discovery's size limit; at
//     most MaxFiles files are carried, and a copied tree skips dot
//     directories, __pycache__, node_modules and virtual environments.
//   - Front matter is re-encoded from its YAML nodes: values, key order,
//     styles and most comments are kept, the layout of the text is not.
//     Aliases are expanded.
//   - A Result holds no absolute path and no time: the same collection
//     gives the same bytes on every machine.
package migrate
