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
// already). Other mistakes have no fix: their remedy is a choice (which
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
