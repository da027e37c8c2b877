// Package jsonrpc reads and writes JSON-RPC 2.0 messages framed as the
// Language Server Protocol frames them: a header block with a
// Content-Length, a blank line, then the JSON body.
//
// It knows no LSP method: a Reader gives each message's body, Decode
// checks that it is a request, a notification or a response, and a
// Writer sends responses, notifications and requests. The language
// server (package query/lsp) is built on it.
//
// # Concurrency
//
// A Reader serves one goroutine. A Writer is safe for concurrent use: it
// writes one whole message at a time.
//
// # Caveats
//
//   - A message the stream survives (a malformed header, a body above the
//     Reader's limit, which is read and dropped) is a *FrameError: the next
//     Read may succeed. Any other error, io.EOF included, ends the stream.
//   - A header line is at most 4 KiB; a longer one is skipped.
//   - After its first failed write, a Writer fails every write with the
//     same error.
package jsonrpc
