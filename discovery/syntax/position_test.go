package syntax_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// The reference implementations below compute positions the simple way,
// decoding each line from its start for every query. The indexed ones must
// give the same answers for every offset of every text.

// refLineStart returns the start of the line holding off.
func refLineStart(src []byte, off int) (line, start int) {
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, start
}

func refUTF16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if utf16.RuneLen(r) == 2 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func refPosition(src []byte, off int) diag.Position {
	off = min(max(off, 0), len(src))
	line, start := refLineStart(src, off)
	return diag.Position{Line: line, Character: refUTF16Len(src[start:off])}
}

// refOffset is LineIndex.Offset the simple way.
func refOffset(src []byte, line, runeCol int) int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	n := max(line-1, 0)
	if n >= len(starts) {
		return len(src)
	}
	off, end := starts[n], len(src)
	if n+1 < len(starts) {
		end = starts[n+1] - 1
		if end > starts[n] && src[end-1] == '\r' {
			end--
		}
	}
	for c := 1; c < runeCol && off < end; c++ {
		_, size := utf8.DecodeRune(src[off:end])
		off += size
	}
	return off
}

// refPositionOffset is LineIndex.PositionOffset the simple way.
func refPositionOffset(src []byte, p diag.Position) int {
	if p.Line < 0 {
		return 0
	}
	start := 0
	for i := 0; i < p.Line; i++ {
		j := strings.IndexByte(string(src[start:]), '\n')
		if j < 0 {
			return len(src)
		}
		start += j + 1
	}
	end := len(src)
	if j := strings.IndexByte(string(src[start:]), '\n'); j >= 0 {
		end = start + j
		if end > start && src[end-1] == '\r' {
			end--
		}
	}
	units, off := 0, start
	for off < end {
		r, size := utf8.DecodeRune(src[off:end])
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > p.Character {
			return off
		}
		units += w
		off += size
	}
	return end
}

// refYAMLLines splits src[start:end] as go-yaml breaks lines.
func refYAMLLines(src []byte, start, end int) []int {
	lines := []int{start}
	for i := start; i < end; {
		switch c := src[i]; {
		case c == '\n':
			i++
		case c == '\r':
			i++
			if i < end && src[i] == '\n' {
				i++
			}
		case c == 0xC2 && i+1 < end && src[i+1] == 0x85:
			i += 2
		case c == 0xE2 && i+2 < end && src[i+1] == 0x80 && (src[i+2] == 0xA8 || src[i+2] == 0xA9):
			i += 3
		default:
			i++
			continue
		}
		lines = append(lines, i)
	}
	return lines
}

func refYAMLOffset(src []byte, start, end int, lines []int, line, col int) int {
	switch {
	case line < 1:
		return start
	case line > len(lines):
		return end
	}
	off, stop := lines[line-1], end
	if line < len(lines) {
		stop = lines[line]
	}
	for c := 1; c < col && off < stop; c++ {
		_, size := utf8.DecodeRune(src[off:stop])
		off += size
	}
	return off
}

func refYAMLLineEnd(src []byte, end, off int) int {
	for i := off; i < end; i++ {
		if src[i] == '\n' || src[i] == '\r' {
			return i
		}
	}
	return end
}

// randomText returns n bytes or a little more of pieces that exercise
// every decoding case: ASCII, two-, three- and four-byte characters (the
// last a UTF-16 surrogate pair), line breaks of every kind go-yaml knows,
// invalid and truncated sequences, and @mentions. With breaks set, lines
// are of every length, some shorter and some longer than the column mark
// step; else the text is one line.
func randomText(r *rand.Rand, n int, breaks bool) []byte {
	pieces := []string{"a", "b ", "é", "中", "😀", "\U0010FFFF", "\xff", "\x80", "\xe4\xb8", "\xf0\x9f\x98", "\xed\xa0\x80",
		"@c:p.md ", "@x-1:dir/é.md, ", " @z:😀.md.", "\u0085", "\u2028"}
	lineBreaks := []string{"\n", "\r\n", "\r"}
	every := []int{4, 40, syntax.ColStep, 4 * syntax.ColStep}[r.IntN(4)]
	var b strings.Builder
	for b.Len() < n {
		if breaks && r.IntN(every) == 0 {
			b.WriteString(lineBreaks[r.IntN(len(lineBreaks))])
			continue
		}
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return []byte(b.String())
}

// TestPositionMatchesReference compares LineIndex with the simple
// implementation on random texts, at every offset.
func TestPositionMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 60; iter++ {
		src := randomText(r, r.IntN(6*syntax.ColStep), iter%3 != 0)
		x := syntax.NewLineIndex(src)
		ref := make([]diag.Position, len(src)+1)
		for off := range ref {
			ref[off] = refPosition(src, off)
		}
		// Out of order, so that no query profits from the one before.
		for _, off := range r.Perm(len(src) + 1) {
			if got := x.Position(off); got != ref[off] {
				t.Fatalf("text %q: Position(%d) = %v, want %v", src, off, got, ref[off])
			}
		}
		for _, off := range []int{-1, len(src) + 1} {
			if got, want := x.Position(off), refPosition(src, off); got != want {
				t.Fatalf("text %q: Position(%d) = %v, want %v", src, off, got, want)
			}
		}
		for i := 0; i < 200; i++ {
			a, b := r.IntN(len(src)+1), r.IntN(len(src)+1)
			if got := x.Range(a, b); got.Start != ref[a] || got.End != ref[b] {
				t.Fatalf("text %q: Range(%d, %d) = %v, want %v-%v", src, a, b, got, ref[a], ref[b])
			}
		}
		// A range whose end is just before or after its start.
		for a := 0; a <= len(src); a++ {
			for b := max(a-5, 0); b <= min(a+5, len(src)); b++ {
				if got := x.Range(a, b); got.Start != ref[a] || got.End != ref[b] {
					t.Fatalf("text %q: Range(%d, %d) = %v, want %v-%v", src, a, b, got, ref[a], ref[b])
				}
			}
		}
		for line := 0; line <= x.Lines()+1; line++ {
			for _, col := range []int{-1, 0, 1, 2, 3, syntax.ColStep - 1, syntax.ColStep, syntax.ColStep + 1, 2*syntax.ColStep + 7, r.IntN(6 * syntax.ColStep), 1 << 20} {
				if got, want := x.Offset(line, col), refOffset(src, line, col); got != want {
					t.Fatalf("text %q: Offset(%d, %d) = %d, want %d", src, line, col, got, want)
				}
			}
		}
		for line := -1; line <= x.Lines()+1; line++ {
			for _, ch := range []int{-1, 0, 1, 2, syntax.ColStep - 1, syntax.ColStep, syntax.ColStep + 1, r.IntN(6 * syntax.ColStep), 1 << 20} {
				p := diag.Position{Line: line, Character: ch}
				if got, want := x.PositionOffset(p), refPositionOffset(src, p); got != want {
					t.Fatalf("text %q: PositionOffset(%v) = %d, want %d", src, p, got, want)
				}
			}
		}
		// The positions Position gives, some inside characters and some
		// in line ends, convert back as the simple way converts them.
		for off, p := range ref {
			if back := x.PositionOffset(p); back != refPositionOffset(src, p) {
				t.Fatalf("text %q: PositionOffset(Position(%d)) = %d, want %d", src, off, back, refPositionOffset(src, p))
			}
		}
		if got, want := syntax.UTF16Len(src), refUTF16Len(src); got != want {
			t.Fatalf("text %q: UTF16Len = %d, want %d", src, got, want)
		}
	}
}

// TestMentionRangesMatchReference checks the ranges FindMentions gives,
// which it computes going along each line, against the simple positions.
func TestMentionRangesMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 40; iter++ {
		src := randomText(r, r.IntN(8*syntax.ColStep), iter%2 == 0)
		// Where each "@" is: an ASCII byte is a character of its own, so no
		// two share a position.
		at := map[diag.Position]int{}
		for off, c := range src {
			if c == '@' {
				at[refPosition(src, off)] = off
			}
		}
		ms := syntax.FindMentions(src, 0, syntax.NewLineIndex(src))
		if len(ms) == 0 {
			t.Fatalf("text %q: no mentions", src)
		}
		for _, m := range ms {
			start, ok := at[m.Range.Start]
			text := "@" + m.Text()
			if !ok || !strings.HasPrefix(string(src[start:]), text) || refPosition(src, start+len(text)) != m.Range.End {
				t.Fatalf("text %q: mention %s at %v, which is not where it is written", src, text, m.Range)
			}
		}
	}
}

// TestYAMLTextMatchesReference compares the table that maps go-yaml's
// line and rune columns to offsets with the simple implementation.
func TestYAMLTextMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 60; iter++ {
		src := randomText(r, r.IntN(6*syntax.ColStep), iter%3 != 0)
		start := r.IntN(len(src)/4 + 1)
		for start > 0 && start < len(src) && !utf8.RuneStart(src[start]) {
			start-- // the YAML text starts on a line of its own
		}
		end := len(src) - r.IntN(len(src)/4+1)
		if end < start {
			end = start
		}
		offset, lineEnd, n := syntax.YAMLTextOf(src, start, end)
		lines := refYAMLLines(src, start, end)
		if n != len(lines) {
			t.Fatalf("text %q [%d:%d]: %d lines, want %d", src, start, end, n, len(lines))
		}
		for line := 0; line <= len(lines)+1; line++ {
			for _, col := range []int{-1, 0, 1, 2, syntax.ColStep, syntax.ColStep + 1, r.IntN(6 * syntax.ColStep), 1 << 20} {
				if got, want := offset(line, col), refYAMLOffset(src, start, end, lines, line, col); got != want {
					t.Fatalf("text %q [%d:%d]: offset(%d, %d) = %d, want %d", src, start, end, line, col, got, want)
				}
			}
		}
		for off := start; off <= end; off++ {
			if got, want := lineEnd(off), refYAMLLineEnd(src, end, off); got != want {
				t.Fatalf("text %q [%d:%d]: lineEnd(%d) = %d, want %d", src, start, end, off, got, want)
			}
		}
	}
}

// FuzzLineIndex compares LineIndex and the YAML line table with the simple
// implementations on any text.
func FuzzLineIndex(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 8; i++ {
		f.Add(randomText(r, 3*syntax.ColStep, i%2 == 0))
	}
	f.Add([]byte("a\r\nb\rc\u0085d\u2028e\xff\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 8*syntax.ColStep {
			src = src[:8*syntax.ColStep] // the reference is quadratic
		}
		x := syntax.NewLineIndex(src)
		for off := -1; off <= len(src)+1; off++ {
			if got, want := x.Position(off), refPosition(src, off); got != want {
				t.Fatalf("Position(%d) = %v, want %v", off, got, want)
			}
		}
		for line := 0; line <= x.Lines()+1; line++ {
			for _, col := range []int{0, 1, 2, syntax.ColStep / 2, syntax.ColStep + 1, 3 * syntax.ColStep} {
				if got, want := x.Offset(line, col), refOffset(src, line, col); got != want {
					t.Fatalf("Offset(%d, %d) = %d, want %d", line, col, got, want)
				}
			}
		}
		for line := -1; line <= x.Lines()+1; line++ {
			for _, ch := range []int{0, 1, 2, syntax.ColStep + 1, 3 * syntax.ColStep} {
				p := diag.Position{Line: line, Character: ch}
				if got, want := x.PositionOffset(p), refPositionOffset(src, p); got != want {
					t.Fatalf("PositionOffset(%v) = %d, want %d", p, got, want)
				}
			}
		}
		offset, lineEnd, n := syntax.YAMLTextOf(src, 0, len(src))
		lines := refYAMLLines(src, 0, len(src))
		if n != len(lines) {
			t.Fatalf("%d YAML lines, want %d", n, len(lines))
		}
		for line := 0; line <= n+1; line++ {
			for _, col := range []int{0, 1, 2, syntax.ColStep + 1, 3 * syntax.ColStep} {
				if got, want := offset(line, col), refYAMLOffset(src, 0, len(src), lines, line, col); got != want {
					t.Fatalf("YAML offset(%d, %d) = %d, want %d", line, col, got, want)
				}
			}
		}
		for off := 0; off <= len(src); off++ {
			if got, want := lineEnd(off), refYAMLLineEnd(src, len(src), off); got != want {
				t.Fatalf("YAML lineEnd(%d) = %d, want %d", off, got, want)
			}
		}
	})
}

// TestLineIndexConcurrent: goroutines sharing one LineIndex, the first of
// them building its column marks, all get the simple answers (and the race
// detector sees no race).
func TestLineIndexConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	src := randomText(r, 16*syntax.ColStep, false)
	want := make([]diag.Position, len(src)+1)
	for off := range want {
		want[off] = refPosition(src, off)
	}
	x := syntax.NewLineIndex(src)
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func(seed uint64) {
			r := rand.New(rand.NewPCG(seed, seed))
			for i := 0; i < 2000; i++ {
				off := r.IntN(len(src) + 1)
				if got := x.Position(off); got != want[off] {
					errs <- fmt.Errorf("Position(%d) = %v, want %v", off, got, want[off])
					return
				}
			}
			errs <- nil
		}(uint64(g))
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
