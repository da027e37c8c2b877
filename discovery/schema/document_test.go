package schema_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// A fixture in testdata/documents is a txtar archive. Its comment names
// the document kind ("kind: profile") and may lower unknown keys
// ("unknown-key: warning"); it holds one document and a "want" file with
// one line per expected diagnostic:
//
//	line:col code severity ["message substring"]
//
// with 1-based line and column, the column counted in UTF-16 code units.
type fixture struct {
	name string
	kind schema.DocKind
	opts schema.Options
	file txtar.File
	want []wantDiag
}

type wantDiag struct {
	line, col int
	code      string
	severity  diag.Severity
	contains  string
}

func (w wantDiag) String() string {
	return fmt.Sprintf("%d:%d %s %s %q", w.line, w.col, w.code, w.severity, w.contains)
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	files, err := filepath.Glob("testdata/documents/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var out []fixture
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		fx := fixture{name: strings.TrimSuffix(filepath.Base(file), ".txtar")}
		for _, line := range strings.Split(string(ar.Comment), "\n") {
			if v, ok := strings.CutPrefix(line, "kind: "); ok {
				fx.kind = schema.DocKind(v)
			}
			if v, ok := strings.CutPrefix(line, "unknown-key: "); ok {
				fx.opts.UnknownKeySeverity = diag.Severity(v)
			}
		}
		for _, f := range ar.Files {
			if f.Name != "want" {
				fx.file = f
				continue
			}
			for _, line := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				if line == "" {
					continue
				}
				fx.want = append(fx.want, parseWant(t, file, line))
			}
		}
		if fx.kind == "" || fx.file.Name == "" {
			t.Fatalf("%s: needs a kind and a document", file)
		}
		out = append(out, fx)
	}
	return out
}

func parseWant(t testing.TB, file, line string) wantDiag {
	t.Helper()
	var w wantDiag
	head, quoted, _ := strings.Cut(line, ` "`)
	if quoted != "" {
		s, err := strconv.Unquote(`"` + quoted)
		if err != nil {
			t.Fatalf("%s: bad want line %q: %v", file, line, err)
		}
		w.contains = s
	}
	var sev string
	if _, err := fmt.Sscanf(head, "%d:%d %s %s", &w.line, &w.col, &w.code, &sev); err != nil {
		t.Fatalf("%s: bad want line %q: %v", file, line, err)
	}
	w.severity = diag.Severity(sev)
	return w
}

func TestDocumentFixtures(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			d := schema.ParseDocument(fx.file.Name, fx.file.Data, fx.kind, fx.opts)
			got := slices.Clone(d.Diagnostics)
			var missing []wantDiag
			for _, w := range fx.want {
				i := slices.IndexFunc(got, func(g diag.Diagnostic) bool {
					return g.Range.Start.Line+1 == w.line && g.Range.Start.Character+1 == w.col &&
						g.Code == w.code && g.Severity == w.severity && strings.Contains(g.Message, w.contains)
				})
				if i < 0 {
					missing = append(missing, w)
					continue
				}
				got = slices.Delete(got, i, i+1)
			}
			for _, w := range missing {
				t.Errorf("missing diagnostic %v", w)
			}
			for _, g := range got {
				t.Errorf("unexpected diagnostic %s", g)
			}
			if t.Failed() {
				for _, g := range d.Diagnostics {
					t.Logf("got %s", g)
				}
			}
		})
	}
}

// TestFixturesCoverEveryCode checks that each code the document parser
// emits has a fixture.
func TestFixturesCoverEveryCode(t *testing.T) {
	emitted := []string{
		diag.CodeFrontMatterMissing, diag.CodeFrontMatterUnterminated,
		diag.CodeFrontMatterSyntax, diag.CodeFrontMatterNotMapping,
		diag.CodeFrontMatterInCodeFence, diag.CodeFrontMatterTooLarge,
		diag.CodeFrontMatterEncoding,
		diag.CodeUnknownKey, diag.CodeRequiredKey, diag.CodeWrongType,
		diag.CodeInvalidValue, diag.CodeNameMismatch, diag.CodeDuplicateKey,
		diag.CodeBundleLoadFailed,
	}
	seen := map[string]bool{}
	for _, fx := range loadFixtures(t) {
		for _, w := range fx.want {
			seen[w.code] = true
		}
	}
	for _, c := range emitted {
		if !seen[c] {
			t.Errorf("no fixture expects %s", c)
		}
	}
	for c := range seen {
		if !slices.ContainsFunc(diag.Codes, func(ci diag.CodeInfo) bool { return ci.Code == c }) {
			t.Errorf("fixture code %s is not in diag.Codes", c)
		}
	}
}

// TestYAMLColumnsCountRunes pins what NodeRange relies on: go-yaml counts
// columns in runes, not bytes or UTF-16 units, and breaks lines at LS.
func TestYAMLColumnsCountRunes(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("😀é: x\nb: [😀é, y]\u2028c: 1\n"), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Content[0]
	tests := []struct {
		node      *yaml.Node
		line, col int
	}{
		{m.Content[1], 1, 5},            // x: after 2 runes, 6 bytes, 3 UTF-16 units
		{m.Content[3].Content[1], 2, 9}, // y
		{m.Content[4], 3, 1},            // c: LS is a line break to go-yaml
	}
	for _, tc := range tests {
		if tc.node.Line != tc.line || tc.node.Column != tc.col {
			t.Errorf("%q at %d:%d, want %d:%d", tc.node.Value, tc.node.Line, tc.node.Column, tc.line, tc.col)
		}
	}
}

func TestUTF16Ranges(t *testing.T) {
	src := "---\nname: wide\ndescription: \"😀 日本語\"\nmodel: [😀]\n---\n"
	d := schema.ParseDocument("agents/wide.md", []byte(src), schema.DocAgent, schema.Options{})
	if r := d.NodeRange(d.Lookup("description")); r != (diag.Range{
		Start: diag.Position{Line: 2, Character: 13},
		End:   diag.Position{Line: 2, Character: 13 + 1 + 2 + 1 + 3 + 1},
	}) {
		t.Errorf("description range %+v", r)
	}
	if len(d.Diagnostics) != 1 {
		t.Fatalf("diagnostics %v", d.Diagnostics)
	}
	want := diag.Range{Start: diag.Position{Line: 3, Character: 7}, End: diag.Position{Line: 3, Character: 11}}
	if g := d.Diagnostics[0]; g.Code != diag.CodeWrongType || g.Range != want {
		t.Errorf("got %s %+v, want wrong-type at %+v", g, g.Range, want)
	}
}

const lookupDoc = "\n\n---\n" + `profile:
  name: "base"
  version: '1.0.0'
  description: >
    Folded
    text.
  extends: foundation:base # parent
defaults: &defaults
  module: tool-web
  config: {n: 1, f: 1.5, b: true, z: null, s: "1"}
tools:
  - *defaults
  - <<: *defaults
    module: tool-bash
agents: [a, b]
` + "---\nBody @x:y\n"

func TestDocumentAccessors(t *testing.T) {
	src := []byte(lookupDoc)
	d := schema.ParseDocument("profiles/base.md", src, schema.DocProfile, schema.Options{})
	if d.Front == nil {
		t.Fatalf("no front matter: %v", d.Diagnostics)
	}
	rng := func(l1, c1, l2, c2 int) diag.Range {
		return diag.Range{Start: diag.Position{Line: l1, Character: c1}, End: diag.Position{Line: l2, Character: c2}}
	}
	tests := []struct {
		name string
		keys []string
		want diag.Range // of the value
		key  diag.Range
	}{
		{"double quoted", []string{"profile", "name"}, rng(4, 8, 4, 14), rng(4, 2, 4, 6)},
		{"single quoted", []string{"profile", "version"}, rng(5, 11, 5, 18), rng(5, 2, 5, 9)},
		{"folded", []string{"profile", "description"}, rng(6, 15, 6, 16), rng(6, 2, 6, 13)},
		{"plain with comment", []string{"profile", "extends"}, rng(9, 11, 9, 26), rng(9, 2, 9, 9)},
		{"mapping", []string{"profile"}, rng(4, 2, 4, 14), rng(3, 0, 3, 7)},
		{"flow sequence", []string{"agents"}, rng(17, 8, 17, 14), rng(17, 0, 17, 6)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := d.Lookup(tc.keys...)
			if n == nil {
				t.Fatal("not found")
			}
			if got := d.NodeRange(n); got != tc.want {
				t.Errorf("NodeRange = %+v, want %+v", got, tc.want)
			}
			if got, ok := d.KeyRange(tc.keys...); !ok || got != tc.key {
				t.Errorf("KeyRange = %+v %v, want %+v", got, ok, tc.key)
			}
		})
	}
	if n := d.Lookup("profile", "missing"); n != nil {
		t.Errorf("Lookup of a missing key = %v", n)
	}
	if n := d.Lookup("agents", "x"); n != nil {
		t.Errorf("Lookup through a sequence = %v", n)
	}
	if _, ok := d.KeyRange("nope"); ok {
		t.Error("KeyRange of a missing key reported present")
	}
	// An alias in a list resolves to its anchor.
	tools := d.Lookup("tools")
	if got := d.NodeRange(tools.Content[0]); got != rng(14, 4, 14, 13) {
		t.Errorf("alias range %+v", got)
	}
	if d.Name() != "base" || d.Description() != "Folded text.\n" {
		t.Errorf("Name %q Description %q", d.Name(), d.Description())
	}
	if got := string(d.Body()); got != "Body @x:y\n" {
		t.Errorf("Body %q", got)
	}
	if &d.Body()[0] != &src[d.BodyStart] {
		t.Error("Body copies the source")
	}
	m, err := d.Decode()
	if err != nil {
		t.Fatal(err)
	}
	// The merged entries take the place of the merge key; an explicit
	// key overrides a merged one in its place.
	config := mapOf("n", 1, "f", syntax.Float(1.5), "b", true, "z", nil, "s", "1")
	defaults := mapOf("module", "tool-web", "config", config)
	bash := mapOf("module", "tool-bash", "config", config)
	if !reflect.DeepEqual(m.Value("tools"), []any{defaults, bash}) {
		t.Errorf("tools decoded as %s", jsonText(t, m.Value("tools")))
	}
	if !reflect.DeepEqual(m.Value("agents"), []any{"a", "b"}) {
		t.Errorf("agents decoded as %#v", m.Value("agents"))
	}
	if got, want := m.Keys(), []string{"profile", "defaults", "tools", "agents"}; !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	// defaults is not a profile key.
	if codes := diagCodes(d); !slices.Equal(codes, []string{diag.CodeUnknownKey}) {
		t.Errorf("diagnostics %v", d.Diagnostics)
	}
}

func diagCodes(d *schema.Document) []string {
	var out []string
	for _, g := range d.Diagnostics {
		out = append(out, g.Code)
	}
	return out
}

func TestNameAndDescription(t *testing.T) {
	tests := []struct {
		kind       schema.DocKind
		src        string
		name, desc string
	}{
		{schema.DocProfile, "---\nprofile: {name: p, description: d}\n---\n", "p", "d"},
		{schema.DocAgent, "---\nmeta: {name: m, description: d}\nname: top\n---\n", "m", "d"},
		{schema.DocAgent, "---\nname: n\ndescription: d\n---\n", "n", "d"},
		{schema.DocBundleAgent, "---\nmeta: {description: d}\n---\n", "", "d"},
		{schema.DocBundle, "---\nbundle: {name: b, description: d}\n---\n", "b", "d"},
		{schema.DocAgent, "---\nname: [not, a, string]\n---\n", "", ""},
		{schema.DocAgent, "no front matter", "", ""},
	}
	for _, tc := range tests {
		d := schema.ParseDocument("x.md", []byte(tc.src), tc.kind, schema.Options{})
		if d.Name() != tc.name || d.Description() != tc.desc {
			t.Errorf("%s %q: Name %q Description %q, want %q %q", tc.kind, tc.src, d.Name(), d.Description(), tc.name, tc.desc)
		}
	}
}

func TestDecodeWithoutFrontMatter(t *testing.T) {
	d := schema.ParseDocument("x.md", []byte("# Title\n"), schema.DocAgent, schema.Options{})
	if _, err := d.Decode(); !errors.Is(err, syntax.ErrNoFrontMatter) {
		t.Errorf("Decode error %v, want ErrNoFrontMatter", err)
	}
	if d.Front != nil || d.BodyStart != 0 || string(d.Body()) != "# Title\n" {
		t.Errorf("Front %v BodyStart %d", d.Front, d.BodyStart)
	}
	// Ranges of a document without front matter point at its first line.
	if r := d.NodeRange(nil); r.Start.Line != 0 {
		t.Errorf("NodeRange(nil) %+v", r)
	}
}

func TestUnknownKindChecksOnlyFrontMatter(t *testing.T) {
	d := schema.ParseDocument("modes/plan.md", []byte("---\nmode: {name: plan}\n---\n"), "mode", schema.Options{})
	if len(d.Diagnostics) != 0 || d.Front == nil {
		t.Errorf("diagnostics %v", d.Diagnostics)
	}
}

// memUse runs f and returns the bytes it allocated.
func memUse(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestBounds feeds hostile documents and checks that each earns a
// diagnostic instead of a crash, logging what each costs. The limits that
// matter are structural (a node budget, a depth limit, a size cap), so
// nothing here depends on the speed of the machine.
func TestBounds(t *testing.T) {
	laughs := func(levels int) string {
		var b strings.Builder
		b.WriteString("---\nname: d\ndescription: laughs\nconfig:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
		for i := 1; i < levels; i++ {
			fmt.Fprintf(&b, "  l%d: &l%d [", i, i)
			for j := 0; j < 10; j++ {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "*l%d", i-1)
			}
			b.WriteString("]\n")
		}
		b.WriteString("---\n")
		return b.String()
	}
	nestedMaps := func(levels int) string {
		var b strings.Builder
		b.WriteString("---\nname: deep\ndescription: deep\nconfig:\n")
		for i := 1; i <= levels; i++ {
			b.WriteString(strings.Repeat(" ", i))
			b.WriteString("k:\n")
		}
		b.WriteString("---\n")
		return b.String()
	}
	tests := []struct {
		name     string
		src      string
		code     string
		contains string
	}{
		{"billion laughs", laughs(10), diag.CodeFrontMatterTooLarge, "once alias"},
		{"aliases within budget", laughs(3), "", ""},
		{"10001 nested flow sequences", "---\nx: " + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "\n---\n", diag.CodeFrontMatterSyntax, "max depth"},
		{"10000 nested flow sequences", "---\nname: d\ndescription: d\nconfig: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n---\n", diag.CodeFrontMatterTooLarge, "deeper than"},
		{"256 KiB of open brackets", "---\nx: " + strings.Repeat("[", syntax.MaxFrontMatter-10) + "\n---\n", diag.CodeFrontMatterSyntax, "max depth"},
		{"9000 nested flow mappings", "---\nname: d\ndescription: d\nconfig: " + strings.Repeat("{a: ", 9000) + "1" + strings.Repeat("}", 9000) + "\n---\n", diag.CodeFrontMatterTooLarge, "deeper than"},
		{"700 nested block mappings", nestedMaps(700), diag.CodeFrontMatterTooLarge, "deeper than"},
		{"9000 nested compact sequences", "---\nname: d\ndescription: d\nconfig:\n" + strings.Repeat("- ", 9000) + "x\n---\n", diag.CodeFrontMatterTooLarge, "deeper than"},
		{"many nodes", "---\nname: d\ndescription: d\nconfig: [" + strings.Repeat("1, ", 20000) + "1]\n---\n", diag.CodeFrontMatterTooLarge, "more than 10000"},
		{"256 KiB of nodes", "---\nname: d\ndescription: d\nconfig: [" + strings.Repeat("1,", syntax.MaxFrontMatter/2-20) + "1]\n---\n", diag.CodeFrontMatterTooLarge, "more than 10000"},
		{"front matter over the cap", "---\nname: d\ndescription: |\n" + strings.Repeat("  0123456789abcdef\n", syntax.MaxFrontMatter/16) + "---\n", diag.CodeFrontMatterTooLarge, "larger than"},
		{"unterminated 2 MiB", "---\n" + strings.Repeat("a: b\n", 2<<20/5), diag.CodeFrontMatterTooLarge, "larger than"},
		{"invalid UTF-8", "---\nname: \xff\xfe\ndescription: d\n---\n", diag.CodeFrontMatterEncoding, "0xFF"},
		{"NUL bytes", "---\nname: a\x00b\ndescription: d\n---\n", diag.CodeFrontMatterSyntax, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d *schema.Document
			alloc := memUse(func() {
				d = schema.ParseDocument("agents/d.md", []byte(tc.src), schema.DocAgent, schema.Options{})
			})
			t.Logf("%d bytes of input, %d KiB allocated", len(tc.src), alloc>>10)
			if tc.code == "" {
				if len(d.Diagnostics) > 0 {
					t.Errorf("unexpected %v", d.Diagnostics)
				}
				return
			}
			if !slices.ContainsFunc(d.Diagnostics, func(g diag.Diagnostic) bool {
				return g.Code == tc.code && strings.Contains(g.Message, tc.contains)
			}) {
				t.Errorf("want %s %q, got %v", tc.code, tc.contains, d.Diagnostics)
			}
			if d.Front != nil && tc.code != diag.CodeFrontMatterEncoding {
				if _, err := d.Decode(); err != nil {
					t.Errorf("Decode: %v", err)
				}
			}
		})
	}
}

// TestHugeBody parses a 50 MB agent: the body is neither parsed nor copied.
func TestHugeBody(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 50 MB")
	}
	head := "---\nname: big\ndescription: A big agent\n---\n"
	src := make([]byte, 0, 50<<20)
	src = append(src, head...)
	line := []byte("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\n")
	for len(src)+len(line) <= cap(src) {
		src = append(src, line...)
	}
	var d *schema.Document
	alloc := memUse(func() {
		d = schema.ParseDocument("agents/big.md", src, schema.DocAgent, schema.Options{})
	})
	// The line index over the file is the one allocation that grows with
	// the body (8 bytes per line, plus the growth of its slice); a copy of
	// the body would cost more than the whole file.
	t.Logf("%d MiB file, %d KiB allocated", len(src)>>20, alloc>>10)
	if len(d.Diagnostics) != 0 || d.Name() != "big" {
		t.Fatalf("diagnostics %v", d.Diagnostics)
	}
	if d.BodyStart != len(head) || &d.Body()[0] != &src[len(head)] {
		t.Error("body not shared with the source")
	}
	if limit := uint64(len(src)); alloc > limit {
		t.Errorf("allocated %d bytes for a %d byte file", alloc, len(src))
	}
}

func TestCRLFAndBOM(t *testing.T) {
	src := []byte("\xEF\xBB\xBF\r\n---\r\nmeta:\r\n  name: crlf\r\n  description: \"x\"\r\n---  \r\nBody\r\n")
	d := schema.ParseDocument("agents/crlf.md", src, schema.DocAgent, schema.Options{})
	if len(d.Diagnostics) != 0 {
		t.Fatalf("diagnostics %v", d.Diagnostics)
	}
	if d.Name() != "crlf" || string(d.Body()) != "Body\r\n" {
		t.Errorf("Name %q Body %q", d.Name(), d.Body())
	}
	r := d.NodeRange(d.Lookup("meta", "description"))
	if r.Start.Line != 4 || r.End.Character-r.Start.Character != 3 {
		t.Errorf("description range %+v", r)
	}
	if !bytes.Equal(src[d.FrontStart:d.FrontEnd], []byte("meta:\r\n  name: crlf\r\n  description: \"x\"\r\n")) {
		t.Errorf("front matter %q", src[d.FrontStart:d.FrontEnd])
	}
}

// fuzzKinds are the document kinds FuzzParseDocument picks from; "" has no
// schema.
var fuzzKinds = []schema.DocKind{schema.DocProfile, schema.DocAgent, schema.DocBundle, schema.DocBundleAgent, ""}

func FuzzParseDocument(f *testing.F) {
	f.Add([]byte("---\nprofile: {name: x, version: 1.0.0, description: d}\n---\n"), uint8(0))
	f.Add([]byte("---\nmeta: {name: x, description: d}\nmodel_role: [a]\n---\n"), uint8(3))
	f.Fuzz(func(t *testing.T, src []byte, k uint8) {
		kind := fuzzKinds[int(k)%len(fuzzKinds)]
		d := schema.ParseDocument("agents/x.md", src, kind, schema.Options{})
		lines := d.Lines.Lines()
		for _, g := range d.Diagnostics {
			if !slices.ContainsFunc(diag.Codes, func(c diag.CodeInfo) bool { return c.Code == g.Code }) {
				t.Errorf("unknown code %q", g.Code)
			}
			r := g.Range
			if g.Path != "agents/x.md" || g.Message == "" || g.Severity == "" ||
				r.Start.Line < 0 || r.End.Line >= lines || r.Start.Character < 0 ||
				r.Start.Line > r.End.Line || r.Start.Line == r.End.Line && r.Start.Character > r.End.Character {
				t.Errorf("bad diagnostic %+v in %d lines", g, lines)
			}
		}
		if !(d.FrontStart <= d.FrontEnd && d.FrontEnd <= d.BodyStart && d.BodyStart <= len(src)) {
			t.Fatalf("offsets %d %d %d in %d bytes", d.FrontStart, d.FrontEnd, d.BodyStart, len(src))
		}
		d.Name()
		d.Description()
		if d.Front == nil {
			return
		}
		if _, err := d.Decode(); err != nil {
			t.Errorf("Decode: %v", err)
		}
		// Every node has a range inside the file.
		var walk func(n *yaml.Node, depth int)
		walk = func(n *yaml.Node, depth int) {
			if depth > syntax.MaxFrontMatterDepth+1 {
				t.Fatalf("tree deeper than the limit")
			}
			r := d.NodeRange(n)
			if r.End.Line >= lines || r.Start.Line > r.End.Line {
				t.Errorf("node %q at %+v in %d lines", n.Value, r, lines)
			}
			for _, c := range n.Content {
				walk(c, depth+1)
			}
		}
		walk(d.Front, 0)
		again := schema.ParseDocument("agents/x.md", src, kind, schema.Options{})
		if !reflect.DeepEqual(again.Diagnostics, d.Diagnostics) {
			t.Errorf("not deterministic: %v then %v", d.Diagnostics, again.Diagnostics)
		}
	})
}

// TestDecodeYAML11 checks that values are typed as the Python loaders of
// these files type them (YAML 1.1), not as YAML 1.2 would.
func TestDecodeYAML11(t *testing.T) {
	src := `---
config:
  on: yes
  off_: Off
  octal: 010
  hex: 0x1F
  binary: 0b101
  sexagesimal: 1:30
  under: 1_000
  big: 123456789012345678901234567890
  float: 1.5e+3
  sexafloat: 1:30.5
  inf: -.inf
  exp_no_dot: 1e3
  quoted: "yes"
  tagged: !!str 12
  tagged_int: !!int "12"
  null_: ~
  empty:
  date: 2024-01-02
  ? [complex, key]
  : dropped
---
`
	d := schema.ParseDocument("agents/x.md", []byte(src), "", schema.Options{})
	m, err := d.Decode()
	if err != nil {
		t.Fatal(err)
	}
	want := mapOf(
		"on", true, "off_", false, "octal", 8, "hex", 31, "binary", 5, "sexagesimal", 90,
		"under", 1000, "big", bigInt("123456789012345678901234567890"), "float", syntax.Float(1500), "sexafloat", syntax.Float(90.5),
		"inf", syntax.Float(math.Inf(-1)), "exp_no_dot", "1e3", "quoted", "yes", "tagged", "12", "tagged_int", 12,
		"null_", nil, "empty", nil, "date", "2024-01-02",
	)
	if got := m.Value("config"); !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %s\nwant %s", jsonText(t, got), jsonText(t, want))
	}
}
