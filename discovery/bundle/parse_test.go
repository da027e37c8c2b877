package bundle_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/diag"
)

// parseCase is a file, where it is in its repository, and the
// diagnostics it must earn, as "line:code" (1-based lines), in order.
type parseCase struct {
	name, rel, src string
	manifest       bool
	want           []string
	refused        bool
}

func (tc parseCase) run(t *testing.T) *bundle.File {
	t.Helper()
	path := filepath.Join("/repo", tc.rel)
	f := bundle.Parse(path, []byte(tc.src), bundle.Options{Rel: tc.rel, Manifest: tc.manifest})
	var got []string
	for _, d := range f.Diagnostics {
		got = append(got, fmt.Sprintf("%d:%s", d.Range.Start.Line+1, d.Code))
	}
	want := append([]string(nil), tc.want...)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("diagnostics: got %v, want %v", got, tc.want)
		for _, d := range f.Diagnostics {
			t.Log(d.String())
		}
	}
	if (f.Refused != "") != tc.refused {
		t.Errorf("refused = %q, want refused %v", f.Refused, tc.refused)
	}
	return f
}

// TestParseSilentFailures checks that each mistake the runtime loads
// without a word is a diagnostic at its line.
func TestParseSilentFailures(t *testing.T) {
	for _, tc := range []parseCase{
		{name: "include with behavior: instead of bundle:", rel: "bundle.md", src: "---\nbundle:\n  name: app\nincludes:\n  - bundle: foundation\n  - behavior: ./behaviors/x.yaml\n---\n",
			want: []string{"6:bundle/include-without-bundle-key"}},
		{name: "includes under bundle:", rel: "bundle.md", src: "---\nbundle:\n  name: app\n  includes:\n    - bundle: foundation\n---\n",
			want: []string{"4:bundle/includes-under-bundle"}},
		{name: "leading @ in YAML", rel: "behaviors/x.yaml", src: "bundle: {name: x}\nincludes:\n  - bundle: \"@app:behaviors/y\"\nagents:\n  include:\n    - \"@app:helper\"\ncontext:\n  include:\n    - \"@app:context/a.md\"\n",
			want: []string{"3:bundle/at-in-yaml", "6:bundle/at-in-yaml", "9:bundle/at-in-yaml"}},
		{name: "module without module", rel: "behaviors/x.yaml", src: "bundle: {name: x}\ntools:\n  - source: git+https://github.com/o/tool@main\n    config: {a: 1}\n",
			want: []string{"3:bundle/module-without-module"}},
		{name: "tools as a mapping", rel: "behaviors/x.yaml", src: "bundle: {name: x}\ntools:\n  tool-bash:\n    source: git+https://x@main\n",
			want: []string{"3:bundle/wrong-type"}, refused: true},
		{name: "context as a list", rel: "behaviors/x.yaml", src: "bundle: {name: x}\ncontext:\n  - x:context/a.md\n",
			want: []string{"3:bundle/wrong-type"}, refused: true},
		{name: "Markdown saved as .yaml", rel: "behaviors/x.yaml", src: "---\nbundle:\n  name: x\n---\n\n# Instructions\n\nDo things.\n",
			want: []string{"4:bundle/markdown-in-yaml"}, refused: true},
		{name: "unknown keys with did you mean", rel: "bundle.md", src: "---\nbundle:\n  name: app\n  verison: 1.0.0\ninclude:\n  - bundle: foundation\n---\n",
			want: []string{"4:bundle/unknown-key", "5:bundle/unknown-key"}},
		{name: "included file without bundle.name", rel: "behaviors/x.yaml", src: "tools:\n  - module: tool-x\n",
			want: []string{"1:bundle/missing-name"}},
		{name: "bundle.name empty", rel: "behaviors/x.yaml", src: "bundle:\n  version: 1.0.0\n",
			want: []string{"1:bundle/missing-name"}},
		{name: "agent without meta, flat", rel: "agents/helper.md", src: "---\nname: helper\ndescription: Helps.\n---\nBody\n",
			want: []string{"2:bundle/agent-without-meta"}},
		{name: "agent without meta or description", rel: "agents/helper.md", src: "---\ntools:\n  - module: tool-bash\n---\nBody\n",
			want: []string{"1:bundle/agent-without-meta"}},
		{name: "agent with a typo in meta", rel: "agents/helper.md", src: "---\nmeta:\n  name: helper\n  descripton: Helps.\n---\nBody\n",
			want: []string{"4:bundle/unknown-key"}},
		{name: "agent with includes", rel: "agents/helper.md", src: "---\nmeta:\n  name: helper\n  description: Helps.\nincludes:\n  - bundle: foundation\n---\n",
			want: []string{"5:bundle/unknown-key"}},
		{name: "default_provider is not asked of a bundle", rel: "bundle.md", src: "---\nbundle:\n  name: app\n---\n"},
		{name: "default_provider is asked of a manifest", rel: "bundle.md", manifest: true, src: "---\nbundle:\n  name: app\n---\n",
			want: []string{"2:bundle/missing-default-provider"}},
		{name: "agents as a list in a bundle", rel: "bundle.md", src: "---\nbundle:\n  name: app\nagents: [a, b]\n---\n",
			want: []string{"4:bundle/wrong-type"}},
		{name: "a model role typo", rel: "agents/a.md", src: "---\nmeta:\n  name: a\n  description: d\n  model_role: codng\n---\n",
			want: []string{"5:bundle/invalid-value"}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}

// TestParseText checks the text layer: BOM, CRLF, broken YAML,
// non-mappings and an unterminated front matter, each on its own.
func TestParseText(t *testing.T) {
	for _, tc := range []parseCase{
		{name: "BOM and CRLF are fine", rel: "bundle.md", src: "\ufeff---\r\nbundle:\r\n  name: app\r\n  colour: red\r\n---\r\nBody\r\n",
			want: []string{"4:bundle/unknown-key"}},
		{name: "BOM in YAML", rel: "behaviors/x.yaml", src: "\ufeffbundle: {name: x}\nbogus: 1\n", want: []string{"2:bundle/unknown-key"}},
		{name: "broken YAML", rel: "behaviors/x.yaml", src: "bundle:\n  name: x\n tools: [\n", want: []string{"2:bundle/yaml-syntax"}, refused: true},
		{name: "a list, not a mapping", rel: "behaviors/x.yaml", src: "- a\n- b\n", want: []string{"1:bundle/not-mapping"}, refused: true},
		{name: "a scalar front matter", rel: "agents/a.md", src: "---\njust text\n---\n", want: []string{"2:bundle/not-mapping"}, refused: true},
		{name: "unterminated front matter", rel: "agents/a.md", src: "---\nmeta:\n  name: a\n", want: []string{"1:bundle/frontmatter-unterminated"}},
		{name: "no front matter", rel: "modes/m.md", src: "Just a body.\n", want: []string{"1:bundle/frontmatter-missing"}},
		{name: "invalid UTF-8", rel: "bundle.md", src: "---\nbundle: {name: \xff}\n---\n", want: []string{"2:bundle/invalid-utf8"}, refused: true},
		{name: "an unknown tag", rel: "behaviors/x.yaml", src: "bundle: !custom {name: x}\n", want: []string{"1:bundle/yaml-syntax"}, refused: true},
		{name: "a mapping as a key", rel: "behaviors/x.yaml", src: "bundle: {name: x}\n? {a: 1}\n: 2\n", want: []string{"2:bundle/yaml-syntax"}, refused: true},
		{name: "a repeated key", rel: "behaviors/x.yaml", src: "bundle: {name: x}\ntools: []\ntools: []\n", want: []string{"3:bundle/duplicate-key"}},
		{name: "deep nesting is cut", rel: "behaviors/x.yaml", src: "bundle: {name: x}\nsession: " + strings.Repeat("[", 80) + strings.Repeat("]", 80) + "\n",
			want: []string{"2:bundle/too-large"}, refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}

// TestParsePositions checks that a diagnostic's range is the key's, in
// UTF-16 characters, with a BOM and CRLF line ends.
func TestParsePositions(t *testing.T) {
	src := "\ufeff---\r\nbundle:\r\n  name: app\r\n  déjà: 1\r\n---\r\n"
	f := bundle.Parse("/r/bundle.md", []byte(src), bundle.Options{Rel: "bundle.md"})
	if len(f.Diagnostics) != 1 {
		t.Fatalf("got %v", f.Diagnostics)
	}
	want := diag.Range{Start: diag.Position{Line: 3, Character: 2}, End: diag.Position{Line: 3, Character: 6}}
	if got := f.Diagnostics[0].Range; got != want {
		t.Errorf("range = %+v, want %+v", got, want)
	}
	if f.Bundle.Name != "app" || f.Bundle.NameRange.Start != (diag.Position{Line: 2, Character: 8}) {
		t.Errorf("name %q at %+v", f.Bundle.Name, f.Bundle.NameRange)
	}
}

// TestParseBundleModel checks what the runtime's Bundle.from_dict keeps.
func TestParseBundleModel(t *testing.T) {
	src := `---
bundle:
  name: app
  version: 2.0.0
includes:
  - foundation
  - bundle: app:behaviors/x
session:
  orchestrator: {module: loop, config: {enabled: yes, on: 1, n: 010}}
tools:
  - module: tool-a
    source: ./modules/a
  - id: second-a
    module: tool-a
agents:
  include: [app:helper]
  inline:
    description: inline agent
context:
  include: [app:context/a.md, context/b.md]
  named: context/c.md
---

  The instruction.

`
	f := bundle.Parse("/r/bundle.md", []byte(src), bundle.Options{Rel: "bundle.md"})
	b := f.Bundle
	if len(f.Diagnostics) != 0 {
		t.Fatalf("diagnostics: %v", f.Diagnostics)
	}
	if got := []string{b.Includes[0].Source, b.Includes[1].Source}; got[0] != "foundation" || got[1] != "app:behaviors/x" {
		t.Errorf("includes %v", got)
	}
	orch := b.Session.(*bundle.Map).Value("orchestrator").(*bundle.Map).Value("config").(*bundle.Map)
	if orch.Value("enabled") != true || orch.Value("n") != int64(8) || orch.Value("true") != int64(1) {
		t.Errorf("YAML 1.1 scalars (on: is the key true): %v", orch.Keys())
	}
	if b.Tools[0].Entry.Value("source") != "/r/modules/a" || b.Tools[1].ID != "second-a" {
		t.Errorf("tools: %v %v", b.Tools[0].Entry.Value("source"), b.Tools[1].ID)
	}
	if len(b.Agents) != 2 || !b.Agents[0].Included || b.Agents[1].Name != "inline" {
		t.Errorf("agents: %+v", b.Agents)
	}
	if len(b.Context) != 3 || !b.Context[0].Namespaced || b.Context[1].Namespaced || !b.Context[2].Direct {
		t.Errorf("context: %+v", b.Context)
	}
	if body := string(f.Text()[f.Body.Start:f.Body.End]); body != "The instruction." {
		t.Errorf("instruction %q", body)
	}
}

// TestResolvePlain checks YAML 1.1 scalars as PyYAML's safe loader reads them.
func TestResolvePlain(t *testing.T) {
	for src, want := range map[string]any{
		"yes": true, "Off": false, "~": nil, "null": nil, "0o17": "0o17", "010": int64(8), "0x1f": int64(31),
		"1_000": int64(1000), "1e3": "1e3", "1.0e+3": bundle.Float(1000), "1.5": bundle.Float(1.5), ".inf": bundle.Float(math.Inf(1)),
		"190:20:30": int64(685230), "2020-01-01": "2020-01-01", "v1.0": "v1.0", "-7": int64(-7),
	} {
		f := bundle.Parse("/r/x.yaml", []byte("bundle: {name: x}\nspawn: {v: "+src+"}\n"), bundle.Options{Kind: bundle.KindBundle})
		got := f.Bundle.Spawn.(*bundle.Map).Value("v")
		if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
			t.Errorf("%s: got %#v, want %#v", src, got, want)
		}
	}
}

// TestMentions checks mentions as the runtime's parser finds them.
func TestMentions(t *testing.T) {
	src := "---\nmeta: {name: a, description: d}\n---\nSee @app:context/a.md.\n" +
		"Mail me@example.com, not @team.\n" +
		"```\n@app:in/fence.md\n```\n" +
		"Inline `@app:in/code.md` and ``@app:kept.md`` and @app:x:\n"
	f := bundle.Parse("/r/agents/a.md", []byte(src), bundle.Options{Rel: "agents/a.md"})
	var got []string
	for _, m := range f.Mentions() {
		got = append(got, fmt.Sprintf("%d:%d:%s", m.Range.Start.Line+1, m.Range.Start.Character+1, m.Text))
	}
	// As the runtime's parse_mentions: "me@example.com" holds the mention
	// @example.com (its e-mail test looks for an address after the @).
	want := "4:5:@app:context/a.md. 5:8:@example.com 5:26:@team. 9:32:@app:kept.md 9:51:@app:x:"
	if strings.Join(got, " ") != want {
		t.Errorf("mentions:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestParseCorpusFixtures checks the txtar fixtures of testdata/parse:
// each file's diagnostics are listed in want (path:line:code).
func TestParseFixtures(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "parse", "*.txtar"))
	if len(paths) == 0 {
		t.Fatal("no fixtures")
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			a, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for _, f := range a.Files {
				if f.Name == "want" {
					want = strings.Fields(string(f.Data))
					continue
				}
				pf := bundle.Parse("/repo/"+f.Name, f.Data, bundle.Options{Rel: f.Name})
				for _, d := range pf.Diagnostics {
					got = append(got, fmt.Sprintf("%s:%d:%s", f.Name, d.Range.Start.Line+1, d.Code))
				}
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }
