// Package compose resolves and composes bundles as amplifier-foundation's
// BundleRegistry loads them: where a bundle's includes come from (names,
// ns:path with its extension search, relative paths, git+https URLs in the
// runtime's cache, file:// URIs), which namespaces exist, and the mount
// plan the runtime would mount, with the origin of every part.
//
// Locate reads an Env (paths only) into Locations: the root bundles at and
// above the working directory, .amplifier/bundles/, $AMPLIFIER_HOME/
// bundles/, the settings files' bundle.added and sources.bundles, the
// CLI's well-known names and the runtime's registry.json. Compose loads one
// bundle file with its includes, in the order the runtime's asyncio loads
// run, with the runtime's registry, its caches and its quirks, and returns
// a Composition: the mount plan (to_mount_plan()'s shape), the include
// tree, the agents and context files and where they resolve, the
// namespaces, size estimates, the include diagnostics, and every path it
// read (what a cache must watch to know it stale).
//
// Locations.Bundles lists the bundles found (name, version, namespace,
// where), and Locations.Resolve turns a reference (a path, a name, ns:path
// or a URI in the cache) into its file.
//
// It reads only through Files, never the disk behind the caller's back:
// the daemon passes its file cache, the language server its unsaved
// buffers (Overlay), a command DiskFiles. A Graph, which the caller owns,
// maps each path to the compositions that read it, so that a save
// re-composes only the bundles that include the saved file. It never fetches: a git include that is
// not in the cache is one warning. Where amplidex departs from the
// runtime, docs/bundles.md says so (the rulings): a relative include
// resolves from the including file's directory; a name the registry maps
// elsewhere resolves to the repository the bundle is in; a top bundle
// whose include fails is composed without it.
//
// It does not parse files (package bundle does), walk repositories or
// check the agents, context files and mentions of a repository (package
// check does).
//
// # Concurrency
//
// Locate and Compose are safe for concurrent use as long as the Files
// given is; DiskFiles is. A Composition and a Locations are immutable.
//
// # Caveats
//
//   - A composition follows at most MaxIncludeDepth nested includes and
//     MaxLoads loads; past them, one diagnostic.
//   - Paths are cleaned lexically; symbolic links are not resolved, where
//     the runtime resolves them.
//   - A URI the runtime would download (git not in the cache, https, zip)
//     is reported, never read.
package compose
