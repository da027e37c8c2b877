package syntax_test

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// sameTree reports where two node trees differ, or "" when every field of
// every node is equal.
func sameTree(a, b *yaml.Node, at string) string {
	switch {
	case a == nil && b == nil:
		return ""
	case a == nil || b == nil:
		return fmt.Sprintf("%s: %v against %v", at, a, b)
	}
	type fields struct {
		Kind                                  yaml.Kind
		Style                                 yaml.Style
		Tag, Value, Anchor                    string
		Alias                                 bool
		HeadComment, LineComment, FootComment string
		Line, Column, Children                int
	}
	fa := fields{a.Kind, a.Style, a.Tag, a.Value, a.Anchor, a.Alias != nil, a.HeadComment, a.LineComment, a.FootComment, a.Line, a.Column, len(a.Content)}
	fb := fields{b.Kind, b.Style, b.Tag, b.Value, b.Anchor, b.Alias != nil, b.HeadComment, b.LineComment, b.FootComment, b.Line, b.Column, len(b.Content)}
	if fa != fb {
		return fmt.Sprintf("%s:\n fast %+v\n  yaml %+v", at, fa, fb)
	}
	for i := range a.Content {
		if d := sameTree(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", at, i)); d != "" {
			return d
		}
	}
	return ""
}

// checkFastYAML fails when the fast path reads text and go-yaml does not,
// or reads it into another tree. It reports whether the fast path read it.
func checkFastYAML(t *testing.T, text string) bool {
	t.Helper()
	fast, ok := syntax.ParseYAMLFast([]byte(text))
	if !ok {
		return false
	}
	slow, err := syntax.ParseYAMLSlow([]byte(text))
	if err != nil {
		t.Errorf("the fast path reads %q, go-yaml says %v", text, err)
		return true
	}
	if d := sameTree(fast, slow, "root"); d != "" {
		t.Errorf("the trees of %q differ at %s", text, d)
	}
	return true
}

// withoutComments removes the comments of a go-yaml tree.
func withoutComments(n *yaml.Node) {
	if n == nil {
		return
	}
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		withoutComments(c)
	}
}

// checkFastYAMLWithoutComments is checkFastYAML for the fast path that
// reads comments, held to go-yaml's tree without its comments. It fails
// too when that path refuses a text the other reads.
func checkFastYAMLWithoutComments(t *testing.T, text string) bool {
	t.Helper()
	fast, ok := syntax.ParseYAMLFastWithoutComments([]byte(text))
	if !ok {
		if _, plain := syntax.ParseYAMLFast([]byte(text)); plain {
			t.Errorf("the fast path reads %q, but not when it reads comments", text)
		}
		return false
	}
	slow, err := syntax.ParseYAMLSlow([]byte(text))
	if err != nil {
		t.Errorf("the fast path reads %q (comments read), go-yaml says %v", text, err)
		return true
	}
	withoutComments(slow)
	if d := sameTree(fast, slow, "root"); d != "" {
		t.Errorf("the trees of %q (comments read) differ at %s", text, d)
	}
	return true
}

// TestParseYAMLFastComments holds the fast path that reads comments to
// go-yaml, comments left out.
func TestParseYAMLFastComments(t *testing.T) {
	for _, tc := range []struct {
		text string
		fast bool
	}{
		{"# c\na: 1\n", true},
		{"# only\n  # comments\n", true},
		{"a: 1 # c\nb: 'x'  # c\nc: \"y\" #c\nd: [a, b] # c\n", true},
		{"a: 1#c\n", true},
		{"a: 'x'#c\n", false},
		{"a: # c\n", true},
		{"a: # c\nb: 1\n", true},
		{"a: # c\n  b: 1\n", true},
		{"a:\n  # c\n  b: 1\n# d\n  c: 2\n", true},
		{"tools:\n  # core\n  - module: a # m\n    source: b\n\n  # more\n  - module: c\n", true},
		{"s:\n- # c\n  a: 1\n", true},
		{"s:\n  - # c\n    a: 1\n", true},
		{"d: | # c\n  text\n  # kept\nn: 1\n", true},
		{"d: |# c\n  text\n", false},
		{"d: >\n  a\n# c\n\nn: 1\n", true},
		{"d: |\n    a\n  # c\n    b\n", false},
		{"a: b\n  # c\n", false},
		{"a: b # c\n  d\n", false},
		{"a: b\n  c # d\n", false},
		{"a: b\n# c\n  d\n", false},
		{"a: b # c\n    # d\nn: 1\n", true},
		{"- a # c\n", false},
		{"k: \"x # not\" # yes\n", true},
		{"---\na: 1\n", true},
		{"# c\n---  \na: 1\n", true},
		{"---\n", false},
		{"--- a: 1\n", false},
		{"---\n---\na: 1\n", false},
		{"a: 1\n---\n", false},
		{"d: |\n\n\n\nn: 1\n", true},
		{"d: >-\n\n\n", true},
		{"d: |\n", true},
		{"d: |\n\n# c\nn: 1\n", true},
		{"d: |+\n\n\nn: 1\n", false},
		{"d: |\n   \nn: 1\n", false},
		{"s:\n  - |\n\n  - x\n", true},
	} {
		if got := checkFastYAMLWithoutComments(t, tc.text); got != tc.fast {
			t.Errorf("fast path (comments read) on %q: %v, want %v", tc.text, got, tc.fast)
		}
	}
}

// commented adds comments to a document: lines of their own, at any
// indentation, and after values.
func commented(rng *rand.Rand, text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if rng.IntN(6) == 0 {
			b.WriteString(strings.Repeat(" ", rng.IntN(6)) + "# c: d\n")
		}
		body, nl := strings.CutSuffix(line, "\n")
		if body != "" && rng.IntN(5) == 0 {
			body += strings.Repeat(" ", rng.IntN(3)) + "# t"
		}
		b.WriteString(body)
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestParseYAMLFastCommentsRandom holds the fast path that reads comments
// to go-yaml on random documents with comments, and checks that it reads
// a good share of them.
func TestParseYAMLFastCommentsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	n := 20_000
	if testing.Short() {
		n = 2_000
	}
	fast := 0
	for range n {
		text := randomYAML(rng)
		checkFastYAMLWithoutComments(t, text)
		if checkFastYAMLWithoutComments(t, commented(rng, text)) {
			fast++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("the fast path read %d of %d random documents with comments", fast, n)
	if fast < n/40 {
		t.Errorf("the fast path read only %d of %d random documents with comments", fast, n)
	}
}

func TestParseYAMLFastTable(t *testing.T) {
	for _, tc := range []struct {
		text string
		fast bool
	}{
		{"", true},
		{"\n  \n", true},
		{"a: 1\n", true},
		{"a: 1", true},
		{"a:\n", true},
		{"a:", true},
		{"a: b\nc: d\n", true},
		{"profile:\n  name: x\n  version: 1.0.0\n  extends: c:base\n", true},
		{"tools:\n  - module: a\n    source: git+https://x/y@main#subdirectory=m\n  - module: b\n", true},
		{"tools:\n- module: a\n  config: {}\n", false},
		{"tools:\n- module: a\n  source: b\n- c\n-\n- 'd'\nnext: 1\n", true},
		{"agents:\n  - a0\n  - a1\n", true},
		{"k: [a, b,  c d , 'e''f', \"g h\"]\n", true},
		{"k: []\nl: [ ]\n", true},
		{"k: [a, b,]\n", false},
		{"k: [a,\n  b]\n", false},
		{"k: \"x: y #z\"\nl: 'it''s'\nm: ''''\n", true},
		{"k: \"a\\nb\"\n", true},
		{"k: \"\\0\\a\\b\\t\\n\\v\\f\\r\\e\\ \\\"\\/\\\\\\N\\_\\L\\P\\x41\\u00e9\\U0001F600\\'\"\n", false},
		{"k: \"\\0\\a\\b\\t\\n\\v\\f\\r\\e\\ \\\"\\\\\\N\\_\\L\\P\\x41\\u00e9\\U0001F600\\'\"\n", true},
		{"k: \"\\uD800\"\n", false},
		{"k: \"\\x4\"\n", false},
		{"k: \"\\q\"\n", false},
		{"k: \"a\\\n  b\"\n", false},
		{"description: |\n  line one\n  line two\n\n  after blank\nnext: 1\n", true},
		{"d: >\n  folded\n  text\n\n  para\n    indented\n  back\n", true},
		{"d: |-\n  a\n\n\nn: 1\n", true},
		{"d: |+\n  a\n\n\nn: 1\n", true},
		{"d: >-\n  a\n  b\n", true},
		{"d: |\n\n  a\n", true},
		{"d: |\n  \n  a\n", true},
		{"d: |\n    \n  a\n", false},
		{"d: >\n  a\n   \n  \n     \n  b\n \nn: 1\n", true},
		{"d: |+\n  a\n  \n   ", true},
		{"d: |2\n  a\n", false},
		{"- a\n- b\n", false},
		{"a: 1\n- b\n", false},
		{"a: b: c\n", false},
		{"a: b\n  c\n", true},
		{"a: b\n  c\n\n  \n  d e  \n   f\nnext: 1\n", true},
		{"a: b\n  c: d\n", false},
		{"a: b\n  # c\n", false},
		{"- a\n  b\n", false},
		{"s:\n- a\n  b\n- c\n", true},
		{"a: 1\n  2\n", true},
		{"a: # c\n", false},
		{"# c\na: 1\n", false},
		{"a: &x 1\nb: *x\n", false},
		{"a: !!str 1\n", false},
		{"<<: {a: 1}\n", false},
		{"a:\tb\n", false},
		{"a: b\r\n", false},
		{"a: yes\nb: 010\nc: 1:30\nd: 1e3\ne: ~\nf: .inf\ng: 2001-12-14\nh: -1\ni: 0x1F\n", true},
		{"názov: čaj ☕ – “quoted”\nkľúč: [é, ü]\n", true},
		{"emoji: 😀\n", false},
		{"a: 1\n---\nb: 2\n", false},
		{"  a: 1\n  b: 2\n", true},
		{"a:\n  b:\n    c:\n      - d: 1\n        e: [x]\n      -\n        f: 2\n", true},
		{"a: -1\nb: -x\nc: - x\n", false},
		{"a: \"unterminated\n", false},
		{"a: 'x' y\n", false},
		{"? a\n: b\n", false},
		{"a : b\n", false},
		{"key with spaces: v\nurl: http://x.y/z?q=1&r=2\n", true},
	} {
		if got := checkFastYAML(t, tc.text); got != tc.fast {
			t.Errorf("fast path on %q: %v, want %v", tc.text, got, tc.fast)
		}
	}
}

// TestParseYAMLFastCorpus holds the fast path to go-yaml on the front
// matter of every document of the test data and the corpus, and checks
// that it reads most of them.
func TestParseYAMLFastCorpus(t *testing.T) {
	roots := []string{"testdata"}
	if c := os.Getenv("AMPLIDEX_CORPUS"); c != "" {
		roots = append(roots, c)
	}
	var all, fast int
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			fm, err := syntax.SplitFrontMatter(src)
			if err != nil {
				return nil
			}
			all++
			if checkFastYAML(t, string(src[fm.Start:fm.End])) {
				fast++
			}
			return nil
		})
	}
	t.Logf("the fast path read %d of %d front matter blocks", fast, all)
}

// yamlPieces are the values and keys the random documents are made of:
// the forms of front matter, and the odd ones close to them.
var (
	yamlKeys   = []string{"name", "description", "a", "a b", "x-y", "k1", "é", "url", "-k", "k:", "k#", "1", "on", "<<", "? k", "'q'"}
	yamlValues = []string{
		"x", "hello world", "1", "1.0", "010", "0x1F", "1:30", "1e3", "-1", "+1", ".inf", "-.inf", ".nan", "~", "null", "yes", "Off", "true",
		"2001-12-14", "a:b", "a: b", "a #b", "a#b", "http://x/y#z", "-x", "- x", "[a, b]", "[]", "[ a ,b ]", "[a, [b]]", "[a,]", "['x', \"y\"]",
		"\"dq\"", "\"d: #q\"", "\"\"", "'sq'", "'it''s'", "''", "\"a\\tb\"", "'open", "\"open", "x y  ", "é ü", "–", "“q”", "{}", "{a: 1}",
		"&a x", "*a", "!!str x", "|", "|-", "|+", ">", ">-", ">+", "|2", "@x", "`x`", "%x", "'x' y", ": x", "?", "-", "--", "---", "...",
	}
	yamlBlockLines = []string{"line", "two words", "", "  more", "a: b", "# not a comment", "- item", "x", "   deep"}
)

// randomYAML writes a random document of nested mappings, sequences and
// scalars, mostly well formed.
func randomYAML(rng *rand.Rand) string {
	var b strings.Builder
	var block func(indent, depth int, seq bool)
	pad := func(n int) string { return strings.Repeat(" ", n) }
	scalar := func(indent int) {
		v := yamlValues[rng.IntN(len(yamlValues))]
		b.WriteString(v)
		if strings.HasPrefix(v, "|") || strings.HasPrefix(v, ">") {
			b.WriteString("\n")
			in := indent + 1 + rng.IntN(3)
			for range 1 + rng.IntN(5) {
				l := yamlBlockLines[rng.IntN(len(yamlBlockLines))]
				if l == "" {
					b.WriteString("\n")
					continue
				}
				b.WriteString(pad(in) + l + "\n")
			}
			return
		}
		b.WriteString("\n")
	}
	block = func(indent, depth int, seq bool) {
		for range 1 + rng.IntN(4) {
			if rng.IntN(12) == 0 {
				b.WriteString("\n")
			}
			b.WriteString(pad(indent))
			if seq {
				b.WriteString("-")
				if rng.IntN(3) > 0 {
					b.WriteString(" ")
				}
			} else {
				b.WriteString(yamlKeys[rng.IntN(len(yamlKeys))] + ":")
			}
			switch r := rng.IntN(10); {
			case depth < 4 && r < 2:
				b.WriteString("\n")
				step := rng.IntN(3)
				if seq && step == 0 {
					step = 2
				}
				block(indent+step, depth+1, r == 0)
			case seq && depth < 4 && r == 2:
				b.WriteString(" " + yamlKeys[rng.IntN(len(yamlKeys))] + ": ")
				scalar(indent + 2)
				if rng.IntN(2) == 0 {
					b.WriteString(pad(indent+2) + "k2: ")
					scalar(indent + 2)
				}
			case r == 3:
				b.WriteString("\n")
			default:
				b.WriteString(" ")
				scalar(indent)
			}
		}
	}
	block(0, 0, false)
	return b.String()
}

// TestParseYAMLFastRandom holds the fast path to go-yaml on random
// documents, and checks that it reads a good share of them.
func TestParseYAMLFastRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 20_000
	if testing.Short() {
		n = 2_000
	}
	fast := 0
	for range n {
		if checkFastYAML(t, randomYAML(rng)) {
			fast++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("the fast path read %d of %d random documents", fast, n)
	if fast < n/20 {
		t.Errorf("the fast path read only %d of %d random documents", fast, n)
	}
}

// FuzzParseYAMLFast holds the fast path to go-yaml on any text, both
// ways: comments refused, and comments read and left out.
func FuzzParseYAMLFast(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 50 {
		f.Add(randomYAML(rng))
	}
	f.Add("description: |\n  a\n\n  b\nn: 1\n")
	f.Add("tools:\n- module: a\n  source: b\n")
	f.Add("a: 1 # c\n# d\nb:\n  - x # e\n")
	f.Fuzz(func(t *testing.T, text string) {
		checkFastYAML(t, text)
		checkFastYAMLWithoutComments(t, text)
	})
}

// TestPlainTag holds the fast path's tags of plain scalars to go-yaml's.
func TestPlainTag(t *testing.T) {
	check := func(s string) {
		n := yaml.Node{Kind: yaml.ScalarNode, Value: s}
		if got, want := syntax.PlainTag(s), n.ShortTag(); got != want {
			t.Errorf("tag of %q: %s, go-yaml says %s", s, got, want)
		}
	}
	for _, s := range []string{"", "~", "null", "NULL", "nULL", "true", "TRUE", "tRUE", "yes", "no", "on", "off", "y", "n", "<<", "<", "<<<",
		"1", "-1", "+1", "1.0", ".5", ".inf", "-.inf", "+.INF", ".nan", ".NaN", "0x1F", "0o17", "017", "0b101", "-0b1", "1_000", "1e3",
		"2001-12-14", "2001-12-14t21:59:43.10-05:00", "1.0.0", "-", "+", ".", "x", "Off", "Null", "é"} {
		check(s)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	buf := make([]byte, 0, 12)
	for range 50_000 {
		buf = buf[:0]
		for range rng.IntN(10) {
			const alphabet = "0123456789.+-_:eExobnulLtTrRuUfFaAsS<~ "
			buf = append(buf, alphabet[rng.IntN(len(alphabet))])
		}
		check(string(buf))
	}
}

// TestYAMLTextTables holds the line tables of the common texts to those
// of the general scan.
func TestYAMLTextTables(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 5_000 {
		const alphabet = "ab \n\n\r\u0085\u2028é"
		var b []byte
		for range rng.IntN(30) {
			b = append(b, alphabet[rng.IntN(len(alphabet))])
		}
		start := rng.IntN(len(b) + 1)
		end := start + rng.IntN(len(b)-start+1)
		fast, any := syntax.YAMLTextTables(b, start, end)
		if fmt.Sprint(fast) != fmt.Sprint(any) {
			t.Fatalf("tables of %q[%d:%d]: %v, the general scan finds %v", b, start, end, fast, any)
		}
	}
}
