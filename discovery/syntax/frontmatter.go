package syntax

import (
	"bytes"
	"errors"
)

// MaxFrontMatter is the largest front matter block, in bytes, that is
// parsed: twenty times the largest real manifest. A larger block earns
// frontmatter/too-large; the body after it is never read, whatever its
// size. The cap also bounds the YAML parser, which needs up to some
// 250 bytes per node before the node budget can be checked.
const MaxFrontMatter = 256 << 10

// ErrNoFrontMatter is returned when the first non-empty line of a document
// is not the "---" that opens a front matter block.
var ErrNoFrontMatter = errors.New("discovery: no front matter")

// ErrUnterminated is returned when a front matter block has no closing
// "---" line.
var ErrUnterminated = errors.New("discovery: front matter not terminated")

// ErrFrontMatterTooLarge is returned when a front matter block is larger
// than MaxFrontMatter, or expands into more YAML nodes or deeper nesting
// than is parsed.
var ErrFrontMatterTooLarge = errors.New("discovery: front matter too large")

// utf8BOM is the byte order mark some editors put at the start of a file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// FrontMatter says where the parts of a Markdown document with YAML front
// matter are. Every field is a byte offset into the document.
type FrontMatter struct {
	// Open is where the opening "---" line starts, after any byte order
	// mark and blank lines. When there is no front matter, it is where the
	// first non-empty line starts (the end of the document if there is
	// none).
	Open int
	// Start and End delimit the YAML text: it starts on the line after the
	// opening delimiter and ends where the closing delimiter line starts.
	Start, End int
	// BodyStart is where the Markdown body starts: just past the closing
	// delimiter line and its line break.
	BodyStart int
}

// SplitFrontMatter finds the front matter block of a Markdown document.
// The first non-empty line must be "---"; a UTF-8 byte order mark, blank
// lines before it, trailing blanks after a delimiter and CRLF line ends are
// accepted. The block ends at the next line that is "---".
//
// It returns ErrNoFrontMatter when the document does not open with "---",
// ErrUnterminated when no closing line follows, and ErrFrontMatterTooLarge
// when no closing line comes within MaxFrontMatter bytes; Open (and, for
// the last two, Start) are set even then. It reads each byte at most once,
// reads nothing after the front matter, and copies nothing.
func SplitFrontMatter(src []byte) (FrontMatter, error) {
	var fm FrontMatter
	i := 0
	if bytes.HasPrefix(src, utf8BOM) {
		i = len(utf8BOM)
	}
	// Skip blank lines.
	for i < len(src) {
		line, next := NextLine(src, i)
		if !isBlank(line) {
			break
		}
		i = next
	}
	fm.Open = i
	if i >= len(src) {
		return fm, ErrNoFrontMatter
	}
	line, next := NextLine(src, i)
	if !isDelimiter(line) {
		return fm, ErrNoFrontMatter
	}
	fm.Start = next
	// Look no further than the largest block allows, plus room for the
	// closing delimiter line itself.
	window := src[:min(len(src), fm.Start+MaxFrontMatter+maxDelimiterLine)]
	for i = next; i < len(window) && i-fm.Start <= MaxFrontMatter; {
		line, next = NextLine(window, i)
		cut := len(window) < len(src) && next == len(window) && window[next-1] != '\n'
		if isDelimiter(line) && !cut {
			fm.End, fm.BodyStart = i, next
			return fm, nil
		}
		i = next
	}
	if len(window) == len(src) && i >= len(src) {
		return fm, ErrUnterminated
	}
	return fm, ErrFrontMatterTooLarge
}

// maxDelimiterLine is the longest closing delimiter line (with trailing
// blanks) recognized after a block of exactly MaxFrontMatter bytes.
const maxDelimiterLine = 256

// NextLine returns the line of src that starts at i, without its "\n",
// and the offset of the line after it.
func NextLine(src []byte, i int) (line []byte, next int) {
	j := bytes.IndexByte(src[i:], '\n')
	if j < 0 {
		return src[i:], len(src)
	}
	return src[i : i+j], i + j + 1
}

// isBlank reports whether line holds only spaces, tabs, carriage returns,
// form feeds and vertical tabs.
func isBlank(line []byte) bool {
	return len(TrimRightSpace(line)) == 0
}

// isDelimiter reports whether line is "---" followed only by blanks.
func isDelimiter(line []byte) bool {
	return bytes.Equal(TrimRightSpace(line), []byte("---"))
}

// TrimRightSpace drops trailing ASCII blanks (including "\r") from b.
func TrimRightSpace(b []byte) []byte {
	for len(b) > 0 {
		switch b[len(b)-1] {
		case ' ', '\t', '\r', '\f', '\v':
			b = b[:len(b)-1]
			continue
		}
		break
	}
	return b
}

// FencedBlock is a Markdown code fence: where its opening line starts, the
// info string, and the content between the fences.
type FencedBlock struct {
	Open       int
	OpenEnd    int // end of the opening line's content
	Info       []byte
	Start, End int
}

// maxFenceScan bounds how much of a body is searched for code fences, and
// maxFences how many fences are looked at.
const (
	maxFenceScan = MaxFrontMatter
	maxFences    = 64
)

// CodeFences returns the fenced code blocks of src[from:], as CommonMark
// draws them (up to three spaces of indentation, three or more backticks or
// tildes, closed by a line of at least as many of the same character; an
// unclosed fence runs to the end). It looks at no more than maxFenceScan
// bytes and returns at most maxFences blocks.
func CodeFences(src []byte, from int) []FencedBlock {
	limit := min(len(src), from+maxFenceScan)
	var out []FencedBlock
	for i := from; i < limit && len(out) < maxFences; {
		line, next := NextLine(src, i)
		ch, n, indent := fenceOpen(line)
		if n == 0 {
			i = next
			continue
		}
		info := bytes.TrimSpace(line[indent+n:])
		if ch == '`' && bytes.IndexByte(info, '`') >= 0 {
			i = next // not a fence: backticks in the info string
			continue
		}
		b := FencedBlock{Open: i, OpenEnd: i + len(TrimRightSpace(line)), Info: info, Start: next, End: limit}
		j := next
		for j < limit {
			l, nj := NextLine(src, j)
			if c, m, ind := fenceOpen(l); c == ch && m >= n && len(TrimRightSpace(l[ind+m:])) == 0 {
				b.End = j
				j = nj
				break
			}
			j = nj
		}
		out = append(out, b)
		i = j
	}
	return out
}

// fenceOpen reports the fence character and run length that open line,
// and the indentation before them; n is 0 when line is no fence.
func fenceOpen(line []byte) (ch byte, n, indent int) {
	for indent < len(line) && indent < 4 && line[indent] == ' ' {
		indent++
	}
	if indent > 3 || indent >= len(line) {
		return 0, 0, 0
	}
	ch = line[indent]
	if ch != '`' && ch != '~' {
		return 0, 0, 0
	}
	for indent+n < len(line) && line[indent+n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0, 0
	}
	return ch, n, indent
}

// IsYAMLFence reports whether a fence's info string marks YAML, or marks
// nothing at all.
func IsYAMLFence(info []byte) bool {
	word := info
	if i := bytes.IndexAny(word, " \t{"); i >= 0 {
		word = word[:i]
	}
	return len(word) == 0 || bytes.EqualFold(word, []byte("yaml")) || bytes.EqualFold(word, []byte("yml"))
}
