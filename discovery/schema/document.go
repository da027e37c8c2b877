package schema

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Document is a parsed profile, agent or bundle manifest: a Markdown file
// that opens with YAML front matter.
type Document struct {
	Path string
	Kind DocKind
	// Src is the whole file as read; Lines indexes it.
	Src   []byte
	Lines *syntax.LineIndex
	// Front is the front matter's top-level mapping, or nil when the front
	// matter is missing, unterminated, not YAML, not a mapping, or too
	// large. Line and column numbers in its nodes count from the start of
	// the YAML text, not of the file: use NodeRange and KeyRange for file
	// positions.
	Front *yaml.Node
	// Open is the byte offset of the opening "---" line, or of the first
	// non-empty line when there is no front matter.
	Open int
	// FrontStart and FrontEnd delimit the YAML text between the delimiter
	// lines; both are 0 when there is no front matter.
	FrontStart, FrontEnd int
	// BodyStart is where the Markdown body starts: after the closing
	// delimiter, or at 0 when there is no front matter.
	BodyStart int
	// Diagnostics is everything wrong with this one file, cross-references
	// aside: at most diag.MaxPerArea of an area, and then one
	// CodeTooManyDiagnostics.
	Diagnostics []diag.Diagnostic

	text  *syntax.YAMLText
	limit diag.Limit
}

// ParseDocument splits src into front matter and body, parses the front
// matter and checks it against the schema of kind (no schema check for a
// kind without one). It never panics, and its time and memory are bounded
// by syntax.MaxFrontMatter, syntax.MaxFrontMatterNodes and
// syntax.MaxFrontMatterDepth whatever src holds; the body is not parsed.
func ParseDocument(path string, src []byte, kind DocKind, opts Options) *Document {
	return ParseDocumentWith(path, src, kind, opts, nil)
}

// ParseDocumentWith is ParseDocument taking the nodes of Front from slab
// (nil for new ones) where it can: the Document must then be dropped
// before slab is reset.
func ParseDocumentWith(path string, src []byte, kind DocKind, opts Options, slab *syntax.Nodes) *Document {
	d := &Document{Path: path, Kind: kind, Src: src, Lines: syntax.NewLineIndex(src)}
	defer func() { d.Diagnostics = append(d.Diagnostics, d.limit.Summaries(d.Path, "")...) }()
	fm, err := syntax.SplitFrontMatter(src)
	d.Open = fm.Open
	if bad := firstInvalidUTF8(src); bad >= 0 {
		d.report(diag.CodeFrontMatterEncoding, diag.SeverityError, d.Lines.Range(bad, bad+1),
			"the file is not valid UTF-8: byte 0x%02X at offset %d", src[bad], bad)
		if err == nil && bad < fm.End {
			// The YAML cannot be read; say nothing more about it.
			d.FrontStart, d.FrontEnd, d.BodyStart = fm.Start, fm.End, fm.BodyStart
			return d
		}
	}
	switch {
	case errors.Is(err, syntax.ErrNoFrontMatter):
		d.missing()
		return d
	case errors.Is(err, syntax.ErrUnterminated):
		d.report(diag.CodeFrontMatterUnterminated, diag.SeverityError, d.openRange(),
			"front matter is not terminated: no closing --- line")
		return d
	case errors.Is(err, syntax.ErrFrontMatterTooLarge):
		d.report(diag.CodeFrontMatterTooLarge, diag.SeverityError, d.openRange(),
			"front matter is larger than %d bytes", syntax.MaxFrontMatter)
		return d
	}
	d.FrontStart, d.FrontEnd, d.BodyStart = fm.Start, fm.End, fm.BodyStart
	d.text = syntax.NewYAMLText(src, fm.Start, fm.End)
	root, serr := syntax.ParseYAMLIn(src[fm.Start:fm.End], slab)
	if serr != nil {
		d.syntaxError(serr)
		return d
	}
	if root == nil {
		// An empty block is an empty mapping.
		root = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1}
	}
	if le := syntax.CheckLimits(root); le != nil {
		d.report(diag.CodeFrontMatterTooLarge, diag.SeverityError, d.NodeRange(le.Node), "%s", le.Msg)
		return d
	}
	if r := syntax.Unalias(root); r.Kind != yaml.MappingNode {
		d.report(diag.CodeFrontMatterNotMapping, diag.SeverityError, d.NodeRange(root),
			"front matter must be a mapping of keys to values, got %s", describeNode(r))
		return d
	}
	d.Front = syntax.Unalias(root)
	validate(d, opts)
	d.checkName()
	return d
}

func (d *Document) report(code string, sev diag.Severity, r diag.Range, format string, args ...any) {
	if !d.limit.Allow(code, sev, r) {
		return
	}
	d.Diagnostics = append(d.Diagnostics, diag.Diagnostic{
		Code:     code,
		Severity: sev,
		Path:     d.Path,
		Range:    r,
		Message:  fmt.Sprintf(format, args...),
	})
}

// openRange is the range of the opening delimiter line (or of the first
// non-empty line when there is none).
func (d *Document) openRange() diag.Range {
	p := d.Lines.Position(d.Open)
	return d.Lines.LineRange(p.Line)
}

// missing reports a document without front matter: in-code-fence when its
// only YAML sits in a code fence and looks like front matter, missing
// otherwise.
func (d *Document) missing() {
	if fence, ok := d.fencedFrontMatter(); ok {
		d.report(diag.CodeFrontMatterInCodeFence, diag.SeverityError, d.Lines.Range(fence.Open, fence.OpenEnd),
			"front matter must open the file between --- lines, not sit in a code fence")
		return
	}
	msg := "missing front matter: the first non-empty line must be ---"
	if d.Open >= len(d.Src) {
		msg = "missing front matter: the file is empty"
	}
	d.report(diag.CodeFrontMatterMissing, diag.SeverityError, d.openRange(), "%s", msg)
}

// maxFenceYAML bounds the size of a code fence parsed in search of front
// matter.
const maxFenceYAML = 64 << 10

// fencedFrontMatter finds the first yaml (or unlabelled) code fence whose
// content is a mapping with a key the document's schema knows (any key,
// for a kind without a schema).
func (d *Document) fencedFrontMatter() (syntax.FencedBlock, bool) {
	s, hasSchema := schemaFor(d.Kind)
	for _, f := range syntax.CodeFences(d.Src, d.Open) {
		if !syntax.IsYAMLFence(f.Info) || f.End-f.Start > maxFenceYAML || !utf8.Valid(d.Src[f.Start:f.End]) {
			continue
		}
		root, err := syntax.ParseYAML(d.Src[f.Start:f.End])
		if err != nil || root == nil || root.Kind != yaml.MappingNode || syntax.CheckLimits(root) != nil {
			continue
		}
		for i := 0; i+1 < len(root.Content); i += 2 {
			k := root.Content[i]
			if k.Kind == yaml.ScalarNode && (!hasSchema || s.field(k.Value) != nil) {
				return f, true
			}
		}
	}
	return syntax.FencedBlock{}, false
}

// syntaxError reports a YAML error at the line go-yaml names. go-yaml
// reports no column; for "mapping values are not allowed" the offending
// colon is found on the line, elsewhere the line's first non-blank.
func (d *Document) syntaxError(e *syntax.SyntaxError) {
	y := d.text
	line := e.Line
	if line == 0 {
		// go-yaml leaves the line out when it is the first, and for
		// anchors it cannot find.
		line = 1
		if name, ok := strings.CutPrefix(e.Msg, "unknown anchor '"); ok {
			name = strings.TrimSuffix(name, "' referenced")
			if off := indexAlias(d.Src[y.Start:y.End], name); off >= 0 {
				start := y.Start + off
				d.report(diag.CodeFrontMatterSyntax, diag.SeverityError, d.Lines.Range(start, start+1+len(name)),
					"invalid YAML: %s", e.Msg)
				return
			}
		}
	}
	if strings.HasPrefix(e.Msg, "found a tab character") {
		// go-yaml names the line before the one with the tab.
		if off := tabIndent(d.Src[y.Offset(line, 1):y.End]); off >= 0 {
			start := y.Offset(line, 1) + off
			d.report(diag.CodeFrontMatterSyntax, diag.SeverityError, d.Lines.Range(start, start+1), "%s", tabMessage)
			return
		}
	}
	start := y.Offset(line, 1)
	end := y.LineEnd(start)
	if off := tabIndent(d.Src[start:end]); off >= 0 {
		// A tab in the indentation of the line YAML refuses is why,
		// whatever YAML calls it ("found character that cannot start any
		// token").
		d.report(diag.CodeFrontMatterSyntax, diag.SeverityError, d.Lines.Range(start+off, start+off+1), "%s", tabMessage)
		return
	}
	for start < end && (d.Src[start] == ' ' || d.Src[start] == '\t') {
		start++
	}
	if strings.HasPrefix(e.Msg, "mapping values are not allowed") {
		if c := misplacedColon(d.Src[start:end]); c >= 0 {
			start += c
			end = start + 1
		}
	}
	end = start + len(syntax.TrimRightSpace(d.Src[start:end]))
	d.report(diag.CodeFrontMatterSyntax, diag.SeverityError, d.Lines.Range(start, end), "invalid YAML: %s", e.Msg)
}

// tabMessage names the YAML error of a tab in indentation in the user's
// terms.
const tabMessage = "invalid YAML: a tab character indents this line; YAML indents with spaces"

// tabIndent returns the offset in text of the first tab that indents a
// line, or -1.
func tabIndent(text []byte) int {
	for i := 0; i < len(text); {
		line, next := syntax.NextLine(text, i)
		for j, c := range line {
			if c == '\t' {
				return i + j
			}
			if c != ' ' {
				break
			}
		}
		i = next
	}
	return -1
}

// indexAlias finds "*name" in text, where it is not part of a longer name.
func indexAlias(text []byte, name string) int {
	pat := []byte("*" + name)
	for from := 0; ; {
		i := bytes.Index(text[from:], pat)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(pat)
		if end == len(text) || strings.IndexByte(" \t\r\n,]}#", text[end]) >= 0 {
			return i
		}
		from = i + 1
	}
}

// misplacedColon returns the offset in line of the ": " that YAML refuses:
// the second mapping indicator of a "key: value: more" line, or the first
// of a line that continues a plain scalar.
func misplacedColon(line []byte) int {
	// Skip sequence indicators.
	i := 0
	for i+1 < len(line) && line[i] == '-' && (line[i+1] == ' ' || line[i+1] == '\t') {
		i += 2
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
	}
	var colons []int
	quote := byte(0)
	for j := i; j < len(line); j++ {
		c := line[j]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case (c == '"' || c == '\'') && (j == i || line[j-1] == ' '):
			quote = c
		case c == '#' && j > i && (line[j-1] == ' ' || line[j-1] == '\t'):
			j = len(line)
		case c == ':' && (j+1 == len(line) || line[j+1] == ' ' || line[j+1] == '\t'):
			colons = append(colons, j)
		}
	}
	switch len(colons) {
	case 0:
		return -1
	case 1:
		return colons[0]
	}
	return colons[1]
}

// checkName warns when a profile's or agent's name differs from its file
// stem.
func (d *Document) checkName() {
	var n *yaml.Node
	switch d.Kind {
	case DocProfile:
		n = d.Lookup("profile", "name")
	case DocAgent, DocBundleAgent:
		if n = d.Lookup("meta", "name"); n == nil {
			n = d.Lookup("name")
		}
	default:
		return
	}
	name, ok := syntax.ScalarText(n)
	if !ok || name == "" {
		return
	}
	stem := strings.TrimSuffix(filepath.Base(d.Path), filepath.Ext(d.Path))
	if name != stem {
		d.report(diag.CodeNameMismatch, diag.SeverityWarning, d.NodeRange(n),
			"%s name %s differs from the file name %s", kindWord(d.Kind), QuoteValue(name), QuoteValue(stem+filepath.Ext(d.Path)))
	}
}

func kindWord(k DocKind) string {
	if k == DocProfile {
		return "profile"
	}
	return "agent"
}

// Lookup walks the front matter mappings along keys and returns the value
// found, with aliases resolved, or nil when a key is absent (or a value on
// the way is not a mapping). Lookup() returns the front matter itself.
func (d *Document) Lookup(keys ...string) *yaml.Node {
	n, _ := d.lookup(keys)
	return n
}

func (d *Document) lookup(keys []string) (value, key *yaml.Node) {
	n := d.Front
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil, nil
		}
		p, ok := syntax.LookupKey(n, k)
		if !ok {
			return nil, nil
		}
		n, key = syntax.Unalias(p.Value), p.Key
	}
	return n, key
}

// KeyRange returns the range in the file of the last key of a Lookup path,
// and whether it is present.
func (d *Document) KeyRange(keys ...string) (diag.Range, bool) {
	if len(keys) == 0 {
		return diag.Range{}, false
	}
	_, k := d.lookup(keys)
	if k == nil {
		return diag.Range{}, false
	}
	return d.NodeRange(k), true
}

// NodeRange returns where a node of Front sits in the file: a scalar's text
// (with its quotes; up to the end of its first line when it spans
// several), or the first line of a mapping or sequence from the node on.
// A nil node, or any node of a document without front matter, gives the
// range of the opening line.
func (d *Document) NodeRange(n *yaml.Node) diag.Range {
	if n == nil || d.text == nil {
		return d.openRange()
	}
	y := d.text
	start := y.Offset(n.Line, n.Column)
	lineEnd := y.LineEnd(start)
	end := lineEnd
	text := d.Src[start:lineEnd]
	switch n.Kind {
	case yaml.AliasNode:
		end = start + min(len(text), 1+len(n.Value))
	case yaml.ScalarNode:
		switch {
		case n.Style&yaml.DoubleQuotedStyle != 0:
			end = start + quotedLen(text, '"')
		case n.Style&yaml.SingleQuotedStyle != 0:
			end = start + quotedLen(text, '\'')
		case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			end = start + len(syntax.TrimRightSpace(text))
		case len(text) >= len(n.Value) && string(text[:len(n.Value)]) == n.Value:
			end = start + len(n.Value)
		default:
			end = start + len(syntax.TrimRightSpace(text))
		}
	default:
		end = start + len(syntax.TrimRightSpace(text))
	}
	return d.Lines.Range(start, end)
}

// quotedLen returns the length of the quoted scalar that opens text, with
// both quotes, or len(text) when it does not close on this line.
func quotedLen(text []byte, q byte) int {
	for i := 1; i < len(text); i++ {
		switch {
		case q == '"' && text[i] == '\\':
			i++
		case text[i] == q && q == '\'' && i+1 < len(text) && text[i+1] == '\'':
			i++
		case text[i] == q:
			return i + 1
		}
	}
	return len(text)
}

// Body returns the Markdown after the front matter (the whole file when it
// has none). It shares memory with Src.
func (d *Document) Body() []byte {
	return d.Src[d.BodyStart:]
}

// Decode returns the front matter as plain Go values, typed as the YAML 1.1
// loaders that read these files at run time type them: mappings as *Map
// with the author's key order (merge keys applied; the last of repeated
// keys wins), sequences as []any, scalars as string, int, Float, bool or
// nil ("yes" is true, "010" is 8, "10.0" is a Float). Entries with keys
// that are not scalars are left out. It returns ErrNoFrontMatter when
// Front is nil, and never fails otherwise. Each call builds a new value.
func (d *Document) Decode() (*syntax.Map, error) {
	if d.Front == nil {
		return nil, fmt.Errorf("decode front matter %s: %w", d.Path, syntax.ErrNoFrontMatter)
	}
	m, _ := syntax.DecodeNode(d.Front).(*syntax.Map)
	return m, nil
}

// Name returns the document's name as written: profile.name for profiles,
// meta.name (else name) for agents, bundle.name for bundles; "" when
// absent or not a string.
func (d *Document) Name() string {
	return d.metaString("name")
}

// Description returns the document's description, found as Name finds the
// name.
func (d *Document) Description() string {
	return d.metaString("description")
}

func (d *Document) metaString(key string) string {
	var n *yaml.Node
	switch d.Kind {
	case DocProfile:
		n = d.Lookup("profile", key)
	case DocBundle:
		n = d.Lookup("bundle", key)
	default:
		if n = d.Lookup("meta", key); n == nil {
			n = d.Lookup(key)
		}
	}
	s, _ := syntax.ScalarText(n)
	return s
}

// firstInvalidUTF8 returns the offset of the first byte of src that is not
// part of valid UTF-8, or -1.
func firstInvalidUTF8(src []byte) int {
	if utf8.Valid(src) {
		return -1
	}
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
