package bundle

import (
	"bytes"
	"sort"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// The runtime's mention parser (mentions/parser.py): fenced code blocks
// (``` at a line start, to the next ``` at a line start) and inline code
// (single backticks) are removed first; a mention is @ followed by the
// characters [a-zA-Z0-9_:./~-], unless an e-mail address follows the @.
var emailAhead = lazyRegexp(`^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}`)

// fencedBlocks returns the spans the runtime's fenced-code pattern
// ((?:^|\n)```[^\n]*\n.*?(?:^|\n)```, MULTILINE and DOTALL) removes from
// text, in one pass: from the newline before an opening ``` line (or the
// line's start at the text's start) to the three backticks that open the
// next line starting with ```.
func fencedBlocks(text []byte) [][2]int {
	var out [][2]int
	fence, nlFence := []byte("```"), []byte("\n```")
	for i := 0; i < len(text); {
		// Where the next match may begin: a line starting with ``` at i
		// itself, else the newline before the next such line.
		var begin, open int
		if (i == 0 || text[i-1] == '\n') && bytes.HasPrefix(text[i:], fence) {
			begin, open = i, i
		} else if k := bytes.Index(text[i:], nlFence); k >= 0 {
			begin, open = i+k, i+k+1
		} else {
			return out
		}
		nl := bytes.IndexByte(text[open:], '\n')
		if nl < 0 {
			return out
		}
		from := open + nl + 1
		// The closing fence: the first line at or after from that starts
		// with ```.
		close := from
		if !bytes.HasPrefix(text[from:], fence) {
			k := bytes.Index(text[from:], nlFence)
			if k < 0 {
				return out
			}
			close = from + k + 1
		}
		out = append(out, [2]int{begin, close + 3})
		i = close + 3
	}
	return out
}

// MaxMentions bounds the mentions kept per file.
const MaxMentions = 10_000

func mentionByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == ':' || c == '.' || c == '/' || c == '~' || c == '-'
}

// segment is a piece of the body kept after code is removed: its bytes
// are src[orig : orig+len(text)].
type segment struct {
	orig int
	text []byte
}

// findMentions returns the mentions of src[body] as the runtime finds them;
// lines gives the line index, asked for only when there is a mention.
func findMentions(src []byte, body Span, lines func() *syntax.LineIndex) []Mention {
	if body.Len() <= 0 {
		return nil
	}
	text := src[body.Start:body.End]
	if bytes.IndexByte(text, '@') < 0 {
		return nil // removing code adds no @
	}
	// Fenced blocks: each match is replaced by "\n".
	var segs []segment
	last := 0
	for _, m := range fencedBlocks(text) {
		segs = append(segs, segment{body.Start + last, text[last:m[0]]}, segment{-1, []byte("\n")})
		last = m[1]
	}
	segs = append(segs, segment{body.Start + last, text[last:]})
	segs, joined := removeInlineCode(segs)

	// Where each kept piece starts in the joined text.
	starts := make([]int, len(segs))
	for i, n := 1, 0; i < len(segs); i++ {
		n += len(segs[i-1].text)
		starts[i] = n
	}
	orig := func(off int) int {
		i := sort.Search(len(starts), func(i int) bool { return starts[i] > off }) - 1
		if i < 0 {
			i = 0
		}
		if segs[i].orig < 0 {
			return body.Start
		}
		return segs[i].orig + off - starts[i]
	}
	var out []Mention
	for i := 0; i < len(joined) && len(out) < MaxMentions; i++ {
		if joined[i] != '@' {
			continue
		}
		if emailAhead().Match(joined[i+1:]) {
			continue
		}
		j := i + 1
		for j < len(joined) && mentionByte(joined[j]) {
			j++
		}
		if j == i+1 {
			continue
		}
		start, end := orig(i), orig(j-1)+1
		out = append(out, Mention{Text: string(joined[i:j]), Range: lines().Range(start, end)})
		i = j - 1
	}
	return out
}

// removeInlineCode removes `code` spans (single backticks, not next to
// another backtick, with at least one non-backtick between) from the
// concatenation of segs, splitting segments where it cuts. It returns the
// segments kept and their concatenation.
func removeInlineCode(segs []segment) ([]segment, []byte) {
	// Work on the concatenation; map cuts back to segments.
	var all []byte
	if len(segs) == 1 {
		all = segs[0].text // read only, never appended to
	} else {
		n := 0
		for _, s := range segs {
			n += len(s.text)
		}
		all = make([]byte, 0, n)
		for _, s := range segs {
			all = append(all, s.text...)
		}
	}
	tick := func(i int) bool { return i >= 0 && i < len(all) && all[i] == '`' }
	var cuts [][2]int
	for i := 0; i < len(all); i++ {
		if all[i] != '`' || tick(i-1) || tick(i+1) {
			continue
		}
		j := i + 1
		for j < len(all) && all[j] != '`' {
			j++
		}
		if j >= len(all) || j == i+1 || tick(j+1) {
			continue
		}
		cuts = append(cuts, [2]int{i, j + 1})
		i = j
	}
	if len(cuts) == 0 {
		return segs, all
	}
	var out []segment
	pos, ci := 0, 0
	for _, s := range segs {
		start, end := pos, pos+len(s.text)
		pos = end
		cur := start
		for ci < len(cuts) && cuts[ci][0] < end {
			c := cuts[ci]
			if c[0] > cur {
				out = append(out, sub(s, cur-start, c[0]-start))
			}
			if c[1] > end {
				cur = end
				break
			}
			cur = c[1]
			ci++
		}
		if cur < end {
			out = append(out, sub(s, cur-start, end-start))
		}
	}
	joined := make([]byte, 0, len(all))
	for _, s := range out {
		joined = append(joined, s.text...)
	}
	return out, joined
}

func sub(s segment, from, to int) segment {
	o := s.orig
	if o >= 0 {
		o += from
	}
	return segment{o, s.text[from:to]}
}

func sortStrings(s []string) { sort.Strings(s) }
