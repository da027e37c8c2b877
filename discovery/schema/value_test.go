package schema_test

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// mapOf builds a Map from keys and values, in order.
func mapOf(kv ...any) *syntax.Map {
	m := syntax.NewMap(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		m.Set(kv[i].(string), kv[i+1])
	}
	return m
}

// bigInt is the integer of decimal text s.
func bigInt(s string) *big.Int {
	x, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("bad integer " + s)
	}
	return x
}

// jsonText is v as JSON, for messages.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	return string(b)
}

// decodeFront decodes the front matter of a profile.
func decodeFront(t *testing.T, yamlText string) *syntax.Map {
	t.Helper()
	d := schema.ParseDocument("profiles/p.md", []byte("---\n"+yamlText+"---\n"), schema.DocProfile, schema.Options{})
	m, err := d.Decode()
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return m
}

func TestMap(t *testing.T) {
	var m syntax.Map
	m.Set("b", 1)
	m.Set("a", 2)
	m.Set("c", 3)
	m.Set("b", 4) // keeps its place
	if got := m.Keys(); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Errorf("Keys %q", got)
	}
	if v, ok := m.Get("b"); !ok || v != 4 || m.Len() != 3 {
		t.Errorf("Get b = %v, %v; Len %d", v, ok, m.Len())
	}
	m.Delete("a")
	m.Delete("nope")
	m.Set("a", 5) // a deleted key comes back last
	var keys []string
	var vals []any
	for k, v := range m.All() {
		keys = append(keys, k)
		vals = append(vals, v)
	}
	if !slices.Equal(keys, []string{"b", "c", "a"}) || !reflect.DeepEqual(vals, []any{4, 3, 5}) {
		t.Errorf("All %q %v", keys, vals)
	}
	if _, ok := m.Get("nope"); ok || m.Value("nope") != nil {
		t.Error("a missing key reads present")
	}
	// Keys returns a copy.
	m.Keys()[0] = "x"
	if m.Keys()[0] != "b" {
		t.Error("Keys shares the Map's slice")
	}

	var none *syntax.Map
	if none.Len() != 0 || !none.IsZero() || none.Keys() != nil || none.Value("a") != nil {
		t.Error("a nil Map does not read empty")
	}
	none.Delete("a")
	for range none.All() {
		t.Error("a nil Map yields keys")
	}
	if (&syntax.Map{}).IsZero() != true || m.IsZero() {
		t.Error("IsZero")
	}
}

// TestMapMany checks a Map as it grows past the keys it looks through
// and shrinks back: every key found, in order, and two Maps with the same
// entries deeply equal however they were made.
func TestMapMany(t *testing.T) {
	const n = 40
	m := syntax.NewMap(2)
	var want []string
	for i := range n {
		k := strings.Repeat("k", i%7+1) + string(rune('a'+i%26)) + string(rune('A'+i/26))
		m.Set(k, i)
		m.Set(k, i*10) // keeps its place
		want = append(want, k)
		for j, w := range want {
			if v, ok := m.Get(w); !ok || v != j*10 {
				t.Fatalf("after %d keys, Get %s = %v, %v; want %d", i+1, w, v, ok, j*10)
			}
		}
		if _, ok := m.Get("missing"); ok {
			t.Fatalf("after %d keys, a missing key reads present", i+1)
		}
	}
	if got := m.Keys(); !slices.Equal(got, want) {
		t.Fatalf("Keys %q, want %q", got, want)
	}
	for i := n - 1; i >= 1; i-- {
		m.Delete(want[i])
		want = want[:i]
		if got := m.Keys(); !slices.Equal(got, want) {
			t.Fatalf("after deleting to %d keys, Keys %q", i, got)
		}
		for j, w := range want {
			if v, ok := m.Get(w); !ok || v != j*10 {
				t.Fatalf("after deleting to %d keys, Get %s = %v, %v", i, w, v, ok)
			}
		}
		built := syntax.NewMap(0)
		for _, w := range want {
			built.Set(w, m.Value(w))
		}
		if !reflect.DeepEqual(m, built) {
			t.Fatalf("after deleting to %d keys, the Map differs from one built with its entries", i)
		}
	}
}

func TestFloatText(t *testing.T) {
	tenth := 0.1
	tests := []struct {
		f    float64
		want string
	}{
		{10, "10.0"},
		{0.7, "0.7"},
		{1, "1.0"},
		{-2, "-2.0"},
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1500, "1500.0"},
		{tenth + 0.2, "0.30000000000000004"},
		{1e20, "100000000000000000000.0"},
		{1e21, "1.0e+21"},
		{1.5e300, "1.5e+300"},
		{1e-6, "0.000001"},
		{1.5e-7, "1.5e-7"},
		{-1e-10, "-1.0e-10"},
		{math.Inf(1), ".inf"},
		{math.Inf(-1), "-.inf"},
		{math.NaN(), ".nan"},
	}
	for _, tc := range tests {
		f := syntax.Float(tc.f)
		if got := f.String(); got != tc.want {
			t.Errorf("%v: String %q, want %q", tc.f, got, tc.want)
		}
		// The YAML text reads back as the same float.
		y, err := yaml.Marshal(mapOf("x", f))
		if err != nil {
			t.Fatal(err)
		}
		if string(y) != "x: "+tc.want+"\n" {
			t.Errorf("%v: YAML %q", tc.f, y)
		}
		back := decodeFront(t, string(y)).Value("x")
		if g, ok := back.(syntax.Float); !ok || !(g == f || math.IsNaN(tc.f) && math.IsNaN(float64(g))) ||
			math.Signbit(float64(g)) != math.Signbit(tc.f) {
			t.Errorf("%v: YAML reads back as %#v", tc.f, back)
		}
		// The JSON too, but for what JSON has no number for.
		j, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if math.IsInf(tc.f, 0) || math.IsNaN(tc.f) {
			if string(j) != `"`+tc.want+`"` {
				t.Errorf("%v: JSON %s", tc.f, j)
			}
			continue
		}
		if string(j) != tc.want {
			t.Errorf("%v: JSON %s, want %s", tc.f, j, tc.want)
		}
		var m syntax.Map
		if err := json.Unmarshal([]byte(`{"x":`+string(j)+`}`), &m); err != nil || m.Value("x") != f {
			t.Errorf("%v: JSON reads back as %#v, %v", tc.f, m.Value("x"), err)
		}
	}
}

// TestDecodeOrderAndNumbers: decoded front matter keeps the author's key
// order and the YAML type of its numbers, in JSON and in YAML.
func TestDecodeOrderAndNumbers(t *testing.T) {
	front := decodeFront(t, `profile:
  name: p
  version: 1.0.0
  description: d
zeta:
  budget_limit: 10.0
  temperature: 0.7
  retries: 3
  big: 123456789012345678901234567890
  scale: 1.0
alpha: [1, 1.0, "1.0", 1e3]
base: &b {y: 1, x: 2}
merged:
  first: 0
  <<: *b
  x: 3
  last: 4
dup: 1
dup: 2
`)
	wantJSON := `{"profile":{"name":"p","version":"1.0.0","description":"d"},` +
		`"zeta":{"budget_limit":10.0,"temperature":0.7,"retries":3,"big":123456789012345678901234567890,"scale":1.0},` +
		`"alpha":[1,1.0,"1.0","1e3"],"base":{"y":1,"x":2},"merged":{"first":0,"y":1,"x":3,"last":4},"dup":2}`
	if got := jsonText(t, front); got != wantJSON {
		t.Errorf("JSON\n got %s\nwant %s", got, wantJSON)
	}
	var back syntax.Map
	if err := json.Unmarshal([]byte(wantJSON), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, front) {
		t.Errorf("JSON reads back as %s", jsonText(t, &back))
	}
	y, err := yaml.Marshal(front)
	if err != nil {
		t.Fatal(err)
	}
	wantYAML := `profile:
    name: p
    version: 1.0.0
    description: d
zeta:
    budget_limit: 10.0
    temperature: 0.7
    retries: 3
    big: 123456789012345678901234567890
    scale: 1.0
alpha:
    - 1
    - 1.0
    - "1.0"
    - "1e3"
base:
    "y": 1
    x: 2
merged:
    first: 0
    "y": 1
    x: 3
    last: 4
dup: 2
`
	if string(y) != wantYAML {
		t.Errorf("YAML\n got %s\nwant %s", y, wantYAML)
	}
}

// TestDecodeRepeatedKeys: a key written twice takes its last value in
// its first place, with merges or without, and an alias as a key is its
// anchor's text.
func TestDecodeRepeatedKeys(t *testing.T) {
	front := decodeFront(t, `plain: {a: 1, b: 2, a: {c: 3}, d: 4, b: 5}
anchored: &k key
keys: {*k : 1, other: 2, key: 3}
base: &b {m: 1}
merged: {a: 1, <<: *b, b: 2, a: 3}
`)
	want := `{"plain":{"a":{"c":3},"b":5,"d":4},"anchored":"key","keys":{"key":3,"other":2},` +
		`"base":{"m":1},"merged":{"a":3,"m":1,"b":2}}`
	if got := jsonText(t, front); got != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
}

// TestMapJSONAsMaps: a Map's JSON is what encoding/json writes for a map
// with the same single key, whatever the text.
func TestMapJSONAsMaps(t *testing.T) {
	texts := []string{"", "plain", "a <b> & c", "quote \" and \\ backslash", "tab\tnew\nline", "\x00\x1f",
		"é ü 日本", "line\u2028sep\u2029", "bad \xff utf-8", "emoji 😀"}
	for _, s := range texts {
		for _, v := range []any{s, []any{s, 1, true, nil}} {
			got := jsonText(t, mapOf(s, v))
			want := jsonText(t, map[string]any{s: v})
			if got != want {
				t.Errorf("%q: JSON %s, want %s", s, got, want)
			}
		}
		// Without HTML escaping too.
		var a, b strings.Builder
		for w, v := range map[*strings.Builder]any{&a: mapOf("k", s), &b: map[string]any{"k": s}} {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
		}
		if a.String() != b.String() {
			t.Errorf("%q: unescaped JSON %s, want %s", s, a.String(), b.String())
		}
	}
}

// TestMapYAMLAsMaps: a Map's strings are quoted in YAML as the encoder
// quotes them in a map.
func TestMapYAMLAsMaps(t *testing.T) {
	texts := []string{"", "plain", "two words", "yes", "y", "N", "off", "null", "Null", "~", "true", "1e3", "010", "1:30",
		"0x1F", ".inf", "a: b", "a #b", "- x", "@x", "`x`", " lead", "trail ", "multi\nline\n", "path/to/x.md",
		"foundation:base", "1.0.0", "v1.0", "<<", "=", "é", "tab\there", "bad \xff"}
	for _, s := range texts {
		got, err := yaml.Marshal(mapOf("k", s, s, 1))
		if err != nil {
			t.Fatal(err)
		}
		want1, _ := yaml.Marshal(map[string]any{"k": s})
		want2, _ := yaml.Marshal(map[string]any{s: 1})
		if string(got) != string(want1)+string(want2) {
			t.Errorf("%q: YAML %q, want %q", s, got, string(want1)+string(want2))
		}
	}
}

func TestMapUnmarshalJSONErrors(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 300) + "1" + strings.Repeat("}", 300)
	for _, in := range []string{`[1]`, `"x"`, `{"a":}`, deep} {
		var m syntax.Map
		if err := json.Unmarshal([]byte(in), &m); err == nil {
			t.Errorf("%.20s: no error", in)
		}
	}
	var r struct {
		M *syntax.Map `json:"m"`
	}
	if err := json.Unmarshal([]byte(`{"m":null}`), &r); err != nil || r.M != nil {
		t.Errorf("null reads as %v, %v", r.M, err)
	}
}

// TestMergeOrder: a merged profile has its parent's keys in the parent's
// order, then the child's new keys in the child's order, at every level;
// a section the child excludes with "all" and sets again goes last.
func TestMergeOrder(t *testing.T) {
	parent := decodeFront(t, `profile: {name: base, version: 1.0.0, description: d}
session:
  orchestrator: {module: loop, config: {max: 3, ratio: 0.5}}
  context: {module: ctx}
providers: [{module: p1}]
tools:
  - {module: web, config: {b: 1, a: 2}}
ui: {theme: dark, width: 80}
`)
	child := decodeFront(t, `profile: {name: child, version: 2.0.0, description: d, extends: x:base}
exclude: {providers: all}
ui: {width: 100, color: true}
session:
  orchestrator: {config: {ratio: 1.0, extra: 1}}
tools:
  - {module: shell}
  - {module: web, config: {c: 3, a: 4}}
providers: [{module: p2}]
agents: all
`)
	merged := resolve.MergeProfile(parent, child)
	want := `{"profile":{"name":"child","version":"2.0.0","description":"d","extends":"x:base"},` +
		`"session":{"orchestrator":{"module":"loop","config":{"max":3,"ratio":1.0,"extra":1}},"context":{"module":"ctx"}},` +
		`"tools":[{"module":"web","config":{"b":1,"a":4,"c":3}},{"module":"shell"}],` +
		`"ui":{"theme":"dark","width":100,"color":true},` +
		`"providers":[{"module":"p2"}],"agents":"all"}`
	if got := jsonText(t, merged); got != want {
		t.Errorf("merged\n got %s\nwant %s", got, want)
	}
	// Neither side changed.
	if jsonText(t, parent.Value("ui")) != `{"theme":"dark","width":80}` || child.Value("exclude") == nil {
		t.Error("MergeProfile changed its arguments")
	}
}

// FuzzMapJSON: whatever JSON object a Map reads, it writes JSON that reads
// back as the same Map and writes the same bytes.
func FuzzMapJSON(f *testing.F) {
	f.Add(`{"b":1,"a":[1.0,2,"x",null,true,{"z":{}}],"big":123456789012345678901234567890}`)
	f.Add(`{"f":1E5,"g":-0,"h":1.5e-7,"dup":1,"dup":2}`)
	f.Add(`{"s":"\u003c\u2028\ud800","":[]}`)
	f.Fuzz(func(t *testing.T, in string) {
		var m syntax.Map
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			return
		}
		once, err := json.Marshal(&m)
		if err != nil {
			t.Fatalf("marshal %s: %v", in, err)
		}
		var back syntax.Map
		if err := json.Unmarshal(once, &back); err != nil {
			t.Fatalf("%s does not read back: %v", once, err)
		}
		twice, err := json.Marshal(&back)
		if err != nil || string(twice) != string(once) {
			t.Fatalf("not stable:\n%s\n%s (%v)", once, twice, err)
		}
		// Its YAML reads back as the same values, but for what YAML
		// cannot hold (bytes that are not UTF-8) or holds otherwise (keys
		// that merge or make a document too large).
		y, err := yaml.Marshal(&back)
		if err != nil {
			t.Fatalf("YAML of %s: %v", once, err)
		}
		if !utf8.Valid(once) || strings.Contains(string(once), `"<<"`) || len(y) > 1<<16 {
			return
		}
		d := schema.ParseDocument("profiles/p.md", append(append([]byte("---\n"), y...), "---\n"...), schema.DocProfile, schema.Options{})
		if slices.ContainsFunc(d.Diagnostics, func(g diag.Diagnostic) bool { return strings.HasPrefix(g.Code, "frontmatter/") }) {
			return // nested deeper than front matter may be
		}
		fromYAML, err := d.Decode()
		if err != nil {
			t.Fatalf("YAML %s does not decode: %v", y, err)
		}
		if again, _ := json.Marshal(fromYAML); string(again) != string(once) {
			t.Fatalf("YAML of %s reads back as %s:\n%s", once, again, y)
		}
	})
}
