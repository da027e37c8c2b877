package syntax

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bounds on the YAML of a front matter block, counted with aliases
// expanded; real front matter has a few hundred nodes nested a dozen deep.
// Beyond them a document earns frontmatter/too-large.
const (
	// MaxFrontMatterNodes is the most YAML nodes (keys, values and items)
	// a front matter block may hold.
	MaxFrontMatterNodes = 10000
	// MaxFrontMatterDepth is the deepest a front matter block may nest.
	MaxFrontMatterDepth = 100
)

// YAMLText is a front matter block together with the tables that map the
// line and column numbers go-yaml reports back to byte offsets in the
// file. Built once by NewYAMLText, it is never changed.
type YAMLText struct {
	src        []byte // the whole file
	Start, End int    // the YAML text, src[start:end]
	// lines holds the offset in src where each YAML line starts. go-yaml
	// breaks lines at "\n", "\r\n", a lone "\r", NEL, LS and PS, so its
	// line numbers can run ahead of the file's "\n" lines.
	lines []int
	// marks are the column marks of its long lines, so that a rune column
	// far into one is found without decoding the line from its start.
	marks colMarks
	// breaks holds the offset of every "\n" and "\r" of the text, in
	// order, for lineEnd.
	breaks []int
}

func NewYAMLText(src []byte, start, end int) *YAMLText {
	text := src[start:end]
	if bytes.IndexByte(text, '\r') < 0 && bytes.IndexByte(text, 0xC2) < 0 && bytes.IndexByte(text, 0xE2) < 0 {
		// The common case: "\n" is the only line break.
		n := bytes.Count(text, []byte{'\n'})
		y := &YAMLText{src: src, Start: start, End: end, lines: make([]int, 1, n+1), breaks: make([]int, 0, n)}
		y.lines[0] = start
		for i := start; ; {
			j := bytes.IndexByte(src[i:end], '\n')
			if j < 0 {
				break
			}
			i += j
			y.breaks = append(y.breaks, i)
			i++
			y.lines = append(y.lines, i)
		}
		y.marks = buildColMarks(src, start, end, y.lines)
		return y
	}
	return newYAMLTextAnyBreaks(src, start, end)
}

// newYAMLTextAnyBreaks is NewYAMLText for a text with any line breaks.
func newYAMLTextAnyBreaks(src []byte, start, end int) *YAMLText {
	y := &YAMLText{src: src, Start: start, End: end, lines: []int{start}}
	for i := start; i < end; {
		c := src[i]
		switch {
		case c == '\n':
			y.breaks = append(y.breaks, i)
			i++
		case c == '\r':
			y.breaks = append(y.breaks, i)
			i++
			if i < end && src[i] == '\n' {
				y.breaks = append(y.breaks, i)
				i++
			}
		case c == 0xC2 && i+1 < end && src[i+1] == 0x85: // NEL
			i += 2
		case c == 0xE2 && i+2 < end && src[i+1] == 0x80 && (src[i+2] == 0xA8 || src[i+2] == 0xA9): // LS, PS
			i += 3
		default:
			i++
			continue
		}
		y.lines = append(y.lines, i)
	}
	y.marks = buildColMarks(src, start, end, y.lines)
	return y
}

// offset converts a 1-based line and rune column, as go-yaml reports them,
// into a byte offset in the file, clamped to the YAML text.
func (y *YAMLText) Offset(line, col int) int {
	switch {
	case line < 1:
		return y.Start
	case line > len(y.lines):
		return y.End
	}
	off := y.lines[line-1]
	end := y.End
	if line < len(y.lines) {
		end = y.lines[line]
	}
	return y.marks.runeOffset(y.src, off, end, end, col-1)
}

// lineEnd returns the offset where the content of the file line holding
// off ends: before its line break, and never past the YAML text.
func (y *YAMLText) LineEnd(off int) int {
	if i := sort.SearchInts(y.breaks, off); i < len(y.breaks) {
		return y.breaks[i]
	}
	return y.End
}

// SyntaxError is a YAML error with the line go-yaml names (0 when it
// names none).
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// ParseYAML parses text into a node tree and returns the document's
// content node, or nil when the text holds no document at all (empty, or
// only comments).
func ParseYAML(text []byte) (root *yaml.Node, err *SyntaxError) {
	return ParseYAMLIn(text, nil)
}

// ParseYAMLIn is ParseYAML taking the nodes from slab (nil for new ones)
// where it can.
func ParseYAMLIn(text []byte, slab *Nodes) (root *yaml.Node, err *SyntaxError) {
	if root, ok := parseYAMLFast(text, slab); ok {
		return root, nil
	}
	return parseYAMLSlow(text)
}

// ParseYAMLWithoutComments is ParseYAML for a caller that reads no
// comment: the tree is go-yaml's without its comments (no HeadComment,
// LineComment or FootComment), and comments keep the text on the fast
// path.
func ParseYAMLWithoutComments(text []byte) (root *yaml.Node, err *SyntaxError) {
	if root, ok := parseYAMLFastIn(fastYAML{comments: true, text: text, curLine: -1}, nil); ok {
		return root, nil
	}
	root, err = parseYAMLSlow(text)
	clearComments(root)
	return root, err
}

// clearComments removes the comments of the tree under n. An alias's
// node is in the tree already, where it is cleared.
func clearComments(n *yaml.Node) {
	if n == nil {
		return
	}
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		clearComments(c)
	}
}

// parseYAMLSlow is ParseYAML through go-yaml, for any text.
func parseYAMLSlow(text []byte) (root *yaml.Node, err *SyntaxError) {
	defer func() {
		// go-yaml is not known to panic on any input; should it, the
		// document gets a diagnostic instead of taking the process down.
		if r := recover(); r != nil {
			// The panic's own text is the parser's, not the user's.
			root, err = nil, &SyntaxError{Msg: "the YAML parser failed on this front matter"}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err == io.EOF {
		return nil, nil
	} else if err != nil {
		return nil, toSyntaxError(err)
	}
	// Loaders take exactly one document; whatever follows a "..." end
	// marker must be nothing but comments.
	var next yaml.Node
	if err := dec.Decode(&next); err != io.EOF {
		if err != nil {
			return nil, toSyntaxError(err)
		}
		return nil, &SyntaxError{Line: next.Line, Msg: "front matter holds more than one YAML document"}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

func toSyntaxError(err error) *SyntaxError {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if n, rest, ok := cutYAMLErrLine(msg); ok {
		return &SyntaxError{Line: n, Msg: rest}
	}
	return &SyntaxError{Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// cutYAMLErrLine reads go-yaml's message "yaml: line N: what" (the
// prefix "yaml: " optional) as the line N and what; ok is false for any
// other message, and for one of more than one line.
func cutYAMLErrLine(msg string) (line int, rest string, ok bool) {
	s, _ := strings.CutPrefix(msg, "yaml: ")
	s, ok = strings.CutPrefix(s, "line ")
	if !ok {
		return 0, "", false
	}
	digits, rest, ok := strings.Cut(s, ": ")
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" || strings.Contains(rest, "\n") {
		return 0, "", false
	}
	line, _ = strconv.Atoi(digits)
	return line, rest, true
}

// Unalias follows aliases to the node they name. It gives up (returning
// the alias) on a chain longer than MaxFrontMatterDepth, which only a
// self-referencing document can build.
func Unalias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < MaxFrontMatterDepth; i++ {
		n = n.Alias
	}
	return n
}

// Pair is one key and its value in a mapping.
type Pair struct {
	Key, Value *yaml.Node
}

// HasMergeKey reports whether mapping m has a "<<" merge key of its own.
func HasMergeKey(m *yaml.Node) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if isMergeKey(m.Content[i]) {
			return true
		}
	}
	return false
}

// isMergeKey reports whether k is the "<<" merge key.
func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Tag == "!!merge"
}

// Pairs returns the entries of mapping m as a YAML loader sees them: "<<"
// merge keys are replaced by the entries of the mappings they name, each
// of which is overridden by an explicit key of m or of an earlier merged
// mapping. Explicit entries come first, in order, duplicates included.
// Merge values that are not mappings are returned in bad.
func Pairs(m *yaml.Node) (out []Pair, bad []*yaml.Node) {
	return appendPairs(nil, nil, m, 0)
}

func appendPairs(out []Pair, bad []*yaml.Node, m *yaml.Node, depth int) ([]Pair, []*yaml.Node) {
	m = Unalias(m)
	if m == nil || m.Kind != yaml.MappingNode || depth > MaxFrontMatterDepth {
		return out, bad
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if isMergeKey(k) {
			merges = append(merges, v)
			continue
		}
		out = append(out, Pair{k, v})
	}
	for _, v := range merges {
		v = Unalias(v)
		var sources []*yaml.Node
		switch v.Kind {
		case yaml.MappingNode:
			sources = []*yaml.Node{v}
		case yaml.SequenceNode:
			sources = v.Content
		default:
			bad = append(bad, v)
		}
		for _, s := range sources {
			if rs := Unalias(s); rs.Kind != yaml.MappingNode {
				bad = append(bad, s)
				continue
			}
			var merged []Pair
			merged, bad = appendPairs(nil, bad, s, depth+1)
			for _, p := range merged {
				if !hasKey(out, p.Key) {
					out = append(out, p)
				}
			}
		}
	}
	return out, bad
}

// hasKey reports whether ps holds a scalar key with the text of k.
func hasKey(ps []Pair, k *yaml.Node) bool {
	if k.Kind != yaml.ScalarNode {
		return false
	}
	for _, p := range ps {
		if p.Key.Kind == yaml.ScalarNode && p.Key.Value == k.Value {
			return true
		}
	}
	return false
}

// LookupKey returns the entry of mapping m with key name: the last one
// when the key is repeated, as YAML loaders keep the last.
func LookupKey(m *yaml.Node, name string) (Pair, bool) {
	m = Unalias(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return Pair{}, false
	}
	if !HasMergeKey(m) {
		// The entries are the explicit ones, in order: look through them
		// without gathering them.
		for i := len(m.Content)&^1 - 2; i >= 0; i -= 2 {
			if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == name {
				return Pair{k, m.Content[i+1]}, true
			}
		}
		return Pair{}, false
	}
	ps, _ := Pairs(m)
	for i := len(ps) - 1; i >= 0; i-- {
		k := ps[i].Key
		if k.Kind == yaml.ScalarNode && k.Value == name && !isMergeKey(k) {
			return ps[i], true
		}
	}
	return Pair{}, false
}

// Excess says where and how a node tree exceeds the bounds.
type Excess struct {
	Node *yaml.Node // where to point
	Msg  string
}

// treeSize is the size of a subtree with aliases expanded: its node count
// and its height.
type treeSize struct{ nodes, height int }

// yamlBudget measures a node tree with aliases expanded, without
// expanding them: anchored subtrees are measured once and remembered.
type yamlBudget struct {
	memo   map[*yaml.Node]treeSize
	active map[*yaml.Node]bool // anchored nodes being measured
}

// CheckLimits reports whether root, with its aliases expanded, has more
// than MaxFrontMatterNodes nodes, nests deeper than MaxFrontMatterDepth, or
// holds an alias to a node that contains it; nil when it does none of
// these.
func CheckLimits(root *yaml.Node) *Excess {
	b := yamlBudget{}
	_, err := b.measure(root, 1)
	return err
}

func (b *yamlBudget) measure(n *yaml.Node, depth int) (treeSize, *Excess) {
	if depth > MaxFrontMatterDepth {
		return treeSize{}, &Excess{n, fmt.Sprintf("front matter nests deeper than %d levels", MaxFrontMatterDepth)}
	}
	if n.Kind == yaml.AliasNode {
		target := n.Alias
		if target == nil {
			return treeSize{1, 1}, nil
		}
		if b.active[target] {
			return treeSize{}, &Excess{n, fmt.Sprintf("alias *%s refers to a node that contains it, so it expands without end", n.Value)}
		}
		if s, ok := b.memo[target]; ok {
			if depth+s.height-1 > MaxFrontMatterDepth {
				return treeSize{}, &Excess{n, fmt.Sprintf("front matter nests deeper than %d levels once alias *%s is expanded", MaxFrontMatterDepth, n.Value)}
			}
			return s, nil
		}
		return b.measure(target, depth)
	}
	if n.Anchor != "" {
		if b.active == nil {
			b.active = make(map[*yaml.Node]bool)
			b.memo = make(map[*yaml.Node]treeSize)
		}
		b.active[n] = true
		defer delete(b.active, n)
	}
	size := treeSize{nodes: 1, height: 1}
	for _, c := range n.Content {
		s, err := b.measure(c, depth+1)
		if err != nil {
			return treeSize{}, err
		}
		size.nodes += s.nodes
		size.height = max(size.height, s.height+1)
		if size.nodes > MaxFrontMatterNodes {
			what := "nodes"
			if c.Kind == yaml.AliasNode {
				what = "nodes once alias *" + c.Value + " is expanded"
			}
			return treeSize{}, &Excess{c, fmt.Sprintf("front matter has more than %d YAML %s", MaxFrontMatterNodes, what)}
		}
	}
	if n.Anchor != "" {
		b.memo[n] = size
	}
	return size, nil
}

// DecodeNode converts a checked node tree into plain Go values: mappings
// become *Map, sequences []any, scalars string, int (*big.Int beyond
// int), Float, bool or nil as scalarType resolves them. Entries
// the schema check reports as malformed, keys that are not scalars and
// merges of values that are not mappings, are left out.
//
// A mapping's keys keep the author's order: each key where it first
// appears, the keys a "<<" merge brings in where the merge is, in their
// own order. Values are a YAML loader's: an explicit key wins over a
// merged one, the last of repeated keys wins (in the first one's place).
func DecodeNode(n *yaml.Node) any {
	n = Unalias(n)
	switch n.Kind {
	case yaml.MappingNode:
		if !HasMergeKey(n) {
			// Without merges the keys come in the order of the pairs, and
			// a repeated key takes the value of its last pair (Set keeps
			// the first one's place). The values of repeated keys are
			// decoded in vain, within the budget CheckLimits counted them
			// in.
			m := NewMap(len(n.Content) / 2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k := Unalias(n.Content[i]); k.Kind == yaml.ScalarNode {
					m.Set(k.Value, DecodeNode(n.Content[i+1]))
				}
			}
			return m
		}
		ps, _ := Pairs(n)
		vals := make(map[string]*yaml.Node, len(ps))
		for _, p := range ps {
			if k := Unalias(p.Key); k.Kind == yaml.ScalarNode {
				vals[k.Value] = p.Value
			}
		}
		m := NewMap(len(vals))
		mappingKeys(n, 0, func(k string) {
			if v, ok := vals[k]; ok {
				if _, done := m.Get(k); !done {
					m.Set(k, DecodeNode(v))
				}
			}
		})
		return m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			s = append(s, DecodeNode(c))
		}
		return s
	case yaml.ScalarNode:
		return scalarValue(n)
	}
	return nil
}

// mappingKeys calls key with the scalar keys of mapping m in the order
// they appear, a "<<" merge standing for the keys of the mappings it
// names, repeats included.
func mappingKeys(m *yaml.Node, depth int, key func(string)) {
	m = Unalias(m)
	if m == nil || m.Kind != yaml.MappingNode || depth > MaxFrontMatterDepth {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if !isMergeKey(k) {
			if k := Unalias(k); k.Kind == yaml.ScalarNode {
				key(k.Value)
			}
			continue
		}
		switch v = Unalias(v); v.Kind {
		case yaml.MappingNode:
			mappingKeys(v, depth+1, key)
		case yaml.SequenceNode:
			for _, s := range v.Content {
				mappingKeys(s, depth+1, key)
			}
		}
	}
}

// NodeType returns the type of a resolved node.
func NodeType(n *yaml.Node) Type {
	switch n.Kind {
	case yaml.MappingNode:
		return TypeMap
	case yaml.SequenceNode:
		return TypeList
	case yaml.ScalarNode:
		return scalarType(n)
	}
	return 0
}

// Plain scalars are resolved as YAML 1.1 resolves them, as the Python
// loaders that read these files at run time do: "yes", "off" are booleans,
// "010" is octal, "1:30" is sexagesimal, "1e3" (no dot) is a string.
// go-yaml follows YAML 1.2 and would disagree on those. The matchers below
// accept exactly what these expressions of the YAML 1.1 resolver do
// (anchored at both ends), by hand, for speed; a test holds them to the
// expressions:
//
//	bool   yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
//	int    [-+]?(?:0b[01_]+|0[0-7_]+|0|[1-9][0-9_]*|0x[0-9a-fA-F_]+|[1-9][0-9_]*(?::[0-5]?[0-9])+)
//	float  [-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|
//	       [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
//	null   ~|null|Null|NULL|(empty)

// isYAML11Bool reports whether s is a YAML 1.1 boolean.
func isYAML11Bool(s string) bool {
	switch s {
	case "yes", "Yes", "YES", "no", "No", "NO",
		"true", "True", "TRUE", "false", "False", "FALSE",
		"on", "On", "ON", "off", "Off", "OFF":
		return true
	}
	return false
}

// isYAML11Null reports whether s is a YAML 1.1 null.
func isYAML11Null(s string) bool {
	switch s {
	case "~", "null", "Null", "NULL", "":
		return true
	}
	return false
}

// isYAML11Int reports whether s is a YAML 1.1 integer: binary, octal,
// decimal, hexadecimal or sexagesimal, signed or not, with underscores.
func isYAML11Int(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	switch {
	case s == "":
		return false
	case s == "0":
		return true
	case s[0] == '0' && s[1] == 'b':
		return len(s) > 2 && allBytes(s[2:], isBinDigitOrUnderscore)
	case s[0] == '0' && s[1] == 'x':
		return len(s) > 2 && allBytes(s[2:], isHexDigitOrUnderscore)
	case s[0] == '0':
		return allBytes(s[1:], isOctDigitOrUnderscore)
	case s[0] < '1' || s[0] > '9':
		return false
	}
	i := 1 + digitsOrUnderscores(s[1:])
	if i == len(s) {
		return true
	}
	// Sexagesimal: the groups must run to the end.
	n, ok := sexagesimalGroups(s[i:])
	return ok && i+n == len(s)
}

// isYAML11Float reports whether s is a YAML 1.1 float: with a dot (and an
// exponent with a sign, if any), sexagesimal with a dot, infinite or not a
// number.
func isYAML11Float(s string) bool {
	t, signed := s, false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		t, signed = t[1:], true
	}
	switch {
	case t == "":
		return false
	case t[0] == '.':
		switch rest := t[1:]; rest {
		case "inf", "Inf", "INF":
			return true
		case "nan", "NaN", "NAN":
			return !signed
		default:
			// A leading dot needs a digit after it, and no sign before it.
			if signed || rest == "" || !isDigit(rest[0]) {
				return false
			}
			i := 1 + digitsOrUnderscores(rest[1:])
			return isExponent(rest[i:])
		}
	case !isDigit(t[0]):
		return false
	}
	i := 1 + digitsOrUnderscores(t[1:])
	if i < len(t) && t[i] == ':' {
		n, ok := sexagesimalGroups(t[i:])
		if !ok {
			return false
		}
		i += n
		if i == len(t) || t[i] != '.' {
			return false
		}
		return allBytes(t[i+1:], isDigitOrUnderscore)
	}
	if i == len(t) || t[i] != '.' {
		return false
	}
	i++
	i += digitsOrUnderscores(t[i:])
	return isExponent(t[i:])
}

// sexagesimalGroups measures the run of ":" [0-5]?[0-9] groups that opens
// s: one or more, each of one digit or of two the first of which is at
// most 5, each ending where s ends or at a byte that is not a digit. It
// reports false when s opens with no such group, or with one of more than
// two digits or of two that make more than 59.
func sexagesimalGroups(s string) (int, bool) {
	i := 0
	for i < len(s) && s[i] == ':' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		switch j - i - 1 {
		case 1:
		case 2:
			if s[i+1] > '5' {
				return 0, false
			}
		default:
			return 0, false
		}
		i = j
	}
	return i, i > 0
}

// isExponent reports whether s is empty or an exponent: [eE][-+][0-9]+.
func isExponent(s string) bool {
	if s == "" {
		return true
	}
	return len(s) >= 3 && (s[0] == 'e' || s[0] == 'E') && (s[1] == '-' || s[1] == '+') && allBytes(s[2:], isDigit)
}

// digitsOrUnderscores returns the length of the run of digits and
// underscores that opens s.
func digitsOrUnderscores(s string) int {
	i := 0
	for i < len(s) && isDigitOrUnderscore(s[i]) {
		i++
	}
	return i
}

func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigitOrUnderscore(c byte) bool    { return isDigit(c) || c == '_' }
func isOctDigitOrUnderscore(c byte) bool { return c >= '0' && c <= '7' || c == '_' }
func isBinDigitOrUnderscore(c byte) bool { return c == '0' || c == '1' || c == '_' }
func isHexDigitOrUnderscore(c byte) bool {
	return isDigitOrUnderscore(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// scalarType resolves the type of a scalar: by its explicit tag if it has
// one, as a string if it is quoted or a block scalar, else by the YAML 1.1
// rules. Timestamps count as strings.
func scalarType(n *yaml.Node) Type {
	if n.Style&yaml.TaggedStyle != 0 {
		switch n.ShortTag() {
		case "!!null":
			return TypeNull
		case "!!bool":
			return TypeBool
		case "!!int":
			return TypeInt
		case "!!float":
			return TypeFloat
		}
		return TypeString
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return TypeString
	}
	v := n.Value
	if len(v) > 64 {
		return TypeString // no number, boolean or null is this long
	}
	if v != "" {
		switch c := v[0]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == '~':
		case strings.IndexByte("yYnNtTfFoO", c) >= 0:
		default:
			return TypeString // the common case: a word that starts no literal
		}
	}
	switch {
	case isYAML11Null(v):
		return TypeNull
	case isYAML11Bool(v):
		return TypeBool
	case isYAML11Int(v):
		return TypeInt
	case isYAML11Float(v):
		return TypeFloat
	}
	return TypeString
}

// scalarValue converts a scalar to the Go value of its scalarType: a
// float is a Float, so that 10.0 stays a float.
func scalarValue(n *yaml.Node) any {
	t := scalarType(n)
	if n.Style&yaml.TaggedStyle != 0 && t != TypeString && t != TypeNull {
		var v any
		if err := n.Decode(&v); err == nil {
			switch x := v.(type) {
			case float64:
				if t == TypeFloat {
					return Float(x)
				}
			case uint64:
				return new(big.Int).SetUint64(x)
			}
			return v
		}
		return n.Value
	}
	switch t {
	case TypeNull:
		return nil
	case TypeBool:
		switch n.Value[0] {
		case 'y', 'Y', 't', 'T':
			return true
		case 'o', 'O':
			return len(n.Value) == 2
		}
		return false
	case TypeInt:
		return parseYAML11Int(n.Value)
	case TypeFloat:
		return Float(parseYAML11Float(n.Value))
	}
	return n.Value
}

// parseYAML11Int parses a string isYAML11Int accepts, into an int, or a
// *big.Int beyond int.
func parseYAML11Int(s string) any {
	s = strings.ReplaceAll(s, "_", "")
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg, s = s[0] == '-', s[1:]
	}
	var x big.Int
	switch {
	case strings.Contains(s, ":"):
		for _, part := range strings.Split(s, ":") {
			d, _ := strconv.ParseInt(part, 10, 64)
			x.Mul(&x, big.NewInt(60))
			x.Add(&x, big.NewInt(d))
		}
	case strings.HasPrefix(s, "0b"):
		x.SetString(s[2:], 2)
	case strings.HasPrefix(s, "0x"):
		x.SetString(s[2:], 16)
	case len(s) > 1 && s[0] == '0':
		x.SetString(s[1:], 8)
	default:
		x.SetString(s, 10)
	}
	if neg {
		x.Neg(&x)
	}
	if x.IsInt64() && x.Int64() == int64(int(x.Int64())) {
		return int(x.Int64())
	}
	return &x
}

// parseYAML11Float parses a string isYAML11Float accepts.
func parseYAML11Float(s string) float64 {
	s = strings.ReplaceAll(s, "_", "")
	switch strings.ToLower(strings.TrimLeft(s, "+")) {
	case ".inf":
		return math.Inf(1)
	case "-.inf":
		return math.Inf(-1)
	case ".nan":
		return math.NaN()
	}
	if strings.Contains(s, ":") {
		neg := strings.HasPrefix(s, "-")
		var f float64
		for _, part := range strings.Split(strings.TrimLeft(s, "+-"), ":") {
			d, _ := strconv.ParseFloat(part, 64)
			f = f*60 + d
		}
		if neg {
			f = -f
		}
		return f
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// IsNull reports whether n is a null scalar.
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && scalarType(n) == TypeNull
}

// ScalarText returns the text of a string scalar, after aliases, and
// whether n is one.
func ScalarText(n *yaml.Node) (string, bool) {
	n = Unalias(n)
	if n == nil || n.Kind != yaml.ScalarNode || scalarType(n) != TypeString {
		return "", false
	}
	return n.Value, true
}

// Type is a set of YAML value types: NodeType gives the one of a node, and
// a schema admits a set of them.
type Type uint8

// The YAML value types, each a bit of a Type, and the sets of them that
// schemas use.
const (
	TypeString Type = 1 << iota
	TypeBool
	TypeInt
	TypeFloat
	TypeList
	TypeMap
	TypeNull

	TypeNumber = TypeInt | TypeFloat
	TypeAny    = TypeString | TypeBool | TypeNumber | TypeList | TypeMap | TypeNull
)
