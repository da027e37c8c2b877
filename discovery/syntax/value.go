package syntax

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Decoded front matter is made of these values: nil, bool, int (an int64
// or a *big.Int beyond int), Float, string, []any and *Map. JSON and YAML
// write an integer as an integer, however large, and a Float with a
// fraction.

// Map is a YAML mapping as front matter decodes it: string keys in the
// order the author wrote them, each with a value. Its JSON and YAML forms
// keep that order, and its JSON form decodes back into the same order
// and the same value types. The zero Map is empty and ready to use; a nil
// *Map reads as empty. A Map is not safe for concurrent writes; reads
// never change it.
//
// Front matter's mappings are small: a Map holds its entries in order and
// looks through them, and keeps an index of their positions only while it
// has more than smallMap keys (so that two Maps with the same keys and
// values in the same order are deeply equal).
type Map struct {
	entries []mapEntry
	index   map[string]int // position in entries by key; nil unless more than smallMap
}

// mapEntry is one key of a Map and its value.
type mapEntry struct {
	k string
	v any
}

// smallMap is the most keys a Map looks through without an index.
const smallMap = 8

// NewMap returns an empty Map with room for n keys.
func NewMap(n int) *Map {
	return &Map{entries: make([]mapEntry, 0, n)}
}

// find returns the position of key k in m's entries, or -1.
func (m *Map) find(k string) int {
	if m.index != nil {
		if i, ok := m.index[k]; ok {
			return i
		}
		return -1
	}
	for i := range m.entries {
		if m.entries[i].k == k {
			return i
		}
	}
	return -1
}

// Len is the number of keys of m.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.entries)
}

// IsZero reports whether m is empty, so that a field tagged omitzero
// leaves out an empty Map as omitempty leaves out an empty map.
func (m *Map) IsZero() bool { return m.Len() == 0 }

// Get returns the value of key k and whether m has it.
func (m *Map) Get(k string) (any, bool) {
	if m == nil {
		return nil, false
	}
	if i := m.find(k); i >= 0 {
		return m.entries[i].v, true
	}
	return nil, false
}

// Value returns the value of key k, nil when m has none.
func (m *Map) Value(k string) any {
	v, _ := m.Get(k)
	return v
}

// Set sets the value of key k. A key m has keeps its place; a new key
// goes last.
func (m *Map) Set(k string, v any) {
	if i := m.find(k); i >= 0 {
		m.entries[i].v = v
		return
	}
	m.entries = append(m.entries, mapEntry{k, v})
	switch {
	case m.index != nil:
		m.index[k] = len(m.entries) - 1
	case len(m.entries) > smallMap:
		m.reindex()
	}
}

// reindex makes the index of m's entries from scratch.
func (m *Map) reindex() {
	m.index = make(map[string]int, len(m.entries))
	for i, e := range m.entries {
		m.index[e.k] = i
	}
}

// Delete removes key k, if m has it; the other keys keep their order.
func (m *Map) Delete(k string) {
	if m == nil {
		return
	}
	i := m.find(k)
	if i < 0 {
		return
	}
	m.entries = slices.Delete(m.entries, i, i+1)
	switch {
	case len(m.entries) <= smallMap:
		m.index = nil
	case m.index != nil:
		m.reindex()
	}
}

// Keys returns the keys of m in order, in a new slice.
func (m *Map) Keys() []string {
	if m == nil {
		return nil
	}
	keys := make([]string, len(m.entries))
	for i, e := range m.entries {
		keys[i] = e.k
	}
	return keys
}

// All yields the keys of m and their values in order. Setting the value
// of a key m has while ranging is fine; adding or deleting keys is not.
func (m *Map) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		if m == nil {
			return
		}
		for i := 0; i < len(m.entries); i++ {
			if !yield(m.entries[i].k, m.entries[i].v) {
				return
			}
		}
	}
}

// MarshalJSON writes m as a JSON object, its keys in order.
func (m *Map) MarshalJSON() ([]byte, error) {
	return appendJSON(nil, m)
}

// UnmarshalJSON reads a JSON object into m, which it replaces: keys keep
// their order, objects become *Map, arrays []any, numbers with a fraction
// Float (as MarshalJSON writes them: 10.0, 1.0e+21), integers int (int64
// or *big.Int beyond int).
func (m *Map) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("decode mapping: %w", err)
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("decode mapping: %v is not an object", tok)
	}
	out, err := jsonObject(dec, 1)
	if err != nil {
		return fmt.Errorf("decode mapping: %w", err)
	}
	*m = *out
	return nil
}

// maxJSONDepth bounds the nesting UnmarshalJSON follows.
const maxJSONDepth = MaxValueDepth

var errJSONDepth = errors.New("value nested too deep")

// jsonObject reads the members of an object whose "{" dec has read.
func jsonObject(dec *json.Decoder, depth int) (*Map, error) {
	m := &Map{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		v, err := jsonValue(dec, depth)
		if err != nil {
			return nil, err
		}
		m.Set(k, v)
	}
	if _, err := dec.Token(); err != nil { // "}"
		return nil, err
	}
	return m, nil
}

func jsonValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxJSONDepth {
			return nil, errJSONDepth
		}
		if t == '{' {
			return jsonObject(dec, depth+1)
		}
		out := []any{}
		for dec.More() {
			v, err := jsonValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if _, err := dec.Token(); err != nil { // "]"
			return nil, err
		}
		return out, nil
	case json.Number:
		return jsonNumber(string(t))
	}
	return tok, nil // nil, bool or string
}

// jsonNumber returns the value a number of MarshalJSON's output stands
// for: an integer when it has no fraction and no exponent, else a Float.
func jsonNumber(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			if int64(int(i)) == i {
				return int(i), nil
			}
			return i, nil
		}
		if x, ok := new(big.Int).SetString(s, 10); ok {
			return x, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return Float(f), err
}

// MarshalYAML returns m as a YAML mapping node, its keys in order.
func (m *Map) MarshalYAML() (any, error) {
	return yamlValue(m)
}

// yamlValue returns the node of a decoded value.
func yamlValue(v any) (*yaml.Node, error) {
	switch v := v.(type) {
	case *Map:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: make([]*yaml.Node, 0, 2*v.Len())}
		for k, e := range v.All() {
			kn, err := yamlValue(k)
			if err != nil {
				return nil, err
			}
			en, err := yamlValue(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, kn, en)
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: make([]*yaml.Node, 0, len(v))}
		for _, e := range v {
			en, err := yamlValue(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, en)
		}
		return n, nil
	case Float:
		return v.yamlNode(), nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}, nil
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v)}, nil
	case int64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v, 10)}, nil
	case *big.Int:
		// Untagged: go-yaml takes integers beyond 64 bits for floats and
		// would tag it, where YAML 1.1 reads the plain digits as an int.
		return &yaml.Node{Kind: yaml.ScalarNode, Value: v.String()}, nil
	case string:
		if plainWord(v) {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}, nil
		}
	}
	// Strings and the rest as the encoder writes them on their own, so
	// that they are quoted (or written as block scalars) as it would; and
	// a string YAML 1.1 would read as something else ("0b_") quoted too.
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok && n.Kind == yaml.ScalarNode && n.Style == 0 &&
		scalarType(&yaml.Node{Kind: yaml.ScalarNode, Value: s}) != TypeString {
		n.Style = yaml.DoubleQuotedStyle
	}
	return &n, nil
}

// plainWord reports whether s is a string the YAML encoder writes plain
// and as it is: ASCII letters, digits, spaces (not at either end) and
// "_-./", starting with a letter, and no word that YAML 1.1 reads as a
// boolean or null ("yes", "y", "Null", …).
func plainWord(s string) bool {
	if s == "" || s[len(s)-1] == ' ' || !('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == ' ', c == '_', c == '-', c == '.', c == '/':
		default:
			return false
		}
	}
	switch s {
	case "y", "Y", "n", "N":
		return false
	}
	return !isYAML11Bool(s) && !isYAML11Null(s)
}

// Float is a YAML float (10.0, 0.7, 1.5e+3): a number that the loaders
// reading front matter at run time read as a float, even when it has no
// fraction. Its JSON and YAML forms read back as a float: 10.0, not 10.
type Float float64

// String returns f as MarshalJSON writes it, or for an infinity or NaN as
// YAML writes it (.inf, -.inf, .nan).
func (f Float) String() string {
	return string(f.appendText(nil))
}

// appendText appends the shortest text that reads back as f and as a
// float, both in JSON and in YAML 1.1: encoding/json's text with a ".0"
// where it has no fraction (10.0, 1.0e+21, 1.5e-7).
func (f Float) appendText(b []byte) []byte {
	x := float64(f)
	switch {
	case math.IsInf(x, 1):
		return append(b, ".inf"...)
	case math.IsInf(x, -1):
		return append(b, "-.inf"...)
	case math.IsNaN(x):
		return append(b, ".nan"...)
	}
	start := len(b)
	format := byte('f')
	if abs := math.Abs(x); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	mant := len(b)
	if format == 'e' {
		// e-09 → e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		mant = start + bytes.IndexByte(b[start:], 'e')
	}
	if bytes.IndexByte(b[start:mant], '.') < 0 {
		b = slices.Insert(b, mant, '.', '0')
	}
	return b
}

// MarshalJSON writes f as a JSON number with a fraction or an exponent
// (10.0, 1.0e+21). JSON has no infinities and no NaN: those are written
// as the strings ".inf", "-.inf" and ".nan".
func (f Float) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		return strconv.AppendQuote(nil, f.String()), nil
	}
	return f.appendText(nil), nil
}

// MarshalYAML returns f as a YAML float scalar.
func (f Float) MarshalYAML() (any, error) {
	return f.yamlNode(), nil
}

func (f Float) yamlNode() *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: f.String()}
}

// appendJSON appends the JSON of a decoded value, writing strings as
// encoding/json does without HTML escaping (an encoder that escapes HTML
// escapes the whole output of MarshalJSON afterwards).
func appendJSON(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case *Map:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '{')
		for i, e := range v.entries {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, e.k)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, e.v); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case string:
		return appendJSONString(b, v), nil
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case *big.Int:
		return v.Append(b, 10), nil
	case Float:
		t, err := v.MarshalJSON()
		return append(b, t...), err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// appendJSONString appends s as a JSON string, as encoding/json writes it
// without HTML escaping.
func appendJSONString(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// MaxValueDepth bounds the nesting of a decoded front matter value, as the
// parser bounds the documents it reads.
const MaxValueDepth = 256
