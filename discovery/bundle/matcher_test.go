package bundle_test

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle"
)

// The runtime's regular expressions (io/frontmatter.py, mentions/parser.py),
// the oracle of the one-pass matchers. \s is Python's, in text.
const pyspace = `\t\n\v\f\r\x{1c}-\x{1f} \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`

var (
	frontMatterRE = regexp.MustCompile(`(?s)\A---[` + pyspace + `]*\n(.*?)\n---[` + pyspace + `]*\n?`)
	fencedCodeRE  = regexp.MustCompile("(?ms)(?:^|\n)```[^\n]*\n.*?(?:^|\n)```")
)

var matcherSeeds = []string{
	"---\nbundle: x\n---\nbody", "---\n---\n", "---\n\n---\n", "---  \n \n a: 1\n---x\ny", "--- \u00a0\n\n---\n\n\nz",
	"---\na\n----\n", "---a\n---\n", "---\n", "", "x\n---\n---\n", "---\r\na: 1\r\n---\r\nb",
	"```\ncode\n```\ntext", "a\n```py\nx\n```\nb\n```\nc\n```", "```\n```", "x```\ny\n```", "\n```\n\n```rest\n```\n",
	"```no newline", "a\n```\nunclosed", "``````\nx\n``````\n",
}

// FuzzMatchers compares the one-pass matchers with the regular
// expressions the runtime uses, on any text.
func FuzzMatchers(f *testing.F) {
	for _, s := range matcherSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		compareMatchers(t, text)
	})
}

func TestMatchers(t *testing.T) {
	for _, s := range matcherSeeds {
		compareMatchers(t, []byte(s))
	}
}

func compareMatchers(t *testing.T, text []byte) {
	t.Helper()
	want := frontMatterRE.FindSubmatchIndex(text)
	if got := bundle.MatchFrontMatter(text); !reflect.DeepEqual(got, want) {
		t.Errorf("front matter of %q: %v, want %v", text, got, want)
	}
	var blocks [][2]int
	for _, m := range fencedCodeRE.FindAllIndex(text, -1) {
		blocks = append(blocks, [2]int{m[0], m[1]})
	}
	if got := bundle.FencedBlocks(text); !reflect.DeepEqual(got, blocks) {
		t.Errorf("fenced blocks of %q: %v, want %v", text, got, blocks)
	}
}

// TestMaskBlockScalars checks that a recipe parsed with its long block
// scalars skipped has the structure and positions of one parsed whole:
// every recipe of the corpus gets the same diagnostics both ways.
func TestMaskBlockScalars(t *testing.T) {
	src := "name: r\ndescription: |\n  one\n  two\n  three\n  four\nversion: 1.0.0\nsteps:\n  - id: a\n    agent: x:y\n    prompt: >-\n      a\n\n      b\n      c\n      d\n    output: o\n  - id: b\n    depends_on: [c]\n"
	f := bundle.Parse("/r/recipes/r.yaml", []byte(src), bundle.Options{Rel: "recipes/r.yaml"})
	var got []string
	for _, d := range f.Diagnostics {
		got = append(got, d.String())
	}
	if len(got) != 3 || !strings.Contains(got[0], ":18:") || !strings.Contains(got[2], ":19:") {
		t.Errorf("diagnostics: %v", got)
	}
}
