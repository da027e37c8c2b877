package bundle

import (
	"bytes"
	"encoding/json"
	"iter"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// A decoded YAML value is one of: nil, bool, int64, *big.Int (an integer
// beyond int64), Float, string, []any and *Map. Scalars are resolved as
// PyYAML's safe loader resolves them (YAML 1.1: yes/no/on/off are booleans,
// 010 is octal, 1e3 is a string), because that is what the runtime reads;
// a timestamp stays the string the author wrote.

// Map is a YAML mapping: string keys in the order the author wrote them
// (a repeated key keeps its first place and its last value, as a Python
// dict does), each with a value. A Map is immutable once the package has
// built it; a nil *Map reads as empty.
type Map struct {
	keys []string
	vals []any
}

// Len returns the number of keys of m.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.keys)
}

// Get returns the value of key k and whether m has it.
func (m *Map) Get(k string) (any, bool) {
	if m == nil {
		return nil, false
	}
	for i, key := range m.keys {
		if key == k {
			return m.vals[i], true
		}
	}
	return nil, false
}

// Value returns the value of key k, or nil.
func (m *Map) Value(k string) any {
	v, _ := m.Get(k)
	return v
}

// Keys returns m's keys in order (a new slice).
func (m *Map) Keys() []string {
	if m == nil {
		return nil
	}
	return append([]string(nil), m.keys...)
}

// All yields m's keys and values in order.
func (m *Map) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		if m == nil {
			return
		}
		for i, k := range m.keys {
			if !yield(k, m.vals[i]) {
				return
			}
		}
	}
}

// MarshalJSON writes m as a JSON object in key order.
func (m *Map) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// MapBuilder builds a Map. The zero value is ready to use; Map hands the
// result out and the builder must not be used again.
type MapBuilder struct {
	m Map
}

// Set sets key k to v: a new key goes last, a known one keeps its place.
func (b *MapBuilder) Set(k string, v any) {
	for i, key := range b.m.keys {
		if key == k {
			b.m.vals[i] = v
			return
		}
	}
	b.m.keys = append(b.m.keys, k)
	b.m.vals = append(b.m.vals, v)
}

// Map returns the built Map.
func (b *MapBuilder) Map() *Map {
	m := b.m
	b.m = Map{}
	return &m
}

// Float is a YAML float. Its JSON form keeps a fraction (1.0, not 1), as
// Python's json module writes a float.
type Float float64

// MarshalJSON writes f with a fraction; an infinity or NaN, which JSON
// cannot hold, is written as a string (".inf", "-.inf", ".nan").
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsInf(x, 1):
		return []byte(`".inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-.inf"`), nil
	case math.IsNaN(x):
		return []byte(`".nan"`), nil
	}
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return []byte(s), nil
}

// writeJSON writes v as JSON, maps in key order.
func writeJSON(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case *Map:
		if x == nil {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			if err := writeJSON(b, x.vals[i]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		out, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(out)
	}
	return nil
}

// TypeName names the type of a decoded value as a bundle author knows it.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int64, *big.Int:
		return "an integer"
	case Float:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case *Map:
		return "a mapping"
	}
	return "a value"
}

// Truthy reports whether Python would take v as true (a non-empty string,
// list or mapping, a non-zero number, true).
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case *big.Int:
		return x.Sign() != 0
	case Float:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case *Map:
		return x.Len() > 0
	}
	return true
}

// Key returns the canonical text of v: two values have the same key when
// Python would find them equal and of the same type (json.dumps with sorted
// keys, prefixed by the type), as the runtime's list merge deduplicates.
func Key(v any) string {
	var b strings.Builder
	canonical(&b, v)
	return b.String()
}

func canonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("n:")
	case bool:
		b.WriteString("b:")
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteString("i:")
		b.WriteString(strconv.FormatInt(x, 10))
	case *big.Int:
		b.WriteString("i:")
		b.WriteString(x.String())
	case Float:
		b.WriteString("f:")
		b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 64))
	case string:
		b.WriteString("s:")
		b.WriteString(strconv.Quote(x))
	case []any:
		b.WriteString("l[")
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			canonical(b, e)
		}
		b.WriteByte(']')
	case *Map:
		keys := x.Keys()
		sort.Strings(keys)
		b.WriteString("m{")
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			canonical(b, x.Value(k))
		}
		b.WriteByte('}')
	}
}

// The implicit resolvers of YAML 1.1 as PyYAML's safe loader applies them
// to plain scalars.
var (
	yamlBool  = map[string]bool{"yes": true, "Yes": true, "YES": true, "no": false, "No": false, "NO": false, "true": true, "True": true, "TRUE": true, "false": false, "False": false, "FALSE": false, "on": true, "On": true, "ON": true, "off": false, "Off": false, "OFF": false}
	yamlNull  = map[string]bool{"": true, "~": true, "null": true, "Null": true, "NULL": true}
	yamlInt   = lazyRegexp(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	yamlFloat = lazyRegexp(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
)

// resolvePlain resolves a plain scalar as PyYAML does.
func resolvePlain(s string) any {
	if yamlNull[s] {
		return nil
	}
	if b, ok := yamlBool[s]; ok {
		return b
	}
	if s == "" {
		return s
	}
	switch c := s[0]; {
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
	default:
		return s
	}
	if yamlInt().MatchString(s) {
		if v, ok := parseYAMLInt(s); ok {
			return v
		}
	}
	if yamlFloat().MatchString(s) {
		return Float(parseYAMLFloat(s))
	}
	return s
}

// parseYAMLInt converts a YAML 1.1 integer (the int pattern matched).
func parseYAMLInt(s string) (any, bool) {
	t := strings.ReplaceAll(s, "_", "")
	sign := ""
	if t != "" && (t[0] == '-' || t[0] == '+') {
		if t[0] == '-' {
			sign = "-"
		}
		t = t[1:]
	}
	n := new(big.Int)
	switch {
	case t == "0":
	case strings.HasPrefix(t, "0b"):
		if _, ok := n.SetString(t[2:], 2); !ok {
			return nil, false
		}
	case strings.HasPrefix(t, "0x"):
		if _, ok := n.SetString(t[2:], 16); !ok {
			return nil, false
		}
	case t[0] == '0':
		if _, ok := n.SetString(t[1:], 8); !ok {
			return nil, false
		}
	case strings.Contains(t, ":"):
		for _, part := range strings.Split(t, ":") {
			d, err := strconv.Atoi(part)
			if err != nil {
				return nil, false
			}
			n.Mul(n, big.NewInt(60))
			n.Add(n, big.NewInt(int64(d)))
		}
	default:
		if _, ok := n.SetString(t, 10); !ok {
			return nil, false
		}
	}
	if sign == "-" {
		n.Neg(n)
	}
	if n.IsInt64() {
		return n.Int64(), true
	}
	return n, true
}

// parseYAMLFloat converts a YAML 1.1 float (the float pattern matched).
func parseYAMLFloat(s string) float64 {
	t := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if t != "" && (t[0] == '-' || t[0] == '+') {
		if t[0] == '-' {
			sign = -1
		}
		t = t[1:]
	}
	switch t {
	case ".inf":
		return sign * math.Inf(1)
	case ".nan":
		return math.NaN()
	}
	if strings.Contains(t, ":") {
		parts := strings.Split(t, ":")
		x := 0.0
		for i, p := range parts {
			d, _ := strconv.ParseFloat(p, 64)
			if i < len(parts)-1 {
				x = x*60 + d
			} else {
				x = x*60 + d
			}
		}
		return sign * x
	}
	x, _ := strconv.ParseFloat(t, 64)
	return sign * x
}
