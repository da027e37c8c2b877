package lsp

import (
	"bytes"
	"math/rand/v2"
	"unicode/utf8"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// rope is a valid UTF-8 text under edit: a treap of its chunks, in order,
// each node knowing the bytes, line feeds and UTF-16 units of its subtree.
// A position is found, and a range replaced, in time logarithmic in the
// number of chunks plus the length of one chunk, so that a didChange of
// many edits costs the size of the text once plus a little per edit,
// where re-indexing the text for each edit cost their product.
//
// Chunks are cut at character boundaries only, and edits land on them (a
// position is resolved to where a character starts), so each chunk is
// valid UTF-8 and its counts add up to those of the whole text.
type rope struct {
	root  *ropeNode
	chunk int // the longest chunk a text is cut into
}

// ropeNode is one chunk and the subtree of the chunks around it. The
// chunk's bytes are never written: they alias the text being edited or a
// change's text.
type ropeNode struct {
	left, right *ropeNode
	prio        uint32

	text      []byte // the chunk, never empty
	textLF    int    // line feeds in text
	textUnits int    // UTF-16 units of text

	size, lf, units int // of the subtree: bytes, line feeds, UTF-16 units
}

// ropeChunk is the longest chunk a text is cut into; an edit may leave
// shorter ones.
const ropeChunk = 512

// newRope returns a rope of text in chunks of at most chunk bytes (or of
// one character, when that is longer).
func newRope(text []byte, chunk int) *rope {
	r := &rope{chunk: max(chunk, 1)}
	r.root = r.chunks(text)
	return r
}

// chunks returns a treap of text cut into chunks at character
// boundaries; nil for an empty text.
func (r *rope) chunks(text []byte) *ropeNode {
	var t *ropeNode
	for len(text) > 0 {
		n := min(len(text), r.chunk)
		for n < len(text) && n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		if n == 0 { // a character longer than a chunk
			n = 1
			for n < len(text) && !utf8.RuneStart(text[n]) {
				n++
			}
		}
		t = merge(t, newRopeNode(text[:n]))
		text = text[n:]
	}
	return t
}

func newRopeNode(text []byte) *ropeNode {
	t := &ropeNode{prio: rand.Uint32()}
	t.setText(text)
	return t
}

func (t *ropeNode) setText(text []byte) {
	t.text = text
	t.textLF = bytes.Count(text, []byte{'\n'})
	t.textUnits = syntax.UTF16Len(text)
	t.update()
}

// update recomputes t's subtree counts from its children's.
func (t *ropeNode) update() {
	t.size, t.lf, t.units = len(t.text), t.textLF, t.textUnits
	if l := t.left; l != nil {
		t.size += l.size
		t.lf += l.lf
		t.units += l.units
	}
	if r := t.right; r != nil {
		t.size += r.size
		t.lf += r.lf
		t.units += r.units
	}
}

func (t *ropeNode) sizeOf() int {
	if t == nil {
		return 0
	}
	return t.size
}

func (t *ropeNode) lfOf() int {
	if t == nil {
		return 0
	}
	return t.lf
}

func (t *ropeNode) unitsOf() int {
	if t == nil {
		return 0
	}
	return t.units
}

// merge joins two treaps, every chunk of a before every chunk of b.
func merge(a, b *ropeNode) *ropeNode {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio > b.prio:
		a.right = merge(a.right, b)
		a.update()
		return a
	}
	b.left = merge(a, b.left)
	b.update()
	return b
}

// split cuts t into its first off bytes and the rest; a chunk that off
// falls inside is cut in two.
func split(t *ropeNode, off int) (*ropeNode, *ropeNode) {
	if t == nil {
		return nil, nil
	}
	ls := t.left.sizeOf()
	switch {
	case off <= ls:
		a, b := split(t.left, off)
		t.left = b
		t.update()
		return a, t
	case off >= ls+len(t.text):
		a, b := split(t.right, off-ls-len(t.text))
		t.right = a
		t.update()
		return t, b
	}
	k := off - ls
	tail := newRopeNode(t.text[k:])
	right := t.right
	t.right = nil
	t.setText(t.text[:k])
	return t, merge(tail, right)
}

// replace replaces the bytes from start to end (start <= end, both at
// character boundaries) with text.
func (r *rope) replace(start, end int, text []byte) {
	a, rest := split(r.root, start)
	_, c := split(rest, end-start)
	r.root = merge(merge(a, r.chunks(text)), c)
}

// bytes returns the text in a new slice.
func (r *rope) bytes() []byte {
	out := make([]byte, 0, r.root.sizeOf())
	var walk func(t *ropeNode)
	walk = func(t *ropeNode) {
		for t != nil {
			walk(t.left)
			out = append(out, t.text...)
			t = t.right
		}
	}
	walk(r.root)
	return out
}

// afterLF returns the offset just after the k-th line feed (1 <= k <= the
// number of line feeds).
func (r *rope) afterLF(k int) int {
	off := 0
	for t := r.root; t != nil; {
		if k <= t.left.lfOf() {
			t = t.left
			continue
		}
		k -= t.left.lfOf()
		off += t.left.sizeOf()
		if k <= t.textLF {
			i := 0
			for ; k > 0; k-- {
				i += bytes.IndexByte(t.text[i:], '\n') + 1
			}
			return off + i
		}
		k -= t.textLF
		off += len(t.text)
		t = t.right
	}
	return off
}

// byteAt returns the byte at off (0 <= off < size).
func (r *rope) byteAt(off int) byte {
	for t := r.root; t != nil; {
		ls := t.left.sizeOf()
		if off < ls {
			t = t.left
			continue
		}
		off -= ls
		if off < len(t.text) {
			return t.text[off]
		}
		off -= len(t.text)
		t = t.right
	}
	return 0
}

// unitsBefore returns the UTF-16 units of the text before off, a
// character boundary.
func (r *rope) unitsBefore(off int) int {
	units := 0
	for t := r.root; t != nil && off > 0; {
		ls := t.left.sizeOf()
		if off < ls {
			t = t.left
			continue
		}
		units += t.left.unitsOf()
		off -= ls
		if off <= len(t.text) {
			return units + syntax.UTF16Len(t.text[:off])
		}
		units += t.textUnits
		off -= len(t.text)
		t = t.right
	}
	return units
}

// charAtUnit returns where the character holding the UTF-16 unit u of the
// text starts (the second unit of a surrogate pair belongs to the
// character that starts with the first), or the size of the text when it
// has no more than u units.
func (r *rope) charAtUnit(u int) int {
	off := 0
	for t := r.root; t != nil; {
		if u < t.left.unitsOf() {
			t = t.left
			continue
		}
		u -= t.left.unitsOf()
		off += t.left.sizeOf()
		if u < t.textUnits {
			for i := 0; i < len(t.text); {
				c, size := utf8.DecodeRune(t.text[i:])
				n := 1
				if c >= 0x10000 {
					n = 2
				}
				if u < n {
					return off + i
				}
				u -= n
				i += size
			}
			return off + len(t.text)
		}
		u -= t.textUnits
		off += len(t.text)
		t = t.right
	}
	return off
}

// offset converts p as offsetOf does on the text, with characters counted
// in bytes when utf8Enc is set, else in UTF-16 units.
func (r *rope) offset(p diag.Position, utf8Enc bool) int {
	size, lines := r.root.sizeOf(), r.root.lfOf()+1
	switch {
	case p.Line < 0:
		return 0
	case p.Line >= lines:
		return size
	}
	start, end := 0, size
	if p.Line > 0 {
		start = r.afterLF(p.Line)
	}
	if p.Line < lines-1 {
		end = r.afterLF(p.Line+1) - 1
		if end > start && r.byteAt(end-1) == '\r' {
			end--
		}
	}
	if p.Character <= 0 {
		return start
	}
	if utf8Enc {
		if p.Character >= end-start {
			return end
		}
		// The start of the character the column falls in.
		off := start + p.Character
		for off > start && !utf8.RuneStart(r.byteAt(off)) {
			off--
		}
		return off
	}
	before := r.unitsBefore(start)
	if p.Character >= r.root.unitsOf()-before {
		return end
	}
	return min(r.charAtUnit(before+p.Character), end)
}
