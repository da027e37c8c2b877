package syntax

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// A fast path for the YAML of front matter. Most front matter is a block
// mapping of plain keys whose values are plain or quoted scalars on one
// line, flow sequences of such scalars, literal or folded block scalars,
// and nested block mappings and sequences of the same. parseYAMLFast reads
// that subset and builds the node tree go-yaml builds for it, field for
// field (kinds, styles, tags, values, lines and columns), with a few
// allocations instead of go-yaml's several per token. On anything else
// (comments, anchors, aliases, tags, escapes, multi-line flow or quoted
// scalars, plain scalars continued on the next line, tabs, carriage
// returns, document markers, errors of any kind) it gives up, and go-yaml
// parses the text. A fuzz test holds the two to the same trees.
//
// For a caller that reads no comment (ParseYAMLWithoutComments), it also
// reads comments on lines of their own between the nodes and after a
// value on its line, and leaves them out of the tree; the fuzz test holds
// that tree to go-yaml's without its comments.

// fastYAML is the state of one parseYAMLFast call.
type fastYAML struct {
	// comments says comments are read and left out of the tree; without
	// it, the first one sends the text to go-yaml.
	comments bool
	marker   bool // a "---" line opens the document
	text     []byte
	str      string // text as a string: most values are cut from it
	lines    []fastLine
	nodes    []yaml.Node  // a slab of nodes, handed out in order
	ptrs     []*yaml.Node // a slab for the Content of mappings and sequences
	stack    []*yaml.Node // children gathered for the collections being built
	estimate int          // of the nodes the text makes, counted by split
	// The column of the last node placed on a line, so that the nodes of
	// a long line cost a pass over it, not one each.
	curLine, curOff, curCol int
}

// Nodes is memory for the nodes of one front matter block at a time:
// a Loader hands one to each file it analyzes, and clears it for the
// next once the file's Facts are made (they hold no node).
type Nodes struct {
	nodes []yaml.Node
	ptrs  []*yaml.Node
	used  bool // nodes were handed out since the last reset
}

// reset clears the nodes handed out, so that they keep nothing alive, for
// the next block.
func (s *Nodes) Reset() {
	if s.used {
		clear(s.nodes)
		clear(s.ptrs)
		s.used = false
	}
}

// fastLine is one line of the text, without its "\n".
type fastLine struct {
	start, end int
	indent     int  // leading spaces
	blank      bool // spaces only, or empty
	comment    bool // a comment is its first character but spaces
	ascii      bool // no byte of 0x80 or more: columns are byte counts
	brk        bool // a "\n" ends it (every line but maybe the last)
}

// parseYAMLFast parses text when it is in the subset the fast path reads.
// It returns the document's content node (nil for a text of blank lines)
// and true, or false when go-yaml must parse the text.
func parseYAMLFast(text []byte, slab *Nodes) (*yaml.Node, bool) {
	return parseYAMLFastIn(fastYAML{text: text, curLine: -1}, slab)
}

// parseYAMLFastIn is parseYAMLFast with the settings of p.
func parseYAMLFastIn(p fastYAML, slab *Nodes) (*yaml.Node, bool) {
	text := p.text
	if !p.split() {
		return nil, false
	}
	i := p.skipBlank(0)
	if i == len(p.lines) {
		// Nothing, or an empty document after its "---", which go-yaml
		// reads as a null.
		return nil, !p.marker
	}
	p.str = string(text)
	// Enough nodes as split counted them; more, should they be needed, are
	// handed out in smaller slabs.
	n := p.estimate + 2
	if slab != nil {
		if cap(slab.nodes) < n {
			slab.nodes = make([]yaml.Node, n)
			slab.ptrs = make([]*yaml.Node, n)
		}
		slab.used = true
		p.nodes, p.ptrs = slab.nodes[:0], slab.ptrs[:0]
	} else {
		p.nodes = make([]yaml.Node, 0, n)
		p.ptrs = make([]*yaml.Node, 0, n)
	}
	l := p.lines[i]
	if !p.isKeyAt(i, l.start+l.indent) {
		return nil, false
	}
	root, next, ok := p.mapping(i, l.indent)
	if !ok || p.skipBlank(next) != len(p.lines) {
		return nil, false
	}
	return root, true
}

// split cuts the text into lines, and reports false on a byte the fast
// path does not read: tabs, carriage returns and other control
// characters, line breaks other than "\n", characters go-yaml does not
// accept or reads in a way of its own, and invalid UTF-8. It also refuses
// lines that could be directives or document markers, but for a "---"
// alone before any node when comments are read, which it takes for a
// blank line.
func (p *fastYAML) split() bool {
	text := p.text
	p.lines = make([]fastLine, 0, bytes.Count(text, []byte{'\n'})+1)
	nodes := false // a line of more than blanks and comments was seen
	for start := 0; ; {
		end, brk := len(text), false
		if j := bytes.IndexByte(text[start:], '\n'); j >= 0 {
			end, brk = start+j, true
		}
		line := text[start:end]
		l := fastLine{start: start, end: end, brk: brk, ascii: true}
		for l.indent < len(line) && line[l.indent] == ' ' {
			l.indent++
		}
		l.blank = l.indent == len(line)
		l.comment = !l.blank && line[l.indent] == '#'
		for i := l.indent; i < len(line); {
			c := line[i]
			if c >= 0x20 && c < 0x7F {
				i++
				continue
			}
			if c < 0x80 {
				return false // tabs, carriage returns, other controls, DEL
			}
			r, size := utf8.DecodeRune(line[i:])
			if !fastPrintable(r, size) {
				return false
			}
			l.ascii = false
			i += size
		}
		if len(line) >= 3 && (string(line[:3]) == "---" || string(line[:3]) == "...") || len(line) > 0 && line[0] == '%' {
			start := len(line) >= 3 && string(line[:3]) == "---" && len(bytes.TrimLeft(line[3:], " ")) == 0
			if !p.comments || nodes || p.marker || !start {
				return false // maybe a document marker or a directive
			}
			l.blank, p.marker = true, true // the document's start
		}
		nodes = nodes || !l.blank && !l.comment
		// Count the nodes the line may make: a key and its value, an item,
		// the items of a flow sequence.
		if bytes.IndexByte(line, ':') >= 0 {
			p.estimate += 2
		}
		if l.indent < len(line) && line[l.indent] == '-' {
			p.estimate++
		}
		if bytes.IndexByte(line, '[') >= 0 {
			p.estimate += 1 + bytes.Count(line, []byte{','})
		}
		p.lines = append(p.lines, l)
		if !brk {
			return true
		}
		start = end + 1
	}
}

// fastPrintable reports characters beyond ASCII that go-yaml reads as
// printable and not as a line break: U+00A0 to U+FFFD but for U+2028,
// U+2029 (line breaks) and U+FEFF (a byte order mark). Characters beyond
// the Basic Multilingual Plane are left to go-yaml.
func fastPrintable(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return false
	case r < 0xA0, r > 0xFFFD, r >= 0xD800 && r <= 0xDFFF:
		return false
	case r == 0x2028, r == 0x2029, r == 0xFEFF:
		return false
	}
	return true
}

// skipBlank returns the first line from i on that is not blank, nor a
// comment when comments are read.
func (p *fastYAML) skipBlank(i int) int {
	for i < len(p.lines) && (p.lines[i].blank || p.comments && p.lines[i].comment) {
		i++
	}
	return i
}

// skipEmpty returns the first line from i on that is not blank: inside
// a plain scalar, a comment line is no blank line, it ends the scalar.
func (p *fastYAML) skipEmpty(i int) int {
	for i < len(p.lines) && p.lines[i].blank {
		i++
	}
	return i
}

// endsLine reports whether text[off:end] holds only spaces or, when
// comments are read, spaces and then a comment (after at least one space,
// as YAML wants it).
func (p *fastYAML) endsLine(off, end int) bool {
	j := off
	for j < end && p.text[j] == ' ' {
		j++
	}
	return j == end || p.comments && j > off && p.text[j] == '#'
}

// column returns the 1-based column, in characters, of offset off on line
// i, as go-yaml counts them.
func (p *fastYAML) column(i, off int) int {
	l := p.lines[i]
	if l.ascii {
		return off - l.start + 1
	}
	if p.curLine != i || p.curOff > off {
		p.curLine, p.curOff, p.curCol = i, l.start, 1
	}
	p.curCol += utf8.RuneCount(p.text[p.curOff:off])
	p.curOff = off
	return p.curCol
}

// node hands out a node from the slab, placed at offset off of line i.
func (p *fastYAML) node(kind yaml.Kind, tag, value string, i, off int) *yaml.Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = make([]yaml.Node, 0, max(8, cap(p.nodes)/2))
	}
	// The slab is zeroed: only the fields that are not are set, one by one
	// (a whole node copied in would pass all its pointers through the
	// write barrier).
	p.nodes = p.nodes[:len(p.nodes)+1]
	n := &p.nodes[len(p.nodes)-1]
	n.Kind, n.Tag, n.Value, n.Line, n.Column = kind, tag, value, i+1, p.column(i, off)
	return n
}

// plain makes a plain scalar, tagged as go-yaml resolves it.
func (p *fastYAML) plain(value string, i, off int) *yaml.Node {
	return p.node(yaml.ScalarNode, plainTag(value), value, i, off)
}

// plainTag returns the tag go-yaml resolves a plain scalar to. What may be
// a number or a timestamp it leaves to go-yaml; the words it knows, and the
// rest (strings), it tells at once.
func plainTag(v string) string {
	if v == "" {
		return "!!null"
	}
	switch c := v[0]; {
	case c >= '0' && c <= '9', c == '+', c == '-', c == '.':
		n := yaml.Node{Kind: yaml.ScalarNode, Value: v}
		return n.ShortTag()
	}
	switch v {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return "!!bool"
	case "~", "null", "Null", "NULL":
		return "!!null"
	case "<<":
		return "!!merge"
	}
	return "!!str"
}

// content moves the children gathered since base into a slice of the
// pointer slab.
func (p *fastYAML) content(base int) []*yaml.Node {
	kids := p.stack[base:]
	if len(kids) == 0 {
		p.stack = p.stack[:base]
		return nil
	}
	if cap(p.ptrs)-len(p.ptrs) < len(kids) {
		p.ptrs = make([]*yaml.Node, 0, max(8, cap(p.ptrs)/2, len(kids)))
	}
	at := len(p.ptrs)
	p.ptrs = append(p.ptrs, kids...)
	p.stack = p.stack[:base]
	return p.ptrs[at:len(p.ptrs):len(p.ptrs)]
}

// isKeyAt reports whether a plain key followed by ":" starts at offset
// off of line i.
func (p *fastYAML) isKeyAt(i, off int) bool {
	_, ok := p.keyEnd(i, off)
	return ok
}

// keyEnd returns the offset of the ":" that ends the plain key starting at
// offset off of line i: the first ":" followed by a space or the end of
// the line. It reports false for anything but a simple plain key.
func (p *fastYAML) keyEnd(i, off int) (int, bool) {
	l := p.lines[i]
	if off >= l.end || !plainStart(p.text, off, l.end) {
		return 0, false
	}
	for j := off; j < l.end; j++ {
		switch p.text[j] {
		case ':':
			if j+1 == l.end || p.text[j+1] == ' ' {
				// A key with blanks before its colon, or a long one (go-yaml
				// takes at most 1024 characters), is left to go-yaml.
				if p.text[j-1] == ' ' || j-off > 1000 {
					return 0, false
				}
				return j, true
			}
		case '#':
			if p.text[j-1] == ' ' {
				return 0, false // a comment
			}
		}
	}
	return 0, false
}

// plainStart reports whether a plain scalar may start at text[off] as far
// as the fast path is concerned: not with an indicator (a "-" followed by
// other than a blank aside).
func plainStart(text []byte, off, end int) bool {
	switch text[off] {
	case '-':
		return off+1 < end && text[off+1] != ' '
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ':
		return false
	}
	return true
}

// isDash reports whether line i holds a block sequence entry ("-" then a
// blank or the end of the line) at its indentation.
func (p *fastYAML) isDash(i int) bool {
	l := p.lines[i]
	off := l.start + l.indent
	return off < l.end && p.text[off] == '-' && (off+1 == l.end || p.text[off+1] == ' ')
}

// mapping parses the block mapping whose first key starts at column col
// (counted in bytes, which are blanks and "-" before it) of line i. It
// returns the line after it.
func (p *fastYAML) mapping(i, col int) (*yaml.Node, int, bool) {
	m := p.node(yaml.MappingNode, "!!map", "", i, p.lines[i].start+col)
	base := len(p.stack)
	for first := true; ; first = false {
		if !first {
			i = p.skipBlank(i)
			if i == len(p.lines) || p.lines[i].indent < col {
				break
			}
			if p.lines[i].indent > col {
				return nil, 0, false
			}
		}
		off := p.lines[i].start + col
		colon, ok := p.keyEnd(i, off)
		if !ok {
			return nil, 0, false
		}
		key := p.plain(p.str[off:colon], i, off)
		if key.Value == "<<" {
			return nil, 0, false // a merge key: left to go-yaml
		}
		var v *yaml.Node
		v, i, ok = p.value(i, colon, col)
		if !ok {
			return nil, 0, false
		}
		p.stack = append(p.stack, key, v)
	}
	m.Content = p.content(base)
	return m, i, true
}

// value parses the value of the key whose ":" is at offset colon of line
// i, in a block whose indentation is indent. It returns the line after it.
func (p *fastYAML) value(i, colon, indent int) (*yaml.Node, int, bool) {
	l := p.lines[i]
	off := colon + 1
	for off < l.end && p.text[off] == ' ' {
		off++
	}
	if off < l.end && !(p.comments && p.text[off] == '#') {
		return p.inline(i, off, indent)
	}
	// The value starts on a line of its own, or is empty.
	if j := p.skipBlank(i + 1); j < len(p.lines) {
		nl := p.lines[j]
		switch {
		case nl.indent == indent && p.isDash(j):
			return p.sequence(j, indent, true)
		case nl.indent > indent && p.isDash(j):
			return p.sequence(j, nl.indent, false)
		case nl.indent > indent && p.isKeyAt(j, nl.start+nl.indent):
			return p.mapping(j, nl.indent)
		case nl.indent > indent:
			return nil, 0, false // a scalar on the next line, or worse
		}
	}
	// Empty: a null that go-yaml places just after the colon.
	return p.plain("", i, colon+1), i + 1, true
}

// sequence parses the block sequence whose first "-" is at column col of
// line i; indentless is set for one at the indentation of the mapping
// whose value it is. It returns the line after it.
func (p *fastYAML) sequence(i, col int, indentless bool) (*yaml.Node, int, bool) {
	s := p.node(yaml.SequenceNode, "!!seq", "", i, p.lines[i].start+col)
	base := len(p.stack)
	for {
		i = p.skipBlank(i)
		if i == len(p.lines) || p.lines[i].indent < col {
			break
		}
		if p.lines[i].indent > col {
			return nil, 0, false
		}
		if !p.isDash(i) {
			if indentless {
				break // the next key of the mapping
			}
			return nil, 0, false
		}
		l := p.lines[i]
		dash := l.start + col
		off := dash + 1
		for off < l.end && p.text[off] == ' ' {
			off++
		}
		var (
			item *yaml.Node
			ok   bool
		)
		switch {
		case off == l.end || p.comments && off > dash+1 && p.text[off] == '#':
			// The item starts on a line of its own, or is empty.
			j := p.skipBlank(i + 1)
			if j < len(p.lines) && p.lines[j].indent > col {
				nl := p.lines[j]
				if p.isDash(j) || !p.isKeyAt(j, nl.start+nl.indent) {
					return nil, 0, false
				}
				item, i, ok = p.mapping(j, nl.indent)
			} else {
				item, i, ok = p.plain("", i, dash+1), i+1, true
			}
		case p.text[off] == '-' && (off+1 == l.end || p.text[off+1] == ' '):
			return nil, 0, false // a sequence in a sequence
		case p.isKeyAt(i, off):
			item, i, ok = p.mapping(i, off-l.start)
		default:
			item, i, ok = p.inline(i, off, col)
		}
		if !ok {
			return nil, 0, false
		}
		p.stack = append(p.stack, item)
	}
	s.Content = p.content(base)
	return s, i, true
}

// inline parses the value that starts at offset off of line i, in a block
// whose indentation is indent, and returns the line after it. A plain,
// quoted or flow value must end on its line; a block scalar takes the
// lines indented under it.
func (p *fastYAML) inline(i, off, indent int) (*yaml.Node, int, bool) {
	l := p.lines[i]
	var (
		n  *yaml.Node
		ok bool
	)
	switch p.text[off] {
	case '|', '>':
		return p.blockScalar(i, off, indent)
	case '"', '\'':
		var end int
		n, end, ok = p.quoted(i, off)
		ok = ok && p.endsLine(end, l.end)
	case '[':
		n, ok = p.flowSequence(i, off)
	default:
		return p.plainValue(i, off, indent)
	}
	if !ok {
		return nil, 0, false
	}
	// Nothing may follow more indented: a plain scalar would go on there,
	// and after anything else it is an error.
	if j := p.skipBlank(i + 1); j < len(p.lines) && p.lines[j].indent > indent {
		return nil, 0, false
	}
	return n, i + 1, true
}

// plainValue parses the plain scalar that starts at offset off of line i,
// in a block whose indentation is indent: the rest of the line, and the
// lines after it indented more than the block, folded as go-yaml folds
// them (a line break between two lines is a space, empty lines between
// them are line breaks). It returns the line after it.
func (p *fastYAML) plainValue(i, off, indent int) (*yaml.Node, int, bool) {
	if !plainStart(p.text, off, p.lines[i].end) {
		return nil, 0, false
	}
	first, comment, ok := p.plainLine(off, p.lines[i].end)
	if !ok {
		return nil, 0, false
	}
	n := p.plain(first, i, off)
	if comment {
		// A comment ends the scalar: nothing may follow more indented.
		if j := p.skipBlank(i + 1); j < len(p.lines) && p.lines[j].indent > indent {
			return nil, 0, false
		}
		return n, i + 1, true
	}
	var b []byte // the folded value, once a second line comes
	next := i + 1
	for {
		j := p.skipEmpty(next)
		if j == len(p.lines) || p.lines[j].indent <= indent {
			break
		}
		l := p.lines[j]
		start := l.start + l.indent
		if p.text[start] == '#' {
			return nil, 0, false // a comment
		}
		more, comment, ok := p.plainLine(start, l.end)
		if !ok || comment {
			return nil, 0, false
		}
		if b == nil {
			b = append(b, first...)
		}
		if breaks := j - next; breaks == 0 {
			b = append(b, ' ')
		} else {
			for ; breaks > 0; breaks-- {
				b = append(b, '\n')
			}
		}
		b = append(b, more...)
		next = j + 1
	}
	if b != nil {
		n.Value = string(b)
		n.Tag = plainTag(n.Value)
	}
	return n, next, true
}

// plainLine returns text[off:end] without its trailing blanks, one line
// of a plain scalar, and reports false when the line holds a mapping
// value indicator, or a comment when comments are not read. When they
// are, the line ends before the comment, and comment says it does.
func (p *fastYAML) plainLine(off, end int) (value string, comment, ok bool) {
	for end > off && p.text[end-1] == ' ' {
		end--
	}
	for j := off; j < end; j++ {
		switch p.text[j] {
		case ':':
			if j+1 == end || p.text[j+1] == ' ' {
				return "", false, false // a mapping value where none may be
			}
		case '#':
			if p.text[j-1] == ' ' {
				if !p.comments {
					return "", false, false // a comment
				}
				end, comment = j, true
				for end > off && p.text[end-1] == ' ' {
					end--
				}
			}
		}
	}
	return p.str[off:end], comment, true
}

// quoted parses the single- or double-quoted scalar that opens at offset
// off of line i and closes on that line, and returns the offset after its
// closing quote. Double-quoted scalars with escapes are left to go-yaml.
func (p *fastYAML) quoted(i, off int) (*yaml.Node, int, bool) {
	end := p.lines[i].end
	q := p.text[off]
	if q == '"' {
		var b []byte // the value, once an escape makes it differ from the text
		from := off + 1
		for j := off + 1; j < end; j++ {
			switch p.text[j] {
			case '\\':
				if j+1 == end {
					return nil, 0, false // an escaped line break
				}
				b = append(b, p.text[from:j]...)
				var ok bool
				if b, j, ok = appendEscape(b, p.text, j, end); !ok {
					return nil, 0, false
				}
				from = j + 1
			case '"':
				v := p.str[from:j]
				if b != nil || from != off+1 {
					v = string(append(b, v...))
				}
				n := p.node(yaml.ScalarNode, "!!str", v, i, off)
				n.Style = yaml.DoubleQuotedStyle
				return n, j + 1, true
			}
		}
		return nil, 0, false
	}
	var b strings.Builder
	from := off + 1
	for j := off + 1; j < end; j++ {
		if p.text[j] != '\'' {
			continue
		}
		if j+1 < end && p.text[j+1] == '\'' {
			b.WriteString(p.str[from : j+1])
			j++
			from = j + 1
			continue
		}
		v := p.str[from:j]
		if b.Len() > 0 {
			b.WriteString(v)
			v = b.String()
		}
		n := p.node(yaml.ScalarNode, "!!str", v, i, off)
		n.Style = yaml.SingleQuotedStyle
		return n, j + 1, true
	}
	return nil, 0, false
}

// appendEscape appends to b what the escape sequence at text[j] (a
// backslash, with at least one byte after it before end) of a
// double-quoted scalar stands for, as go-yaml reads it, and returns the
// offset of its last byte. It reports false for an escape go-yaml
// refuses.
func appendEscape(b, text []byte, j, end int) ([]byte, int, bool) {
	digits := 0
	switch c := text[j+1]; c {
	case '0':
		b = append(b, 0)
	case 'a':
		b = append(b, '\a')
	case 'b':
		b = append(b, '\b')
	case 't':
		b = append(b, '\t')
	case 'n':
		b = append(b, '\n')
	case 'v':
		b = append(b, '\v')
	case 'f':
		b = append(b, '\f')
	case 'r':
		b = append(b, '\r')
	case 'e':
		b = append(b, 0x1B)
	case ' ', '"', '\'', '\\':
		b = append(b, c)
	case 'N':
		b = append(b, "\u0085"...)
	case '_':
		b = append(b, "\u00a0"...)
	case 'L':
		b = append(b, "\u2028"...)
	case 'P':
		b = append(b, "\u2029"...)
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	default:
		return nil, 0, false
	}
	j++
	if digits == 0 {
		return b, j, true
	}
	if j+digits >= end {
		return nil, 0, false
	}
	v := 0
	for _, c := range text[j+1 : j+1+digits] {
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return nil, 0, false
		}
		v = v<<4 + d
	}
	if v >= 0xD800 && v <= 0xDFFF || v > 0x10FFFF {
		return nil, 0, false
	}
	return utf8.AppendRune(b, rune(v)), j + digits, true
}

// flowSequence parses a flow sequence of plain and quoted scalars that
// opens at offset off of line i and closes on that line, nothing but
// blanks after it.
func (p *fastYAML) flowSequence(i, off int) (*yaml.Node, bool) {
	end := p.lines[i].end
	s := p.node(yaml.SequenceNode, "!!seq", "", i, off)
	s.Style = yaml.FlowStyle
	base := len(p.stack)
	j := off + 1
	for ; j < end && p.text[j] == ' '; j++ {
	}
	if j < end && p.text[j] == ']' {
		s.Content = p.content(base)
		return s, p.endsLine(j+1, end)
	}
	for j < end {
		var item *yaml.Node
		switch p.text[j] {
		case '"', '\'':
			var ok bool
			if item, j, ok = p.quoted(i, j); !ok {
				return nil, false
			}
		default:
			if !plainStart(p.text, j, end) || p.text[j] == '-' && strings.IndexByte(",[]{}", p.text[j+1]) >= 0 {
				return nil, false
			}
			k := j
			for ; k < end; k++ {
				if c := p.text[k]; c == ',' || c == ']' {
					break
				} else if strings.IndexByte(":#[{}?", c) >= 0 {
					return nil, false
				}
			}
			v := k
			for v > j && p.text[v-1] == ' ' {
				v--
			}
			item = p.plain(p.str[j:v], i, j)
			j = k
		}
		p.stack = append(p.stack, item)
		for ; j < end && p.text[j] == ' '; j++ {
		}
		if j == end {
			return nil, false
		}
		if p.text[j] == ']' {
			s.Content = p.content(base)
			return s, p.endsLine(j+1, end)
		}
		if p.text[j] != ',' {
			return nil, false
		}
		// A comma, then the next item: none (a trailing comma) is left
		// to go-yaml.
		for j++; j < end && p.text[j] == ' '; j++ {
		}
		if j == end || p.text[j] == ']' || p.text[j] == ',' {
			return nil, false
		}
	}
	return nil, false
}

// blockScalar parses the literal (|) or folded (>) scalar whose indicator
// is at offset off of line i, in a block whose indentation is indent, as
// go-yaml's scanner reads it. Explicit indentation, comments after the
// indicator (unless comments are read), and an empty one are left to
// go-yaml. It returns the line after it.
func (p *fastYAML) blockScalar(i, off, indent int) (*yaml.Node, int, bool) {
	l := p.lines[i]
	literal := p.text[off] == '|'
	chomp := 0 // -1 strip, 0 clip, +1 keep
	j := off + 1
	if j < l.end && (p.text[j] == '-' || p.text[j] == '+') {
		chomp = 1
		if p.text[j] == '-' {
			chomp = -1
		}
		j++
	}
	if !p.endsLine(j, l.end) {
		return nil, 0, false
	}
	// The content's indentation is that of its first line of more than
	// blanks. Lines of blanks before it must not be longer.
	k, widest := i+1, 0
	for k < len(p.lines) && p.lines[k].blank && (p.lines[k].brk || p.lines[k].end == p.lines[k].start) {
		widest = max(widest, p.lines[k].end-p.lines[k].start)
		k++
	}
	if p.comments && widest == 0 && chomp != 1 && (k == len(p.lines) || !p.lines[k].blank && p.lines[k].indent <= indent) {
		// An empty one, but for empty lines (what a caller that masks
		// long texts leaves of them): the value is empty.
		n := p.node(yaml.ScalarNode, "!!str", "", i, off)
		n.Style = yaml.FoldedStyle
		if literal {
			n.Style = yaml.LiteralStyle
		}
		return n, k, true
	}
	if k == len(p.lines) || p.lines[k].blank || p.lines[k].indent <= indent || widest > p.lines[k].indent {
		return nil, 0, false
	}
	ind := p.lines[k].indent
	var (
		b              strings.Builder
		leadingBreak   bool // the break after the last content line, not yet written
		leadingBlank   bool // the last content line opened with a blank
		trailingBreaks = k - (i + 1)
	)
	for ; k < len(p.lines); k++ {
		cl := p.lines[k]
		if cl.blank && cl.end-cl.start <= ind {
			// An empty line: its blanks are indentation.
			if !cl.brk {
				break // the end of the text
			}
			trailingBreaks++
			continue
		}
		if !cl.blank && cl.indent < ind {
			break
		}
		// A content line, maybe of blanks only beyond the indentation.
		trailingBlank := p.text[cl.start+ind] == ' '
		if !literal && leadingBreak && !leadingBlank && !trailingBlank {
			if trailingBreaks == 0 {
				b.WriteByte(' ')
			}
		} else if leadingBreak {
			b.WriteByte('\n')
		}
		for ; trailingBreaks > 0; trailingBreaks-- {
			b.WriteByte('\n')
		}
		leadingBlank = trailingBlank
		b.WriteString(p.str[cl.start+ind : cl.end])
		leadingBreak = cl.brk
	}
	if chomp != -1 && leadingBreak {
		b.WriteByte('\n')
	}
	if chomp == 1 {
		for ; trailingBreaks > 0; trailingBreaks-- {
			b.WriteByte('\n')
		}
	}
	n := p.node(yaml.ScalarNode, "!!str", b.String(), i, off)
	n.Style = yaml.FoldedStyle
	if literal {
		n.Style = yaml.LiteralStyle
	}
	return n, k, true
}
