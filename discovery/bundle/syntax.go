package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Bounds on what one file may make the parser do.
const (
	// MaxDepth is the deepest nesting of YAML collections decoded.
	MaxDepth = 64
	// maxNodes bounds the YAML nodes decoded from one file, aliases
	// expanded: a document that expands past it is cut off.
	maxNodes = 200_000
)

// split is what the runtime's parse_frontmatter finds in a Markdown file:
// the front matter text (its byte offsets in src) and the body.
type split struct {
	found      bool
	fmStart    int // offset of the front matter text
	fmEnd      int
	bodyStart  int // offset of the body
	bom        bool
	unfinished bool // an opening --- with no closing line
}

// bomLen returns the length of the UTF-8 byte order marks at the start of
// src (the runtime strips every leading U+FEFF).
func bomLen(src []byte) int {
	n := 0
	for bytes.HasPrefix(src[n:], []byte("\xef\xbb\xbf")) {
		n += 3
	}
	return n
}

// splitFrontMatter finds the front matter of src as the runtime does.
func splitFrontMatter(src []byte) split {
	b := bomLen(src)
	s := split{bom: b > 0}
	m := matchFrontMatter(src[b:])
	if m == nil {
		s.bodyStart = b
		rest := src[b:]
		if bytes.HasPrefix(rest, []byte("---")) {
			line, _, _ := bytes.Cut(rest, []byte("\n"))
			if len(bytes.TrimRight(line[3:], " \t\r")) == 0 {
				s.unfinished = true
			}
		}
		return s
	}
	s.found = true
	s.fmStart, s.fmEnd = b+m[2], b+m[3]
	s.bodyStart = b + m[1]
	return s
}

// matchFrontMatter matches the runtime's front matter pattern
// (parse_frontmatter: `^---\s*\n(.*?)\n---\s*\n?`, DOTALL, \s as Python
// reads it in text) at the start of text, in one pass: it returns the
// offsets of the match and of its group, as FindSubmatchIndex does, or nil.
func matchFrontMatter(text []byte) []int {
	if !bytes.HasPrefix(text, []byte("---")) {
		return nil
	}
	// The spaces after ---: the group starts after their last newline,
	// or, when --- follows that newline at once, after the one before.
	runEnd, last, prev := 3, -1, -1
	for runEnd < len(text) {
		r, size := utf8.DecodeRune(text[runEnd:])
		if !isPySpace(r) {
			break
		}
		if r == '\n' {
			last, prev = runEnd, last
		}
		runEnd += size
	}
	if last < 0 {
		return nil
	}
	start := last + 1
	close := bytes.Index(text[start:], []byte("\n---"))
	switch {
	case close >= 0:
		close += start
	case prev >= 0 && bytes.HasPrefix(text[last:], []byte("\n---")):
		start, close = prev+1, last
	default:
		return nil
	}
	end := close + 4
	for end < len(text) {
		r, size := utf8.DecodeRune(text[end:])
		if !isPySpace(r) {
			break
		}
		end += size
	}
	return []int{0, end, start, close}
}

// pyStrip trims what Python's str.strip trims.
func pyStrip(b []byte) []byte {
	return bytes.TrimFunc(b, isPySpace)
}

func isPySpace(r rune) bool {
	switch {
	case r == ' ' || (r >= '\t' && r <= '\r') || (r >= 0x1c && r <= 0x1f) || r == 0x85 || r == 0xa0:
		return true
	case r == 0x1680 || (r >= 0x2000 && r <= 0x200a) || r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000:
		return true
	}
	return false
}

// doc is a YAML document being read: the file it is in, where its text
// starts, and the diagnostics it earns.
type doc struct {
	path   string
	src    []byte
	lines  *syntax.LineIndex
	base   int // 0-based line of the file where the YAML text starts
	diags  *sink
	nodes  int // nodes decoded so far, aliases expanded
	cut    bool
	bomCol int // columns the YAML parser does not see on the file's first line (a BOM)
	// noFrontMatter says a Markdown file's missing front matter is
	// reported already: its kind's own sections are not asked for.
	noFrontMatter bool
	// masked says long block scalars were skipped: their values read as
	// empty.
	masked bool
	// fixes are the fixes of the diagnostics that need no choice.
	fixes []Fix
}

// rangeOf returns the Range of node n in the file: its first line, from
// its column to the end of its text on that line.
func (d *doc) rangeOf(n *yaml.Node) diag.Range {
	if n == nil {
		return diag.Range{}
	}
	line := n.Line + d.base
	col := n.Column
	if line == 1 {
		col += d.bomCol
	}
	start := d.lines.Offset(line, col)
	end := d.lines.LineEnd(line - 1)
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 && !strings.Contains(n.Value, "\n") {
		w := len(n.Value)
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			w += 2
		}
		if n.Tag != "" && n.Style&yaml.TaggedStyle != 0 {
			w += len(n.Tag) + 1
		}
		end = min(end, start+w)
	}
	if end < start {
		end = start
	}
	return d.lines.Range(start, end)
}

// parseYAML parses text (which starts at 0-based line base of the file) as
// one YAML document and returns its root node (nil for an empty document).
// Syntax errors become diagnostics; the error says the document is unusable.
func (d *doc) parseYAML(text []byte, base int) (*yaml.Node, error) {
	d.base = base
	// The shared parser gives go-yaml's tree (no comment is read here),
	// most often by its fast path; a text it refuses is read again below,
	// for the diagnostics.
	if root, err := syntax.ParseYAMLWithoutComments(text); err == nil {
		return root, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		d.syntaxError(err)
		return nil, err
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil || !errors.Is(err, io.EOF) {
		line := next.Line
		if err != nil {
			line = 0
		}
		return &root, errMultiDoc{line: line}
	}
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, nil
		}
		return root.Content[0], nil
	}
	return &root, nil
}

// errMultiDoc says the text holds more than one YAML document.
type errMultiDoc struct{ line int }

func (e errMultiDoc) Error() string { return "more than one YAML document" }

var yamlLine = lazyRegexp(`^yaml: line (\d+): (.*)$`)

// syntaxError reports a YAML error at the line the parser names.
func (d *doc) syntaxError(err error) {
	msg := err.Error()
	line := 0
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	r := d.lines.LineRange(max(line-1, 0) + d.base)
	d.diags.add(CodeYAMLSyntax, diag.SeverityError, r,
		"invalid YAML: %s; the runtime cannot load this file", msg)
}

// decode converts n into a value (see Map), as PyYAML's safe loader would,
// reporting repeated keys, keys that cannot be keys and unknown tags.
// A bad part decodes as nil and the error says the runtime would refuse
// the whole document.
func (d *doc) decode(n *yaml.Node) (any, error) {
	return d.value(n, 0)
}

// errRefused is returned by decode when PyYAML would raise on the document.
var errRefused = errors.New("document refused")

func (d *doc) value(n *yaml.Node, depth int) (any, error) {
	if n == nil {
		return nil, nil
	}
	d.nodes++
	if d.nodes > maxNodes || depth > MaxDepth {
		if !d.cut {
			d.cut = true
			d.diags.add(CodeTooLarge, diag.SeverityError, d.rangeOf(n),
				"the YAML is nested deeper than %d levels or expands to more than %d values; it is not read further", MaxDepth, maxNodes)
		}
		return nil, errRefused
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.value(n.Content[0], depth)
	case yaml.AliasNode:
		return d.value(n.Alias, depth+1)
	case yaml.ScalarNode:
		return d.scalar(n)
	case yaml.SequenceNode:
		if err := d.checkTag(n, "!!seq"); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(n.Content))
		var first error
		for _, c := range n.Content {
			v, err := d.value(c, depth+1)
			if err != nil && first == nil {
				first = err
			}
			out = append(out, v)
		}
		return out, first
	case yaml.MappingNode:
		if err := d.checkTag(n, "!!map"); err != nil {
			return nil, err
		}
		return d.mapping(n, depth)
	}
	return nil, nil
}

// checkTag reports a tag the safe loader has no constructor for.
func (d *doc) checkTag(n *yaml.Node, want string) error {
	if n.Style&yaml.TaggedStyle == 0 || n.Tag == want || n.Tag == "" {
		return nil
	}
	d.diags.add(CodeYAMLSyntax, diag.SeverityError, d.rangeOf(n),
		"the tag %s has no meaning to the runtime's YAML loader, which refuses the file", n.Tag)
	return errRefused
}

func (d *doc) scalar(n *yaml.Node) (any, error) {
	if n.Style&yaml.TaggedStyle != 0 {
		switch n.Tag {
		case "!!str", "!!binary", "!!timestamp":
			return n.Value, nil
		case "!!null":
			return nil, nil
		case "!!bool", "!!int", "!!float":
			v := resolvePlain(n.Value)
			if TypeName(v) == "a string" {
				d.diags.add(CodeYAMLSyntax, diag.SeverityError, d.rangeOf(n),
					"%q is not a valid %s; the runtime's YAML loader refuses the file", n.Value, n.Tag)
				return nil, errRefused
			}
			return v, nil
		default:
			if !strings.HasPrefix(n.Tag, "!!") || n.Tag == "!!map" || n.Tag == "!!seq" {
				d.diags.add(CodeYAMLSyntax, diag.SeverityError, d.rangeOf(n),
					"the tag %s has no meaning to the runtime's YAML loader, which refuses the file", n.Tag)
				return nil, errRefused
			}
			return n.Value, nil
		}
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Value, nil
	}
	if n.Value == "=" {
		d.diags.add(CodeYAMLSyntax, diag.SeverityError, d.rangeOf(n),
			"a plain = is a YAML 1.1 value key that the runtime's YAML loader refuses; quote it: \"=\"")
		return nil, errRefused
	}
	return resolvePlain(n.Value), nil
}

// mapping decodes a mapping node, merge keys (<<) included.
func (d *doc) mapping(n *yaml.Node, depth int) (any, error) {
	var b MapBuilder
	var first error
	seen := map[string]*yaml.Node{}
	var merged []*yaml.Node // the merge keys' mappings, in order
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merged = append(merged, v)
			continue
		}
		key, err := d.key(k)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		val, err := d.value(v, depth+1)
		if err != nil && first == nil {
			first = err
		}
		if prev, ok := seen[key]; ok {
			d.diags.add(CodeDuplicateKey, diag.SeverityError, d.rangeOf(k),
				"the key %q is repeated (first at line %d); the runtime keeps only this last value", key, prev.Line+d.base)
		}
		seen[key] = k
		b.Set(key, val)
	}
	if len(merged) == 0 {
		return b.Map(), first
	}
	// The merged keys come first; the mapping's own keys win.
	var out MapBuilder
	for _, m := range merged {
		v, err := d.value(m, depth+1)
		if err != nil && first == nil {
			first = err
		}
		var maps []*Map
		switch x := v.(type) {
		case *Map:
			maps = append(maps, x)
		case []any:
			for _, e := range x {
				if mm, ok := e.(*Map); ok {
					maps = append(maps, mm)
				}
			}
		default:
			d.diags.add(CodeYAMLSyntax, diag.SeverityError, d.rangeOf(m),
				"a merge key (<<) takes a mapping or a list of mappings; the runtime's YAML loader refuses the file")
			if first == nil {
				first = errRefused
			}
		}
		for _, mm := range maps {
			for k, v := range mm.All() {
				if _, ok := out.m.Get(k); !ok {
					out.Set(k, v)
				}
			}
		}
	}
	own := b.Map()
	for k, v := range own.All() {
		out.Set(k, v)
	}
	return out.Map(), first
}

// key returns the text of a mapping key as the runtime's JSON would write
// it; a collection as a key is what the safe loader refuses ("unhashable").
func (d *doc) key(k *yaml.Node) (string, error) {
	if k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		d.diags.add(CodeYAMLSyntax, diag.SeverityError, d.rangeOf(k),
			"a mapping or list cannot be a key: the runtime's YAML loader refuses the file (found unhashable key)")
		return "", errRefused
	}
	v, err := d.scalar(k)
	if err != nil {
		return "", err
	}
	return keyText(v), nil
}

// keyText is the text of a scalar key as json.dumps writes a dict key.
func keyText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case *big.Int:
		return x.String()
	case Float:
		b, _ := x.MarshalJSON()
		return string(b)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// validUTF8 reports invalid UTF-8 in src as one diagnostic at its place
// (lines gives the line index, asked for only then).
func validUTF8(src []byte, lines func() *syntax.LineIndex, diags *sink) bool {
	if utf8.Valid(src) {
		return true
	}
	off := 0
	for off < len(src) {
		r, size := utf8.DecodeRune(src[off:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	diags.add(CodeEncoding, diag.SeverityError, lines().Range(off, min(off+1, len(src))),
		"the file is not valid UTF-8 (first bad byte here); the runtime cannot read it: save it as UTF-8")
	return false
}

// minMaskedLines is the fewest lines of a block scalar that
// maskBlockScalars skips.
const minMaskedLines = 4

// maskBlockScalars returns a copy of YAML text whose long block scalars
// (key: | or key: > and at least minMaskedLines more indented lines) have
// their lines emptied, newlines kept, so that a YAML parser skips them; or
// nil when it skips nothing, or meets tabs in an indentation or an
// indentation indicator, which it does not try to follow.
func maskBlockScalars(text []byte) []byte {
	lines := bytes.SplitAfter(text, []byte("\n"))
	empty := make([]bool, len(lines))
	any := false
	for i := 0; i < len(lines); i++ {
		keyIndent, ok, bail := blockScalarStart(lines[i])
		if bail {
			return nil
		}
		if !ok {
			continue
		}
		blockIndent, j := -1, i+1
		for ; j < len(lines); j++ {
			l := bytes.TrimRight(lines[j], "\r\n")
			rest := bytes.TrimLeft(l, " ")
			if len(rest) == 0 {
				continue
			}
			ind := len(l) - len(rest)
			if rest[0] == '\t' {
				return nil
			}
			if blockIndent < 0 {
				if ind <= keyIndent {
					break
				}
				blockIndent = ind
			}
			if ind < blockIndent {
				break
			}
		}
		end := j // trailing blank lines stay: they may belong to what follows
		for end > i+1 && len(bytes.TrimSpace(lines[end-1])) == 0 {
			end--
		}
		if blockIndent >= 0 && end-i-1 >= minMaskedLines {
			for k := i + 1; k < end; k++ {
				empty[k] = true
			}
			any = true
		}
		i = max(i, end-1)
	}
	if !any {
		return nil
	}
	out := make([]byte, 0, len(text))
	for k, l := range lines {
		if empty[k] {
			if bytes.HasSuffix(l, []byte("\n")) {
				out = append(out, '\n')
			}
			continue
		}
		out = append(out, l...)
	}
	return out
}

// blockScalarStart reports whether line opens a block scalar (it ends with
// | or >, a chomping indicator allowed, after "key:" or "-"), and the
// column of its key. bail says the line has what the masking does not
// follow: an indentation indicator, or a tab in its indentation.
func blockScalarStart(line []byte) (keyIndent int, ok, bail bool) {
	l := bytes.TrimRight(line, " \t\r\n")
	if i := bytes.Index(l, []byte(" #")); i >= 0 {
		l = bytes.TrimRight(l[:i], " \t")
	}
	if len(l) == 0 {
		return 0, false, false
	}
	rest := bytes.TrimLeft(l, " ")
	if rest[0] == '\t' {
		return 0, false, true
	}
	ind := len(l) - len(rest)
	for bytes.HasPrefix(rest, []byte("- ")) {
		ind += 2
		trimmed := bytes.TrimLeft(rest[2:], " ")
		ind += len(rest) - 2 - len(trimmed)
		rest = trimmed
	}
	n := len(rest)
	ind2 := n - 1
	for ind2 >= 0 && (rest[ind2] == '-' || rest[ind2] == '+' || rest[ind2] >= '0' && rest[ind2] <= '9') {
		ind2--
	}
	if ind2 < 0 || (rest[ind2] != '|' && rest[ind2] != '>') {
		return 0, false, false
	}
	for _, c := range rest[ind2+1:] {
		if c >= '0' && c <= '9' {
			return 0, false, true
		}
	}
	head := bytes.TrimRight(rest[:ind2], " ")
	switch {
	case len(head) == 0:
		return ind - 1, true, false // "- |": the entry's column
	case head[len(head)-1] == ':' && ind2 > len(head) && head[0] != '"' && head[0] != '\'' && head[0] != '{' && head[0] != '[':
		return ind, true, false
	}
	return 0, false, false
}

// lazyRegexp compiles expr the first time it is asked for: a process
// that reads no bundle (a `query` that exits at once) compiles none.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
