// Package analysis is amplidex's analysis engine: it lays an editor's
// unsaved buffers over a published catalog.View and answers about a file
// as the buffers make it — diagnostics, completion, go-to-definition,
// references, hover, code actions and their fixes (the quick fixes,
// `check --fix` and source.fixAll), merged profiles, and the composed
// bundle of a bundle repository's document (ComposedBundle) — for profiles,
// agents, bundle manifests, pyproject.toml, collections.lock and the
// documents of bundle repositories.
//
// Workspace is the engine. It takes the View of a file's project from a
// Views source and lays the open buffers over it: the collections they
// belong to are cloned with what the buffers say and put in place of the
// originals with resolve.Set.Apply, which costs what it changes. It builds
// no Set of its own: every Set it answers from comes from a catalog.
//
// Every surface runs it: the language server (package query/lsp) in its
// own process over a Local, the daemon over its own catalog for the
// language server's analyze questions (Workspace.Analyze), and `check
// --fix` over the View it checked (Workspace.Fixes). There are two
// sources of Views here:
//
//   - Local keeps one catalog.Catalog per session, read in process: a
//     project is added on its first View, a saved file (Invalidate) has its
//     collection read again before the next View, and roots older than
//     MaxAge (2s) are read again whole, for changes made outside the
//     editor. A stat cache makes reading again cheap.
//   - A caller's own: the daemon's catalog, or the one View a check made.
//
// It knows the schemas itself (package discovery/schema's tables):
// completion offers the keys of the mapping at the cursor, read from the
// indentation of the lines above so that it works on front matter that
// does not parse yet, and the values of keys with a fixed set; hover on a
// key shows its description. Code actions fix diagnostics: they are
// worked out again from the file and the View when asked for (the
// diagnostics carry only their message), so that a fix always fits the
// text it edits.
//
// Documents of bundle repositories (bundles.go, bundlenav.go,
// bundleactions.go, bundlerefs.go) are answered with package
// discovery/bundle/check over the buffers laid on the disk
// (compose.Overlay), not over a View: a document gets what a check of its
// repository reports of it, the fixes that check makes (as check --fix
// makes them) and the references its compositions resolve; the check is
// shared by the open documents of one repository while the buffers are
// the same.
//
// It does not speak the Language Server Protocol (package query/lsp
// does: positions on the wire, documents, debouncing), talk to the
// daemon, watch files or keep an index of its own; positions are UTF-16
// (diag.Position) throughout.
//
// # Concurrency
//
// A Workspace and a Local may be used from any number of goroutines; the
// Views they are given are immutable and are never written. Local applies
// one change to its catalog at a time, outside its mutex; a View asked
// for meanwhile waits for that change and is then looked at again.
// Invalidate does no I/O: it records what to read again. No file is read
// while a Workspace's mutex is held.
//
// # Caveats
//
//   - Only profiles/*.md, agents/*.md (README.md aside), bundle.md,
//     pyproject.toml, collections.lock and the Markdown and YAML files of
//     bundle repositories get diagnostics (Checked), decided by path and,
//     for a bundle repository, by the root bundle above the file; a
//     pyproject.toml that belongs to no collection (no resource
//     directories, no [tool.amplifier…] table, in no root) gets none.
//   - A profile, agent or pyproject.toml of a collection gets exactly what
//     `check` reports about it (the collection's own diagnostics of the
//     file, its cross-references and its shadowing, suppressed), computed
//     over the buffers; a lock file of a root gets what the View gives it.
//     A profile or agent that is no resource of its collection is checked
//     on its own: its own problems and its qualified references.
//   - A file is answered for the nearest directory above it that holds a
//     .amplifier directory of the user's, else for the Workspace's
//     project; a .amplifier directory of another user makes no project,
//     and is logged once.
//   - A collection in no root (a working copy) is read from disk and put
//     ahead of every root with catalog.Catalog.WithArguments, which checks
//     every collection again; the View made is kept while neither the
//     project's View nor the working copy changes.
//   - Completion and hover of keys read block-style YAML by its
//     indentation; inside a flow mapping ({a: b}) they offer nothing.
//     Code actions that add or remove keys do so in block mappings only.
//   - References are found over the View of the file's project: a working
//     copy in no root is searched only when the file asked about is in it.
package analysis
