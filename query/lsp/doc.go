// Package lsp is amplidex's language server: it speaks the Language Server
// Protocol over a byte stream (stdio in practice) and gives editors
// diagnostics, completion, go-to-definition, references, hover and code
// actions for the files collection authors write — profiles, agents,
// bundle manifests, pyproject.toml and collections.lock.
//
// It knows the schemas itself (package discovery/schema's tables): completion
// offers the keys of the mapping at the cursor, read from the indentation
// of the lines above so that it works on front matter that does not parse
// yet, and the values of keys with a fixed set; hover on a key shows its
// description. Code actions fix diagnostics: they are worked out again
// from the file and the View when asked for (the diagnostics carry only
// their message), so that a fix always fits the text it edits.
//
// One request is amplidex's own, for every editor: MethodMergedProfile
// ("amplidex/mergedProfile", params {textDocument: {uri}}) answers the
// effective profile of a profile, its whole extends chain merged over the
// unsaved buffers, as YAML with a comment on each key naming the profiles
// that set it (Merger; both Analyzers implement it).
//
// Two more are amplidex's own. The code action kind source.fixAll.amplidex
// (query.ActionFixAll), asked for by name (an editor's fix on save), is
// one action that makes every fix of the buffer that needs no choice, as
// `check --fix` makes them: in rounds, the diagnostics the server would
// publish, then the safe fixes of an Analyzer that is a Fixer. The
// notification MethodStatus ("amplidex/status") says what answers (the
// daemon, scanning or ready, with its counts, or the server in process),
// to a client that asks for it (capabilities.experimental.amplidexStatus):
// the server asks an Analyzer that is a StatusReporter every second and
// sends what changed.
//
// The protocol layer (Server: JSON-RPC 2.0 with Content-Length framing, the
// document store, debounced diagnostics) knows nothing about collections:
// it asks an Analyzer. Workspace is the Analyzer of amplidex: it takes the
// catalog.View of a file's project from a Views source and lays the open
// buffers over it (the buffers' collections are cloned with what the
// buffers say and put in place of the originals with resolve.Set.Apply,
// which costs what it changes). It builds no Set of its own: every Set it
// answers from comes from a catalog.
//
// There are two sources of Views and two Analyzers:
//
//   - Local keeps one catalog.Catalog per session, read in process: a
//     project is added on its first View, a saved file (Invalidate) has its
//     collection read again before the next View, and roots older than
//     MaxAge (2s) are read again whole, for changes made outside the
//     editor. A stat cache makes reading again cheap.
//   - DaemonAnalyzer asks the daemon one question per request
//     (query.MethodAnalyze: the buffer, the other open buffers, the
//     cursor), which the daemon answers with this package's Workspace over
//     its own catalog's View (Workspace.Analyze), at one clock. When the
//     daemon fails, an in-process Workspace over a Local answers; that is
//     logged once. When the connection is lost (the daemon restarted, or
//     a newer build replaced it), it connects again through its Redial,
//     backing off while none answers.
//
// Long work that answers wait for (the daemon's first scan, the first
// read of a project) is shown as the protocol's work-done progress
// (window/workDoneProgress/create, then $/progress begin, report and end)
// to a client that supports it: an Analyzer that is a Tasker says what
// that work is, and the server asks it while a call has waited a while.
//
// Documents of bundle repositories (bundles.go, bundlenav.go) are
// answered in process with package check over the buffers laid on the
// disk (compose.Overlay), even beside a daemon: a document gets what a
// check of its repository reports of it; the check is shared by the open
// documents of one repository while the buffers are the same.
//
// It does not watch files itself: it asks a client that can register
// watched files dynamically to watch them (watched.go), and on every
// change checks the open documents again. It keeps no index of its own;
// it does not start a daemon.
//
// # Concurrency
//
// Serve runs one loop that owns every open document, so edits are applied in
// the order they arrive; it also hands the client's answers to the
// server's own requests to whoever waits for them. Diagnostics runs and requests (completion,
// definition, references, hover, code actions) run on their own goroutines over immutable snapshots of
// the buffers; each has a context that a newer edit or $/cancelRequest
// cancels. A reporter goroutine per session shows work-done progress.
// Writes to the client are serialized. Every goroutine Serve starts
// has ended when it returns, except the one blocked reading the input
// stream, which ends when that stream does.
//
// A Workspace, a Local and a DaemonAnalyzer may be used from any number
// of goroutines. Local applies one change to its catalog at a time, outside
// its mutex; a View asked for meanwhile waits for that change and is then
// looked at again. Invalidate does no I/O: it records what to read again.
//
// # Caveats
//
//   - Positions on the wire use the negotiated encoding: UTF-16 unless the
//     client offers UTF-8 in general.positionEncodings. Analyzers always see
//     and return UTF-16 positions (diag.Position); the server converts
//     them with one syntax.LineIndex per text, so converting the ranges
//     of a response costs the length of the text plus a bounded amount per
//     range, however long its lines.
//   - Lines end at "\n" (a "\r" before it is part of the line ending), as in
//     package discovery/syntax; a lone "\r" does not end a line.
//   - A published result is never stale: a diagnostics run whose document
//     changed, closed or was superseded in the meantime is dropped, not
//     published.
//   - A Content-Length above Options.MaxMessage is refused: the body is
//     skipped without being held in memory and an error is logged.
//   - A didChange is applied in time linear in the buffer and its edits:
//     many edits go through a rope of the buffer (see rope), never a new
//     copy and line index per edit. The session's loop applies it, so a
//     request sent after it sees its result; requests already running go
//     on meanwhile.
//   - Only profiles/*.md, agents/*.md (README.md aside), bundle.md,
//     pyproject.toml, collections.lock and the Markdown and YAML files of
//     bundle repositories get diagnostics, decided by path and, for a
//     bundle repository, by the root bundle above the file;
//     a pyproject.toml that belongs to no collection (no resource
//     directories, no [tool.amplifier…] table, in no root) gets none.
//   - A profile, agent or pyproject.toml of a collection gets exactly what
//     `check` reports about it (the collection's own diagnostics of the
//     file, its cross-references and its shadowing), computed over the
//     buffers. A profile or agent that is no resource of its collection is
//     checked on its own: its own problems and its qualified references.
//   - A file is answered for the nearest directory above it that holds a
//     .amplifier directory of the user's, else for the editor's project; a
//     .amplifier directory of another user makes no project, and is logged
//     once.
//   - A collection in no root (a working copy) is read from disk and put
//     ahead of every root with catalog.Catalog.WithArguments, which checks
//     every collection again; the View made is kept while neither the
//     project's View nor the working copy changes.
//   - Completion and hover of keys read block-style YAML by its
//     indentation; inside a flow mapping ({a: b}) they offer nothing.
//     Code actions that add or remove keys do so in block mappings only.
//   - References are found over the View of the file's project: a working
//     copy in no root is searched only when the file asked about is in it.
//   - Serve returns nil only after shutdown; an exit notification or the
//     end of input without shutdown returns ErrNoShutdown, which the command
//     maps to exit code 1 as the protocol asks.
package lsp
