package lsp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/query/lsp"
)

// FuzzReader feeds arbitrary bytes to the message reader: it must never
// panic, hang or return a body above the limit.
func FuzzReader(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}Content-Length: 1\r\n\r\nx"))
	f.Add([]byte("Content-Length: 99999999999999999999\r\n\r\n"))
	f.Add([]byte("{}Content-Length: 2\r\n\r\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 1 << 10
		bodies, _, end := lsp.ReadFrames(bytes.NewReader(data), max)
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

// FuzzServe runs a whole session over arbitrary input: Serve must return
// once the input ends, with nil, ErrNoShutdown or a read error, and never
// panic.
func FuzzServe(f *testing.F) {
	open := `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///c/agents/a.md","languageId":"markdown","version":1,"text":"BAD"}}}`
	change := `{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///c/agents/a.md","version":2},"contentChanges":[{"range":{"start":{"line":0,"character":1},"end":{"line":0,"character":2}},"text":"😀"}]}}`
	f.Add([]byte(frameOf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`) + frameOf(open) + frameOf(change) +
		frameOf(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`) + frameOf(`{"jsonrpc":"2.0","method":"exit"}`)))
	f.Add([]byte(frameOf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"general":{"positionEncodings":["utf-8"]}}}}`) + frameOf(open) +
		frameOf(`{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///c/agents/a.md"},"position":{"line":0,"character":99}}}`)))
	f.Add([]byte(frameOf(`{"jsonrpc":"2.0","id":"x","method":"initialize","params":null}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		srv := lsp.NewServer(&fake{}, lsp.Options{Debounce: time.Microsecond, MaxMessage: 1 << 16})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := srv.Serve(ctx, bytes.NewReader(data), io.Discard)
		if ctx.Err() != nil {
			t.Fatal("Serve did not return after the end of its input")
		}
		if err != nil && !errors.Is(err, lsp.ErrNoShutdown) {
			t.Fatalf("Serve = %v", err)
		}
	})
}

// FuzzApplyChanges checks an edit against the offsets its range names, and
// that positions and offsets convert back and forth.
func FuzzApplyChanges(f *testing.F) {
	f.Add("a😀b\n漢字\r\nxyz", 0, 1, 1, 1, "Q", false)
	f.Add("a😀b\n漢字\r\nxyz", 0, 5, 2, 0, "", true)
	f.Add("", 3, 3, 0, 0, "new", false)
	f.Fuzz(func(t *testing.T, text string, l1, c1, l2, c2 int, insert string, utf8Enc bool) {
		src := []byte(text)
		r := discovery.Range{Start: discovery.Position{Line: l1, Character: c1}, End: discovery.Position{Line: l2, Character: c2}}
		got, err := lsp.ApplyChanges(src, []lsp.Change{{Range: &r, Text: insert}}, utf8Enc)
		a, b := lsp.OffsetOf(src, r.Start, utf8Enc), lsp.OffsetOf(src, r.End, utf8Enc)
		if a < 0 || b < 0 || a > len(src) || b > len(src) {
			t.Fatalf("offsets %d, %d outside a text of %d bytes", a, b, len(src))
		}
		if err != nil {
			if a <= b {
				t.Fatalf("error %v for an ordered range %d..%d", err, a, b)
			}
			return
		}
		if want := text[:a] + insert + text[b:]; string(got) != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		// Every rune boundary not inside a "\r\n" survives a round trip
		// through a UTF-16 position.
		lines := discovery.NewLineIndex(src)
		for off := 0; off <= len(src); {
			if !(off > 0 && off < len(src) && src[off-1] == '\r' && src[off] == '\n') {
				p := lines.Position(off)
				if back := lsp.OffsetOf(src, p, false); back != off && !strings.HasSuffix(text[:off], "\r") {
					t.Fatalf("offset %d → %+v → %d", off, p, back)
				}
				u8 := lsp.ConvertPosition(src, p, true)
				if lsp.OffsetOf(src, u8, true) != lsp.OffsetOf(src, p, false) {
					t.Fatalf("offset %d: UTF-16 %+v and UTF-8 %+v disagree", off, p, u8)
				}
				if back := lsp.ConvertPosition(src, u8, false); back != p && !strings.HasSuffix(text[:off], "\r") {
					t.Fatalf("offset %d: UTF-16 %+v → UTF-8 %+v → UTF-16 %+v", off, p, u8, back)
				}
			}
			if off == len(src) {
				break
			}
			_, size := utf8.DecodeRune(src[off:])
			off += size
		}
	})
}
