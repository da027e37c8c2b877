// Package lines reads the socket protocol's lines, as the server and the
// client both do: each line within a length limit, a line longer than
// the reader's buffer gathered within a byte Budget shared by the
// connections, and the id of a refused line recovered from its start, so
// that its answer can name it.
//
// It knows nothing of requests and answers beyond their ids: package
// query decodes them, package query/server answers them.
//
// # Concurrency
//
// A Reader belongs to one goroutine. A Budget is safe for concurrent use.
//
// # Caveats
//
//   - A line that fits in the reader's buffer is returned as a slice of
//     that buffer, valid until the next call (Reader.Owned tells a line
//     gathered into a slice of its own).
//   - A line too long, or over the budget, is dropped as it is read: it is
//     never held whole, and the next call starts on the next line.
//   - A nil *Budget allows everything.
package lines
