package jsonrpc_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/amplidex/amplidex/query/lsp/jsonrpc"
)

// readFrames reads framed messages from r until it ends, returning the
// bodies, the per-message errors and the error that ended the stream.
func readFrames(r io.Reader, max int64) (bodies [][]byte, skipped []error, end error) {
	rd := jsonrpc.NewReader(r, max)
	for {
		body, err := rd.Read()
		var fe *jsonrpc.FrameError
		switch {
		case err == nil:
			bodies = append(bodies, body)
		case errors.As(err, &fe):
			skipped = append(skipped, err)
		default:
			return bodies, skipped, err
		}
	}
}

// FuzzReader feeds arbitrary bytes to the message reader: it must never
// panic, hang or return a body above the limit.
func FuzzReader(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}Content-Length: 1\r\n\r\nx"))
	f.Add([]byte("Content-Length: 99999999999999999999\r\n\r\n"))
	f.Add([]byte("{}Content-Length: 2\r\n\r\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 1 << 10
		bodies, _, end := readFrames(bytes.NewReader(data), max)
		if end == nil {
			t.Fatal("the stream ended without an error")
		}
		for _, b := range bodies {
			if len(b) > max {
				t.Fatalf("body of %d bytes above the limit %d", len(b), max)
			}
		}
	})
}
