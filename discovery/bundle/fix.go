package bundle

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
)

// Fix is a change of a file's text that fixes one of its diagnostics and
// needs no choice: an include entry's key renamed bundle (- behavior: x),
// a leading @ removed from a YAML reference, a misspelt key renamed to the
// one known key it is near (when the mapping does not hold that key
// already), an includes: written under bundle: moved to the top level.
// Other mistakes have no fix: their remedy is a choice (which
// file was meant, which section a key belongs to) or a rewrite of prose.
type Fix struct {
	// Code and At are the code and the range of the diagnostic it fixes.
	Code string
	At   diag.Range
	// Start and End are the bytes of the file's text replaced by Text.
	Start, End int
	Text       string
}

// offsetOf returns the byte offset of node n's first character in the
// file.
func (d *doc) offsetOf(n *yaml.Node) int {
	line, col := n.Line+d.base, n.Column
	if line == 1 {
		col += d.bomCol
	}
	return d.lines.Offset(line, col)
}

// fix records the fix of the diagnostic of code at at: the bytes of the
// file from start to end become text. A fix of a text other than the one
// expected (want) is not recorded.
func (d *doc) fix(code string, at diag.Range, start, end int, want, text string) {
	if start < 0 || end > len(d.src) || start > end || string(d.src[start:end]) != want || d.masked {
		return
	}
	d.fixes = append(d.fixes, Fix{Code: code, At: at, Start: start, End: end, Text: text})
}

// renameKey records the fix that renames the plain key of p to name.
func (d *doc) renameKey(code string, at diag.Range, p pair, name string) {
	k := p.key
	if k.Kind != yaml.ScalarNode || k.Style != 0 || k.Tag == "!!merge" {
		return // quoted, tagged or an alias: leave it to the author
	}
	if other, _ := lookup(p.parent, name); other != nil {
		return // the key is there already: renaming would repeat it
	}
	start := d.offsetOf(k)
	d.fix(code, at, start, start+len(k.Value), k.Value, name)
}

// dropAt records the fix that removes the leading @ of the quoted scalar n.
func (d *doc) dropAt(code string, at diag.Range, n *yaml.Node) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 ||
		n.Style&yaml.TaggedStyle != 0 || !strings.HasPrefix(n.Value, "@") {
		return
	}
	start := d.offsetOf(n) + 1 // past the opening quote
	d.fix(code, at, start, start+1, "@", "")
}

// moveIncludes records the fix of an includes: written under bundle:
// (bk, bv): its lines, dedented, are moved to the top level, after the
// rest of the bundle: section. It is made only when that is all there is
// to it: bundle: a block mapping at the top level, one plain includes:
// key that starts its line, each line of the section indented by spaces,
// and no includes: at the top level already.
func (d *doc) moveIncludes(root, bk, bv *yaml.Node) {
	var key *yaml.Node
	for _, p := range pairs(bv) {
		if p.name != "includes" {
			continue
		}
		if key != nil {
			return // written twice: which one counts is a choice
		}
		key = p.key
	}
	if key == nil || bk.Column != 1 || bv.Style&yaml.FlowStyle != 0 || key.Style != 0 || key.Tag == "!!merge" {
		return
	}
	if k, _ := lookup(root, "includes"); k != nil {
		return
	}
	first := key.Line + d.base - 1 // 0-based line of the file
	indent := func(n int) (int, bool) {
		l := d.lines.Line(n)
		t := strings.TrimLeft(string(l), " ")
		if strings.TrimSpace(t) == "" {
			return 0, false
		}
		return len(l) - len(t), true
	}
	col, ok := indent(first)
	if !ok || col != key.Column-1 || col == 0 {
		return
	}
	// The includes block: its key's line and those more indented (or
	// items of a list as indented as the key); then
	// the rest of the section: the lines indented at all. Blank lines
	// count with what follows them.
	last := d.lines.Lines()
	blockEnd, sectionEnd := first+1, first+1
	for n := first + 1; n < last; n++ {
		in, ok := indent(n)
		if !ok {
			continue
		}
		if in < col || in == col && !strings.HasPrefix(string(d.lines.Line(n)[in:]), "-") {
			break // a sequence may be indented as its key is
		}
		blockEnd, sectionEnd = n+1, n+1
	}
	for n := blockEnd; n < last; n++ {
		in, ok := indent(n)
		if !ok {
			continue
		}
		if in == 0 {
			break
		}
		sectionEnd = n + 1
	}
	if strings.ContainsRune(string(d.src[d.lines.LineStart(first):d.lines.LineStart(sectionEnd)]), '\t') {
		return
	}
	var moved strings.Builder
	for n := first; n < blockEnd; n++ {
		l := d.src[d.lines.LineStart(n):d.lines.LineStart(n+1)]
		if len(l) >= col {
			l = l[col:]
		} else {
			l = []byte(strings.TrimLeft(string(l), " "))
		}
		moved.Write(l)
	}
	start, mid, end := d.lines.LineStart(first), d.lines.LineStart(blockEnd), d.lines.LineStart(sectionEnd)
	rest := string(d.src[mid:end])
	text := moved.String()
	if rest != "" && !strings.HasSuffix(rest, "\n") {
		rest += "\n"
		text = strings.TrimSuffix(strings.TrimSuffix(text, "\n"), "\r")
	}
	d.fix(CodeIncludesUnderBundle, d.rangeOf(key), start, end, string(d.src[start:end]), rest+text)
}
