package syntax

import (
	"bytes"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/amplidex/amplidex/discovery/diag"
)

// LineIndex maps byte offsets in a text to Positions. Lines end at "\n"; a
// "\r" before it belongs to the line ending, not to the line.
//
// Every conversion costs time bounded by the log of the number of lines
// plus a constant, however long the line: lines longer than colStep bytes
// get a table of column marks, built once, on the first position asked
// for far into such a line. A LineIndex is safe for concurrent use.
type LineIndex struct {
	src   []byte
	start []int // byte offset where each line starts

	marksOnce sync.Once
	marks     colMarks
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

// colMarksOf returns the column marks of x, building them the first time.
func (x *LineIndex) colMarksOf() *colMarks {
	x.marksOnce.Do(func() { x.marks = buildColMarks(x.src, 0, len(x.src), x.start) })
	return &x.marks
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
// An offset inside a multi-byte character counts the bytes of that
// character before it as one character each, as UTF16Len of the line up to
// the offset does.
func (x *LineIndex) Position(off int) diag.Position {
	return x.position(off, nil)
}

// lineCursor remembers where the last position was found, so that the
// next one on the same line, further on, is found by decoding only the
// bytes between them. It belongs to one caller; the LineIndex keeps none.
type lineCursor struct {
	line int
	at   colMark // a character boundary on the line, at or before the last offset
	ok   bool
}

// position converts off as Position does, starting from cur when it is on
// the same line and not past off, and leaves cur at off (cur may be nil).
func (x *LineIndex) position(off int, cur *lineCursor) diag.Position {
	off = min(max(off, 0), len(x.src))
	var line int
	if cur != nil && cur.ok && x.start[cur.line] <= off && (cur.line+1 == len(x.start) || off < x.start[cur.line+1]) {
		line = cur.line
	} else {
		line = x.lineOf(off)
	}
	s := x.start[line]
	from := colMark{off: s}
	if cur != nil && cur.ok && cur.line == line && cur.at.off <= off {
		from = cur.at
	}
	if off-from.off > colStep {
		if m := x.colMarksOf().before(s, off); m.off > from.off {
			from = m
		}
	}
	units, last := advance(x.src, from, off)
	if cur != nil {
		*cur = lineCursor{line: line, at: last, ok: true}
	}
	return diag.Position{Line: line, Character: units}
}

// lineOf returns the line that holds offset off (0 <= off <= len(src)).
func (x *LineIndex) lineOf(off int) int {
	// The last line start <= off.
	lo, hi := 0, len(x.start)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if x.start[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// Range converts a byte span into a Range.
func (x *LineIndex) Range(start, end int) diag.Range {
	var cur lineCursor
	return x.rangeAt(&cur, start, end)
}

// rangeAt converts a byte span into a Range with cur (see lineCursor), so
// that a caller going through a line in order pays for each byte once.
func (x *LineIndex) rangeAt(cur *lineCursor, start, end int) diag.Range {
	return diag.Range{Start: x.position(start, cur), End: x.position(end, cur)}
}

// LineRange returns the Range covering the content of line n.
func (x *LineIndex) LineRange(n int) diag.Range {
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
	s, end := x.LineStart(n), x.LineEnd(n)
	var marks *colMarks
	if end-s > colStep {
		marks = x.colMarksOf()
	}
	return marks.runeOffset(x.src, s, end, x.LineStart(n+1), runeCol-1)
}

// PositionOffset converts a Position (UTF-16 characters) back into a byte
// offset. A line before the first is the start of the text and one past
// the last its end; a character past the end of its line is where the
// line's content ends (before "\r\n"), and one inside a character (the
// second half of a surrogate pair) is where that character starts. An
// invalid byte counts as one character, as Position counts it.
func (x *LineIndex) PositionOffset(p diag.Position) int {
	switch {
	case p.Line < 0:
		return 0
	case p.Line >= len(x.start):
		return len(x.src)
	}
	s, end := x.LineStart(p.Line), x.LineEnd(p.Line)
	from := colMark{off: s}
	if next := x.LineStart(p.Line + 1); next-s > colStep && p.Character > 0 {
		cm := x.colMarksOf()
		// The last mark of the line with no more units before it than
		// asked for.
		lo := (s-cm.base)/colStep + 1
		hi := min((next-1-cm.base)/colStep+1, len(cm.marks))
		if lo < hi {
			k := lo + sort.Search(hi-lo, func(i int) bool { return cm.marks[lo+i].units > p.Character }) - 1
			if k >= lo {
				from = cm.marks[k]
			}
		}
	}
	if from.off >= end {
		return end
	}
	off, units := from.off, from.units
	for off < end {
		r, size := utf8.DecodeRune(x.src[off:end])
		if units+runeUnits(r) > p.Character {
			return off
		}
		units += runeUnits(r)
		off += size
	}
	return end
}

// UTF16Len counts the UTF-16 code units of b; invalid bytes count as one
// unit each (they are replaced by U+FFFD when decoded).
func UTF16Len(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			n++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		i += size
		n += runeUnits(r)
	}
	return n
}

// runeUnits is how many UTF-16 code units a decoded rune takes: two for
// a character beyond the Basic Multilingual Plane, else one (U+FFFD
// included, which stands for an invalid byte).
func runeUnits(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// colStep is the spacing, in bytes, of the column marks of long lines: a
// position on such a line is found by decoding no more than about two
// colStep bytes.
const colStep = 256

// colMark is a character boundary on a line, as decoding the line from its
// start finds them (an invalid byte is a character of its own), with the
// runes and UTF-16 units of the line before it.
type colMark struct {
	off, runes, units int
}

// colMarks holds, for each multiple of colStep bytes past base that falls
// inside a line longer than colStep, the first character boundary at or
// after it (marks[k] for base+k*colStep). Entries for other offsets are
// zero. Built once, it is never changed.
type colMarks struct {
	base  int
	marks []colMark
}

// buildColMarks decodes once each line of src longer than colStep and
// records its marks. Lines start at starts (sorted, none before base) and
// the last runs to end. Every line start must be a character boundary of
// the text before it, as one after a line break is.
func buildColMarks(src []byte, base, end int, starts []int) colMarks {
	cm := colMarks{base: base}
	for i, s := range starts {
		e := end
		if i+1 < len(starts) {
			e = starts[i+1]
		}
		if e-s <= colStep {
			continue
		}
		if cm.marks == nil {
			cm.marks = make([]colMark, (end-base)/colStep+1)
		}
		at := colMark{off: s}
		for k := (s-base)/colStep + 1; base+k*colStep < e; k++ {
			for target := base + k*colStep; at.off < target; {
				if c := src[at.off]; c < utf8.RuneSelf {
					at.off++
					at.runes++
					at.units++
					continue
				}
				r, size := utf8.DecodeRune(src[at.off:e])
				at.off += size
				at.runes++
				at.units += runeUnits(r)
			}
			cm.marks[k] = at
		}
	}
	return cm
}

// before returns the mark furthest on, at or before off, of the line that
// starts at s (which holds off), or the line start when none is.
func (cm *colMarks) before(s, off int) colMark {
	for k := (off - cm.base) / colStep; k >= 0 && k < len(cm.marks); k-- {
		block := cm.base + k*colStep
		if block <= s {
			break
		}
		// A mark lies within three bytes after its block; a zero one is
		// unused, as its line is short.
		if m := cm.marks[k]; m.off >= block && m.off <= off {
			return m
		}
	}
	return colMark{off: s}
}

// runeOffset returns the offset reached by decoding n runes from the line
// start s, stopping at end (s <= end <= next); next is where the line's
// marks stop: the start of the next line. cm may be nil (no marks used).
// Like the loop it replaces, it decodes each rune with src[:end], so a
// character cut by end counts its bytes one by one.
func (cm *colMarks) runeOffset(src []byte, s, end, next, n int) int {
	from := colMark{off: s}
	if cm != nil && len(cm.marks) > 0 && next-s > colStep {
		// The last mark of the line with no more than n runes before it.
		lo := (s-cm.base)/colStep + 1
		hi := min((next-1-cm.base)/colStep+1, len(cm.marks))
		if lo < hi {
			k := lo + sort.Search(hi-lo, func(i int) bool { return cm.marks[lo+i].runes > n }) - 1
			if k >= lo {
				from = cm.marks[k]
			}
		}
	}
	if from.off >= end {
		return end
	}
	off := from.off
	for c := from.runes; c < n && off < end; c++ {
		_, size := utf8.DecodeRune(src[off:end])
		off += size
	}
	return off
}

// advance decodes src from the character boundary from up to off, and
// returns the UTF-16 units before off on the line (the bytes of a
// character that off cuts count one each, as UTF16Len counts them) and
// the last character boundary at or before off.
func advance(src []byte, from colMark, off int) (int, colMark) {
	at := from
	for at.off < off {
		if c := src[at.off]; c < utf8.RuneSelf {
			at.off++
			at.runes++
			at.units++
			continue
		}
		r, size := utf8.DecodeRune(src[at.off:])
		if at.off+size > off {
			break
		}
		at.off += size
		at.runes++
		at.units += runeUnits(r)
	}
	return at.units + off - at.off, at
}

// RuneBoundary moves a byte offset of src back to the start of the
// character it falls in, decoding from the start of its line as LineIndex
// does (an invalid byte is a character of its own), so that a Range never
// splits a character.
func RuneBoundary(src []byte, off int) int {
	if off <= 0 || off >= len(src) {
		return off
	}
	p := bytes.LastIndexByte(src[:off], '\n') + 1
	for p < off {
		_, size := utf8.DecodeRune(src[p:])
		if p+size > off {
			return p
		}
		p += size
	}
	return off
}
