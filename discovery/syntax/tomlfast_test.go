package syntax_test

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// checkFastTOML fails when the fast path decodes src and the TOML decoder
// does not, or decodes it into another document or key order. It reports
// whether the fast path decoded it.
func checkFastTOML(t *testing.T, src string) bool {
	t.Helper()
	doc, keys, ok := syntax.DecodeTOMLFast([]byte(src))
	if !ok {
		return false
	}
	if _, deep := syntax.ScanTOMLSpans([]byte(src)); deep != nil {
		t.Errorf("the fast path decodes %q, which the scanner finds beyond its bounds", src)
	}
	want, wantKeys, err := syntax.DecodeTOMLSlow([]byte(src))
	if err != nil {
		t.Errorf("the fast path decodes %q, the decoder says %v", src, err)
		return true
	}
	if !reflect.DeepEqual(doc, want) {
		t.Errorf("documents of %q differ:\n fast %#v\n toml %#v", src, doc, want)
	}
	if fmt.Sprint(keys) != fmt.Sprint(wantKeys) || len(keys) != len(wantKeys) {
		t.Errorf("keys of %q differ:\n fast %q\n toml %q", src, keys, wantKeys)
	}
	return true
}

func TestDecodeTOMLFastTable(t *testing.T) {
	for _, tc := range []struct {
		src  string
		fast bool
	}{
		{"", true},
		{"# only a comment\n\n", true},
		{"a = 1", true},
		{"[project]\nname = \"x\"\nversion = \"1.0.0\"\n", true},
		{"[build-system]\nrequires = [\"setuptools>=61.0\", 'x',]  # c\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"atlas\"\nlicense = { text = \"MIT\", n = {a = 1} }\nauthors = [{name = \"x\"}, {name = \"y\"}]\nn = -1_000\narr = [ [1, 2], [\"a\"] ]\n\n[project.urls]\nrepository = \"https://example.com/x\"\n\n[tool.amplifier.collection]\nauthor = \"C\"\ncapabilities = [\n    \"a\", # one\n    \"b\",\n]\n[tool.amplifier.collection.requires]\nfoundation = \"^1.0.0\"\n", true},
		{"[ a . \"b c\" . 'd' ]\nx = true\ny = false\n", true},
		{"a = \"esc \\\" \\\\ \\n \\t \\r \\b \\f \\u00e9\"\n", true},
		{"a = \"\\U0001F600\"\n", false},
		{"a = \"\\uD800\"\n", false},
		{"a = \"\\q\"\n", false},
		{"a = '''x'''\n", false},
		{"a = \"\"\"x\"\"\"\n", false},
		{"a.b = 1\n", false},
		{"[[a]]\nb = 1\n", false},
		{"a = 1.5\n", false},
		{"a = 1e3\n", false},
		{"a = 0x1F\n", false},
		{"a = 01\n", false},
		{"a = 1_\n", false},
		{"a = 1__0\n", false},
		{"a = +0\nb = -0\nc = 0\n", true},
		{"a = 9223372036854775807\n", false},
		{"a = 1979-05-27\n", false},
		{"a = inf\n", false},
		{"a = 1\na = 2\n", false},
		{"[a]\n[a]\n", false},
		{"[a.b]\n[a]\n", false},
		{"a = 1\n[a]\n", false},
		{"a = {}\n[a.b]\n", false},
		{"[a]\nb = 1\n[a.b]\n", false},
		{"[a]\n[a.b]\n[a.c]\n", true},
		{"a = {b = 1,}\n", false},
		{"a = {b = 1, b = 2}\n", false},
		{"a = {\nb = 1}\n", false},
		{"a = [1,\n# c\n2,\n\n]\n", true},
		{"a = [1 2]\n", false},
		// Within the scanner's bounds, and just beyond them.
		{"[" + strings.Repeat("k.", 31) + "k]\n", true},
		{"[" + strings.Repeat("k.", 32) + "k]\n", false},
		{"a = " + strings.Repeat("[", 32) + strings.Repeat("]", 32) + "\n", true},
		{"a = " + strings.Repeat("[", 33) + strings.Repeat("]", 33) + "\n", false},
		{"a = " + strings.Repeat("{b = ", 32) + "1" + strings.Repeat("}", 32) + "\n", true},
		{"a = " + strings.Repeat("{b = ", 33) + "1" + strings.Repeat("}", 33) + "\n", false},
		{"a = 1 2\n", false},
		{"a = truex\n", false},
		{"a = \"x\"\r\n", false},
		{"\ufeffa = 1\n", false},
		{"a = \"é – “q”\"\nb = 'ü'\n", true},
		{"\"q k\" = 1\n'l k' = 2\n", true},
		{"\"\" = 1\n", false},
		{"a = [{b = [{c = 1}]}, {d = {e = 2}}]\n", true},
		{"[x]\n  a = 1\n\t\tb = 2\n", true},
		{"a = 1 # c\n[b] # d\n", true},
	} {
		if got := checkFastTOML(t, tc.src); got != tc.fast {
			t.Errorf("fast path on %q: %v, want %v", tc.src, got, tc.fast)
		}
	}
}

// TestDecodeTOMLFastFiles holds the fast path to the decoder on every
// pyproject.toml of the test data and the corpus, and on those of the tree
// AMPLIDEX_BENCH_ROOT names.
func TestDecodeTOMLFastFiles(t *testing.T) {
	roots := []string{"testdata"}
	for _, env := range []string{"AMPLIDEX_CORPUS", "AMPLIDEX_BENCH_ROOT"} {
		if r := os.Getenv(env); r != "" {
			roots = append(roots, r)
		}
	}
	var all, fast int
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".toml") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			all++
			if checkFastTOML(t, string(src)) {
				fast++
			}
			return nil
		})
	}
	t.Logf("the fast path decoded %d of %d files", fast, all)
}

// randomTOML writes a random pyproject-like text, mostly well formed.
func randomTOML(rng *rand.Rand) string {
	keys := []string{"name", "version", "a", "b-c", "d_e", "1", "\"q k\"", "'l'", "a.b", "", "é", "requires"}
	headers := []string{"[project]", "[project.urls]", "[tool.amplifier.collection]", "[tool.amplifier.collection.requires]", "[a]", "[a.b]", "[[x]]", "[ a . b ]", "[a]b", "[]"}
	values := []string{"\"s\"", "'l'", "1", "-1", "+0", "01", "1_000", "1.5", "true", "false", "tru", "[]", "[1, 2]", "[\"a\",\n  \"b\", # c\n]",
		"{}", "{ x = 1 }", "{x = 1, y = \"z\"}", "{x = 1,}", "[{a = 1}, {a = 2}]", "\"a\\nb\"", "\"a\\x\"", "'''m'''", "\"\"\"m\"\"\"",
		"1979-05-27", "inf", "\"é\"", "\"unterminated", "[1, [2, [3]]]", "{ n = { m = [1] } }", "0x10", "1e2"}
	var b strings.Builder
	for range 1 + rng.IntN(12) {
		switch rng.IntN(6) {
		case 0:
			b.WriteString(headers[rng.IntN(len(headers))])
		case 1:
			b.WriteString("# comment")
		case 2:
		default:
			b.WriteString(keys[rng.IntN(len(keys))] + " = " + values[rng.IntN(len(values))])
		}
		if rng.IntN(5) == 0 {
			b.WriteString("  # trailing")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestDecodeTOMLFastRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	n := 20_000
	if testing.Short() {
		n = 2_000
	}
	fast := 0
	for range n {
		if checkFastTOML(t, randomTOML(rng)) {
			fast++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("the fast path decoded %d of %d random texts", fast, n)
	if fast < n/20 {
		t.Errorf("the fast path decoded only %d of %d random texts", fast, n)
	}
}

// FuzzDecodeTOMLFast holds the fast path to the TOML decoder on any text.
func FuzzDecodeTOMLFast(f *testing.F) {
	rng := rand.New(rand.NewPCG(15, 16))
	for range 40 {
		f.Add(randomTOML(rng))
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkFastTOML(t, src)
	})
}
