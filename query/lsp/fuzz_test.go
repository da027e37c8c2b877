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

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query/lsp"
)

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
		r := diag.Range{Start: diag.Position{Line: l1, Character: c1}, End: diag.Position{Line: l2, Character: c2}}
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
		lines := syntax.NewLineIndex(src)
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

// applyReference is the plain definition of a didChange: each change in
// turn, its range resolved on the text the changes before it made.
func applyReference(text []byte, changes []lsp.Change, utf8Enc bool) ([]byte, bool) {
	out := text
	for _, c := range changes {
		if c.Range == nil {
			out = []byte(c.Text)
			continue
		}
		a, b := lsp.OffsetOf(out, c.Range.Start, utf8Enc), lsp.OffsetOf(out, c.Range.End, utf8Enc)
		if b < a {
			return text, false
		}
		out = append(append(append([]byte{}, out[:a]...), c.Text...), out[b:]...)
	}
	return out, true
}

// changeScript turns fuzz input into changes: every four bytes of script
// are a range (small lines and characters, some negative), and the texts
// are the pieces of inserts between "|" in turn; a range of 0xff bytes is
// a change of the whole text.
func changeScript(script []byte, inserts string) []lsp.Change {
	texts := strings.Split(inserts, "|")
	var changes []lsp.Change
	for i := 0; i+4 <= len(script) && len(changes) < 64; i += 4 {
		text := texts[len(changes)%len(texts)]
		if script[i] == 0xff && script[i+1] == 0xff {
			changes = append(changes, lsp.Change{Text: text})
			continue
		}
		num := func(b byte) int { return int(int8(b)) % 24 }
		r := diag.Range{
			Start: diag.Position{Line: num(script[i]) / 3, Character: num(script[i+1])},
			End:   diag.Position{Line: num(script[i+2]) / 3, Character: num(script[i+3])},
		}
		changes = append(changes, lsp.Change{Range: &r, Text: text})
	}
	return changes
}

// FuzzApplyChangeSequence compares didChanges of many changes with the
// plain definition: through ApplyChanges as they come, and through the
// rope (with chunks of a few bytes, so that edits cut and join them) on
// their valid UTF-8 form.
func FuzzApplyChangeSequence(f *testing.F) {
	f.Add("a😀b\n漢字\r\nxyz\n", []byte{0, 1, 0, 2, 3, 0, 3, 5, 1, 1, 0, 0, 6, 2, 6, 9, 0, 0, 0, 0}, "Q|\n|😀x|", false)
	f.Add("line one\r\nline two\nthree 😀😀😀\n", []byte{3, 4, 6, 1, 6, 3, 6, 4, 0, 0, 9, 99, 0xff, 0xff, 0, 0, 0, 5, 0, 6}, "é|\r|\r\n", true)
	f.Add("x", []byte{9, 9, 0, 0, 0, 0, 0, 0}, "", false)
	f.Add("ab\r\ncd\r\n", []byte{0, 20, 0, 20, 3, 20, 3, 20}, "X", false)
	f.Add("😀😀\n😀x\n", []byte{0, 1, 0, 3, 3, 2, 3, 3}, "Y", false)
	f.Fuzz(func(t *testing.T, text string, script []byte, inserts string, utf8Enc bool) {
		changes := changeScript(script, inserts)
		want, ok := applyReference([]byte(text), changes, utf8Enc)
		got, err := lsp.ApplyChanges([]byte(text), changes, utf8Enc)
		if (err == nil) != ok || string(got) != string(want) {
			t.Fatalf("ApplyChanges = %q, %v; want %q (ok %v)", got, err, want, ok)
		}
		valid := strings.ToValidUTF8(text, "\uFFFD")
		vchanges := changeScript(script, strings.ToValidUTF8(inserts, "\uFFFD"))
		want, ok = applyReference([]byte(valid), vchanges, utf8Enc)
		for _, chunk := range []int{1, 3, 512} {
			got, err := lsp.ApplyChangesRope([]byte(valid), vchanges, utf8Enc, chunk)
			if (err == nil) != ok || string(got) != string(want) {
				t.Fatalf("chunks of %d: rope gives %q, %v; want %q (ok %v)", chunk, got, err, want, ok)
			}
		}
	})
}
