// Package lsp is amplidex's language server: it speaks the Language Server
// Protocol over a byte stream (stdio in practice) and gives editors
// diagnostics, completion, go-to-definition and hover for the files
// collection authors write — profiles, agents, bundle manifests,
// pyproject.toml and collections.lock.
//
// The protocol layer (Server: JSON-RPC 2.0 with Content-Length framing, the
// document store, debounced diagnostics) knows nothing about collections:
// it asks an Analyzer. Workspace is the Analyzer of amplidex: it builds on
// package discovery, lays the open buffers over the files on disk, and
// finds collections through a Resolver — a Scanner that reads the roots in
// process, or a DaemonResolver that asks the daemon's index and falls back
// to a Scanner when the daemon does not answer.
//
// It does not watch files or keep an index of its own; it does not start a
// daemon.
//
// # Concurrency
//
// Serve runs one loop that owns every open document, so edits are applied in
// the order they arrive. Diagnostics runs and requests (completion,
// definition, hover) run on their own goroutines over immutable snapshots of
// the buffers; each has a context that a newer edit or $/cancelRequest
// cancels. Writes to the client are serialized. Every goroutine Serve starts
// has ended when it returns, except the one blocked reading the input
// stream, which ends when that stream does.
//
// # Caveats
//
//   - Positions on the wire use the negotiated encoding: UTF-16 unless the
//     client offers UTF-8 in general.positionEncodings. Analyzers always see
//     and return UTF-16 positions (discovery.Position); the server converts.
//   - Lines end at "\n" (a "\r" before it is part of the line ending), as in
//     package discovery; a lone "\r" does not end a line.
//   - A published result is never stale: a diagnostics run whose document
//     changed, closed or was superseded in the meantime is dropped, not
//     published.
//   - A Content-Length above Options.MaxMessage is refused: the body is
//     skipped without being held in memory and an error is logged.
//   - Only profiles/*.md, agents/*.md (README.md aside), bundle.md,
//     pyproject.toml and collections.lock get diagnostics, decided by path;
//     a pyproject.toml that belongs to no collection (no resource
//     directories, no [tool.amplifier…] table, in no root) gets none.
//   - Serve returns nil only after shutdown; an exit notification or the
//     end of input without shutdown returns ErrNoShutdown, which the command
//     maps to exit code 1 as the protocol asks.
package lsp
