// Package lsp is amplidex's language server: it speaks the Language Server
// Protocol over a byte stream (stdio in practice) and gives editors
// diagnostics, completion, go-to-definition, references, hover and code
// actions for the files collection authors write — profiles, agents,
// bundle manifests, pyproject.toml and collections.lock.
//
// It speaks the protocol and nothing else: the JSON-RPC 2.0 session with
// Content-Length framing (package jsonrpc), the documents and their edits
// (a rope), positions in the negotiated encoding, debounced diagnostics,
// work-done progress, the status notification and watched files. What
// the answers say comes from an Analyzer, which the analysis engine
// (package query/analysis) is: its Workspace lays the open buffers over a
// catalog View and checks, completes and fixes. There are two Analyzers:
//
//   - InProcess is the engine's Workspace in the server's own process,
//     over an analysis.Local catalog, for when no daemon answers.
//   - DaemonAnalyzer asks the daemon one question per request
//     (query.MethodAnalyze: the buffer, the other open buffers, the
//     cursor), which the daemon answers with the engine's Workspace over
//     its own catalog's View (analysis.Workspace.Analyze), at one clock.
//     The documents of bundle repositories are answered by the in-process
//     Workspace (analysis.Workspace.BundleDocument). When the daemon
//     fails, the in-process Workspace answers; that is logged once. When
//     the connection is lost (the daemon restarted, or a newer build
//     replaced it), it connects again through its Redial, backing off
//     while none answers.
//
// One request is amplidex's own, for every editor: MethodMergedProfile
// ("amplidex/mergedProfile", params {textDocument: {uri}}) answers the
// effective profile of a profile, its whole extends chain merged over the
// unsaved buffers, as YAML with a comment on each key naming the profiles
// that set it (Merger; both Analyzers implement it). MethodComposedBundle
// ("amplidex/composedBundle") answers, for a file of a bundle repository,
// the mount plan of the bundle that includes it as Markdown, with origins
// and sizes (Composer; answered in process, as bundle documents are).
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
// Long work that answers wait for (the daemon's first scan, the first
// read of a project) is shown as the protocol's work-done progress
// (window/workDoneProgress/create, then $/progress begin, report and end)
// to a client that supports it: an Analyzer that is a Tasker says what
// that work is, and the server asks it while a call has waited a while.
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
// A DaemonAnalyzer and an InProcess may be used from any number of
// goroutines (see package analysis for the Workspace's guarantees).
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
//   - Which documents get diagnostics, and what each gets, is the
//     engine's to say (analysis.Checked and the caveats of package
//     analysis); the server publishes what its Analyzer gives, through
//     Options.Filter.
//   - Serve returns nil only after shutdown; an exit notification or the
//     end of input without shutdown returns ErrNoShutdown, which the command
//     maps to exit code 1 as the protocol asks.
package lsp
