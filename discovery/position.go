package discovery

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// LineIndex maps byte offsets in a text to Positions. Lines end at "\n"; a
// "\r" before it belongs to the line ending, not to the line.
type LineIndex struct {
	src   []byte
	start []int // byte offset where each line starts
}

// NewLineIndex indexes src. It keeps src; do not modify it afterwards.
func NewLineIndex(src []byte) *LineIndex {
	starts := make([]int, 1, bytes.Count(src, []byte{'\n'})+1)
	for i := 0; ; {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		starts = append(starts, i)
	}
	return &LineIndex{src: src, start: starts}
}

// Lines returns how many lines the text has (at least one).
func (x *LineIndex) Lines() int { return len(x.start) }

// LineStart returns the byte offset at which 0-based line n starts, clamped
// to the text.
func (x *LineIndex) LineStart(n int) int {
	switch {
	case n < 0:
		return 0
	case n >= len(x.start):
		return len(x.src)
	}
	return x.start[n]
}

// LineEnd returns the byte offset just past the content of line n, before
// its "\n" or "\r\n".
func (x *LineIndex) LineEnd(n int) int {
	if n < 0 {
		return 0
	}
	if n >= len(x.start)-1 {
		return len(x.src)
	}
	end := x.start[n+1] - 1
	if end > x.start[n] && x.src[end-1] == '\r' {
		end--
	}
	return end
}

// Line returns the bytes of line n without its line ending.
func (x *LineIndex) Line(n int) []byte {
	return x.src[x.LineStart(n):x.LineEnd(n)]
}

// Position converts a byte offset into a Position (UTF-16 characters).
func (x *LineIndex) Position(off int) Position {
	if off < 0 {
		off = 0
	}
	if off > len(x.src) {
		off = len(x.src)
	}
	// Binary search for the last line start <= off.
	lo, hi := 0, len(x.start)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if x.start[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return Position{Line: lo, Character: UTF16Len(x.src[x.start[lo]:off])}
}

// Range converts a byte span into a Range.
func (x *LineIndex) Range(start, end int) Range {
	return Range{Start: x.Position(start), End: x.Position(end)}
}

// LineRange returns the Range covering the content of line n.
func (x *LineIndex) LineRange(n int) Range {
	return x.Range(x.LineStart(n), x.LineEnd(n))
}

// Offset converts a 1-based line and a 1-based column counted in runes (as
// YAML and TOML parsers report them) into a byte offset, clamped to the line.
func (x *LineIndex) Offset(line, runeCol int) int {
	n := line - 1
	if n < 0 {
		n = 0
	}
	if n >= len(x.start) {
		return len(x.src)
	}
	off, end := x.LineStart(n), x.LineEnd(n)
	for c := 1; c < runeCol && off < end; c++ {
		_, size := utf8.DecodeRune(x.src[off:end])
		off += size
	}
	return off
}

// UTF16Len counts the UTF-16 code units of b; invalid bytes count as one
// unit each (they are replaced by U+FFFD when decoded).
func UTF16Len(b []byte) int {
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
