package analysis_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
)

// applyEdits applies the edits of one file to text, as an editor does:
// each range in the text as it was.
func applyEdits(t *testing.T, text string, edits []query.TextEdit) string {
	t.Helper()
	type span struct {
		start, end int
		s          string
	}
	var spans []span
	lines := syntax.NewLineIndex([]byte(text))
	for _, e := range edits {
		s, end := lines.PositionOffset(e.Range.Start), lines.PositionOffset(e.Range.End)
		if s > end {
			t.Fatalf("edit %+v ends before it starts", e)
		}
		spans = append(spans, span{s, end, e.NewText})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start > spans[j].start })
	for i, sp := range spans {
		if i > 0 && sp.end > spans[i-1].start {
			t.Fatalf("edits overlap: %+v", edits)
		}
		text = text[:sp.start] + sp.s + text[sp.end:]
	}
	return text
}

func titles(actions []query.CodeAction) []string {
	var out []string
	for _, a := range actions {
		out = append(out, a.Title)
	}
	return out
}

const devText = `---
profile:
  name: dev
  version: 1.0.0
  description: Development
  extends: foundation:base
agents:
  - helper
  - explorer
---
See @foundation:context/shared.md and @mine:context/notes.md.
`

const pyText = `[project]
name = "mine"
version = "0.3.0"
description = "A collection being written"

[tool.amplifier.collection]
author = "me"

[tool.amplifier.collection.requires]
foundation = "^1.0.0"
`

// TestCodeActions applies each fix and rewrite to a file of the fixture
// and checks the text that results, and that its diagnostic is gone.
func TestCodeActions(t *testing.T) {
	dir := unpack(t, "actions.txtar")
	w := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")}),
		analysis.WorkspaceOptions{Project: filepath.Join(dir, "project")})
	dev := "project/.amplifier/collections/mine/profiles/dev.md"
	tests := []struct {
		name   string
		file   string
		text   string
		at     string // the cursor is at the start of its first occurrence
		title  string // the action applied
		others []string
		want   string
	}{
		{name: "misspelt key", file: dev, text: strings.Replace(devText, "agents:", "agnets:", 1), at: "agnets",
			title: "Change `agnets` to `agents`", others: []string{"Remove the unknown key `agnets`"}, want: devText},
		{name: "unknown key removed with its value", file: dev,
			text: strings.Replace(devText, "---\nSee", "colour:\n  - red\n  # and\n  - blue\n---\nSee", 1), at: "colour",
			title: "Remove the unknown key `colour`", want: devText},
		{name: "misspelt nested key", file: dev, text: strings.Replace(devText, "  name:", "  nmae:", 1), at: "nmae",
			title: "Change `nmae` to `name`", want: devText},
		{name: "misspelt key of a list item", file: dev,
			text:  strings.Replace(devText, "agents:", "tools:\n  - module: tool-web\n    sorce: git+https://example.com/t@main\nagents:", 1),
			at:    "sorce",
			title: "Change `sorce` to `source`",
			want:  strings.Replace(devText, "agents:", "tools:\n  - module: tool-web\n    source: git+https://example.com/t@main\nagents:", 1)},
		{name: "missing nested key", file: dev, text: strings.Replace(devText, "  description: Development\n", "", 1), at: "profile",
			title: "Add the missing key `description`",
			want:  strings.Replace(strings.Replace(devText, "  description: Development\n", "", 1), "foundation:base\n", "foundation:base\n  description: \"\"\n", 1)},
		{name: "missing session of a root profile", file: "project/.amplifier/collections/mine/profiles/solo.md",
			text: "---\nprofile:\n  name: solo\n  version: 1.0.0\n  description: Alone\n---\nBody.\n", at: "---",
			title: "Add the missing key `session`",
			want:  "---\nprofile:\n  name: solo\n  version: 1.0.0\n  description: Alone\nsession:\n  orchestrator:\n    module: \"\"\n  context:\n    module: \"\"\n---\nBody.\n"},
		{name: "missing module of a list item", file: dev,
			text:  strings.Replace(devText, "agents:", "tools:\n  - source: git+https://example.com/t@main\n    config:\n      x: 1\nagents:", 1),
			at:    "source",
			title: "Add the missing key `module`",
			want:  strings.Replace(devText, "agents:", "tools:\n  - source: git+https://example.com/t@main\n    config:\n      x: 1\n    module: \"\"\nagents:", 1)},
		{name: "agent without description", file: "project/.amplifier/collections/mine/agents/helper.md", text: "---\nname: helper\n---\nHelp.\n", at: "---",
			title: "Add the missing key `description`", want: "---\nname: helper\ndescription: \"\"\n---\nHelp.\n"},
		{name: "bundle without default_provider", file: "work/bundle/bundle.md", text: "---\nbundle:\n  name: b\n---\n", at: "---",
			title: "Add the missing key `default_provider`", want: "---\nbundle:\n  name: b\ndefault_provider: \"\"\n---\n"},
		{name: "name that is not the file's", file: dev, text: strings.Replace(devText, "name: dev", "name: devv", 1), at: "devv",
			title: "Rename to `dev`, as the file is named", want: devText},
		{name: "misspelt agent", file: dev, text: strings.Replace(devText, "- helper", "- helpr", 1), at: "helpr",
			title: "Change `helpr` to `helper`", want: devText},
		{name: "misspelt agent of a collection", file: dev, text: strings.Replace(devText, "- explorer", "- foundation:critc", 1), at: "foundation:critc",
			title: "Change `foundation:critc` to `foundation:critic`", want: strings.Replace(devText, "- explorer", "- foundation:critic", 1)},
		{name: "misspelt collection of an agent", file: dev, text: strings.Replace(devText, "- explorer", "- foundaton:critic", 1), at: "foundaton:critic",
			title: "Change `foundaton:critic` to `foundation:critic`", want: strings.Replace(devText, "- explorer", "- foundation:critic", 1)},
		{name: "bare profile of another collection", file: dev, text: strings.Replace(devText, "foundation:base", "base", 1), at: "base",
			title: "Change `base` to `foundation:base`", want: devText},
		{name: "misspelt collection of extends", file: dev, text: strings.Replace(devText, "foundation:base", "foundaton:base", 1), at: "foundaton",
			title: "Change `foundaton:base` to `foundation:base`", want: devText},
		{name: "misspelt profile of extends", file: dev, text: strings.Replace(devText, "foundation:base", "foundation:bsae", 1), at: "foundation:bsae",
			title: "Change `foundation:bsae` to `foundation:base`", want: devText},
		{name: "quoted extends", file: dev, text: strings.Replace(devText, "foundation:base", `"foundation:bsae"`, 1), at: "foundation:bsae",
			title: "Change `foundation:bsae` to `foundation:base`", want: strings.Replace(devText, "foundation:base", `"foundation:base"`, 1)},
		{name: "misspelt mention path", file: dev, text: strings.Replace(devText, "context/shared.md", "context/shard.md", 1), at: "@foundation:context/shard",
			title: "Change `@foundation:context/shard.md` to `@foundation:context/shared.md`", want: devText},
		{name: "misspelt mention collection", file: dev, text: strings.Replace(devText, "@foundation:", "@foundaton:", 1), at: "@foundaton",
			title: "Change `@foundaton:context/shared.md` to `@foundation:context/shared.md`", want: devText},
		{name: "bare agent of another collection qualified", file: dev, text: devText, at: "explorer",
			title: "Qualify as `foundation:explorer`", want: strings.Replace(devText, "- explorer", "- foundation:explorer", 1)},
		{name: "misspelt collection key", file: "project/.amplifier/collections/mine/pyproject.toml", text: strings.Replace(pyText, "author", "autor", 1), at: "autor",
			title: "Change `autor` to `author`", others: []string{"Remove the unknown key `autor`"}, want: pyText},
		{name: "unknown collection key removed", file: "project/.amplifier/collections/mine/pyproject.toml",
			text: strings.Replace(pyText, "author = \"me\"\n", "author = \"me\"\ncolour = [\"red\", \"blue\"]\n", 1), at: "colour",
			title: "Remove the unknown key `colour`", want: pyText},
		{name: "missing project field", file: "project/.amplifier/collections/mine/pyproject.toml",
			text: strings.Replace(pyText, "description = \"A collection being written\"\n", "", 1), at: "[project]",
			title: "Add the missing field `description`",
			want:  strings.Replace(pyText, "description = \"A collection being written\"\n", "description = \"TODO: what the collection is for\"\n", 1)},
		{name: "no project table", file: "project/.amplifier/collections/mine/pyproject.toml", text: "[tool.amplifier.collection]\nauthor = \"me\"\n", at: "[tool",
			title: "Add [project] with name, version and description",
			want:  "[project]\nname = \"mine\"\nversion = \"0.1.0\"\ndescription = \"TODO: what the collection is for\"\n\n[tool.amplifier.collection]\nauthor = \"me\"\n"},
		{name: "invalid collection name", file: "project/.amplifier/collections/mine/pyproject.toml", text: strings.Replace(pyText, `"mine"`, `"My_Mine"`, 1), at: "My_Mine",
			title: "Change to `my-mine`", want: strings.Replace(pyText, `"mine"`, `"my-mine"`, 1)},
		{name: "misspelt required collection", file: "project/.amplifier/collections/mine/pyproject.toml", text: strings.Replace(pyText, "foundation =", "foundaton =", 1), at: "^1.0",
			title: "Change `foundaton` to `foundation`", want: pyText},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			i := strings.Index(tc.text, tc.at)
			if i < 0 {
				t.Fatalf("%q not in the text", tc.at)
			}
			pos := syntax.NewLineIndex([]byte(tc.text)).Position(i)
			actions := w.CodeActions(ctx, path, []byte(tc.text), nil, diag.Range{Start: pos, End: pos})
			var chosen *query.CodeAction
			for i, a := range actions {
				if a.Title == tc.title {
					chosen = &actions[i]
				}
			}
			if chosen == nil {
				t.Fatalf("no action %q among %q", tc.title, titles(actions))
			}
			for _, o := range tc.others {
				if !slices.Contains(titles(actions), o) {
					t.Errorf("no action %q among %q", o, titles(actions))
				}
			}
			for _, e := range chosen.Edits {
				if e.Path != path {
					t.Errorf("an edit of another file: %+v", e)
				}
			}
			got := applyEdits(t, tc.text, chosen.Edits)
			if got != tc.want {
				t.Fatalf("after %q:\n%s\nwant:\n%s", tc.title, got, tc.want)
			}
			before := w.Diagnose(ctx, path, []byte(tc.text), nil)
			after := w.Diagnose(ctx, path, []byte(got), nil)
			switch {
			case chosen.Kind == query.ActionQuickFix && chosen.Diagnostic == nil:
				t.Errorf("a fix without its diagnostic: %+v", chosen)
			case chosen.Kind == query.ActionQuickFix:
				for _, d := range after {
					if d.Code == chosen.Diagnostic.Code && d.Message == chosen.Diagnostic.Message {
						t.Errorf("still there after the fix: %v", d)
					}
				}
				if len(after) >= len(before) {
					t.Errorf("diagnostics before %v, after %v", before, after)
				}
			case chosen.Kind == query.ActionRewrite:
				if fmt.Sprint(before) != fmt.Sprint(after) {
					t.Errorf("a rewrite changed the diagnostics: %v, then %v", before, after)
				}
			default:
				t.Errorf("kind %q", chosen.Kind)
			}
		})
	}
}

// TestNoCodeActions: a clean file, a cursor away from any diagnostic, and
// unknown keys that cannot be removed by whole lines get no such action.
func TestNoCodeActions(t *testing.T) {
	dir := unpack(t, "actions.txtar")
	w := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")}),
		analysis.WorkspaceOptions{Project: filepath.Join(dir, "project")})
	path := filepath.Join(dir, "project/.amplifier/collections/mine/profiles/dev.md")
	ctx := context.Background()
	at := func(text, marker string) diag.Range {
		p := syntax.NewLineIndex([]byte(text)).Position(strings.Index(text, marker))
		return diag.Range{Start: p, End: p}
	}
	if got := w.CodeActions(ctx, path, []byte(devText), nil, at(devText, "version")); len(got) != 0 {
		t.Errorf("on a clean file: %q", titles(got))
	}
	text := strings.Replace(devText, "- helper", "- helpr", 1)
	if got := w.CodeActions(ctx, path, []byte(text), nil, at(text, "version")); len(got) != 0 {
		t.Errorf("away from the diagnostic: %q", titles(got))
	}
	text = strings.Replace(devText, "agents:", "ui: {colour: red}\nagents:", 1)
	if got := titles(w.CodeActions(ctx, path, []byte(text), nil, at(text, "colour"))); slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "Remove") }) {
		t.Errorf("a key of a flow mapping: %q", got)
	}
	text = strings.Replace(devText, "- helper", "- zzzzzz", 1)
	if got := w.CodeActions(ctx, path, []byte(text), nil, at(text, "zzzzzz")); len(got) != 0 {
		t.Errorf("nothing close to a name: %q", titles(got))
	}
	if got := w.CodeActions(ctx, filepath.Join(dir, "work/notes.txt"), []byte("x"), nil, diag.Range{}); got != nil {
		t.Errorf("a file of no kind: %q", titles(got))
	}
}

// TestReferences finds who extends a profile, who lists an agent, who
// mentions a file and who requires a collection, from the file or from
// a reference to it, with the unsaved buffers counted.
func TestReferences(t *testing.T) {
	dir := unpack(t, "actions.txtar")
	w := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")}),
		analysis.WorkspaceOptions{Project: filepath.Join(dir, "project")})
	foundation := filepath.Join(dir, "project/.amplifier/collections/foundation")
	dev := filepath.Join(dir, "project/.amplifier/collections/mine/profiles/dev.md")
	review := filepath.Join(foundation, "profiles/review.md")
	ctx := context.Background()
	where := func(locs []query.Location) []string {
		var out []string
		for _, l := range locs {
			rel, _ := filepath.Rel(dir, l.Path)
			out = append(out, fmt.Sprintf("%s:%d:%d", filepath.ToSlash(rel), l.Range.Start.Line, l.Range.Start.Character))
		}
		return out
	}
	file := func(p string) string { return read(t, p) }
	tests := []struct {
		name    string
		path    string
		text    string
		at      string // "" for the file itself
		overlay map[string]string
		decl    bool
		want    []string
	}{
		{name: "profile extended from its own collection and another", path: filepath.Join(foundation, "profiles/base.md"),
			want: []string{"project/.amplifier/collections/foundation/profiles/review.md:5:11", "project/.amplifier/collections/mine/profiles/dev.md:5:11"}},
		{name: "from an extends value", path: dev, text: devText, at: "foundation:base",
			want: []string{"project/.amplifier/collections/foundation/profiles/review.md:5:11", "project/.amplifier/collections/mine/profiles/dev.md:5:11"}},
		{name: "with the declaration", path: review, at: "", decl: true,
			want: []string{"project/.amplifier/collections/foundation/profiles/review.md:0:0"}},
		{name: "agent listed by profiles", path: filepath.Join(foundation, "agents/explorer.md"),
			want: []string{"project/.amplifier/collections/mine/profiles/dev.md:8:4"}},
		{name: "agent listed in an unsaved buffer", path: filepath.Join(foundation, "agents/critic.md"),
			overlay: map[string]string{dev: strings.Replace(devText, "- helper", "- critic", 1)},
			want:    []string{"project/.amplifier/collections/foundation/profiles/review.md:7:4", "project/.amplifier/collections/mine/profiles/dev.md:7:4"}},
		{name: "context mentioned", path: filepath.Join(foundation, "context/shared.md"),
			want: []string{"project/.amplifier/collections/foundation/profiles/review.md:9:5", "project/.amplifier/collections/mine/profiles/dev.md:10:4"}},
		{name: "collection required", path: filepath.Join(foundation, "pyproject.toml"),
			want: []string{"project/.amplifier/collections/mine/pyproject.toml:9:13"}},
		{name: "from a requires entry", path: filepath.Join(dir, "project/.amplifier/collections/mine/pyproject.toml"), text: pyText, at: "foundation =",
			want: []string{"project/.amplifier/collections/mine/pyproject.toml:9:13"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.text
			if text == "" {
				text = file(tc.path)
			}
			var pos diag.Position
			if tc.at != "" {
				pos = syntax.NewLineIndex([]byte(text)).Position(strings.Index(text, tc.at) + 1)
			}
			overlay := map[string][]byte{}
			for p, s := range tc.overlay {
				overlay[p] = []byte(s)
			}
			got := where(w.References(ctx, tc.path, []byte(text), overlay, pos, tc.decl))
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestUnsafeFixes: a fix that would make a duplicate ([helper, helpr]
// made [helper, helper], explorr made explorer beside foundation:explorer)
// or write a key twice is left out and said, unless asked for.
func TestUnsafeFixes(t *testing.T) {
	dir := unpack(t, "actions.txtar")
	local := analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")})
	project := filepath.Join(dir, "project")
	w := analysis.NewWorkspace(local, analysis.WorkspaceOptions{Project: project})
	ctx := context.Background()
	v, err := local.View(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	dev := "project/.amplifier/collections/mine/profiles/dev.md"
	py := "project/.amplifier/collections/mine/pyproject.toml"
	tests := []struct {
		name, file, text string
		want             string // the text after the safe fixes
		why              string // "" when nothing is unsafe
	}{
		{"a duplicate item", dev, strings.Replace(devText, "  - helper\n", "  - helper\n  - helpr\n", 1),
			"", "it would write helper twice in the list"},
		{"the same agent, spelt otherwise", dev, strings.Replace(devText, "  - helper\n", "  - helper\n  - foundation:explorer\n  - explorr\n", 1),
			"", "it would write foundation:explorer twice in the list"},
		{"a key written twice", py, strings.Replace(pyText, `author = "me"`, "author = \"me\"\nautor = \"you\"", 1),
			"", "the file would not parse after it"},
		{"safe beside it", dev, strings.Replace(devText, "  - helper\n", "  - helpr\n", 1), devText, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			text := []byte(tc.text)
			ds := w.Diagnose(ctx, path, text, nil)
			edits, skipped := w.Fixes(ctx, v, path, text, ds, false)
			got, err := analysis.ApplyEdits(text, edits)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = tc.text
			}
			if string(got) != want {
				t.Errorf("after the safe fixes:\n%s\nwant:\n%s", got, want)
			}
			if tc.why == "" {
				if len(skipped) != 0 {
					t.Errorf("skipped %+v, want none", skipped)
				}
				return
			}
			if len(skipped) != 1 || !strings.Contains(skipped[0].Why, tc.why) || skipped[0].Title == "" {
				t.Fatalf("skipped %+v, want one saying %q", skipped, tc.why)
			}
			// Asked for, it is made.
			all, rest := w.Fixes(ctx, v, path, text, ds, true)
			if len(rest) != 0 || len(all) != len(edits)+1 {
				t.Errorf("with unsafe fixes: %d edits, %d left; want %d and none", len(all), len(rest), len(edits)+1)
			}
		})
	}
}

// TestFixes: the fixes applied without asking are the renames and the
// corrections to one close candidate the code actions offer; removals,
// placeholders and choices are left to the author. ApplyEdits applies
// them.
func TestFixes(t *testing.T) {
	dir := unpack(t, "actions.txtar")
	local := analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")})
	project := filepath.Join(dir, "project")
	w := analysis.NewWorkspace(local, analysis.WorkspaceOptions{Project: project})
	ctx := context.Background()
	v, err := local.View(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, text, want string
	}{
		{"profile", "project/.amplifier/collections/mine/profiles/dev.md",
			strings.NewReplacer("agents:", "agnets:", "- helper", "- helpr", "context/shared.md", "context/shard.md",
				"foundation:base", "foundaton:base", "name: dev", "name: devv").Replace(devText),
			strings.Replace(devText, "name: dev", "name: devv", 1)},
		{"left to the author", "project/.amplifier/collections/mine/profiles/dev.md",
			strings.Replace(strings.Replace(devText, "  description: Development\n", "", 1), "---\nSee", "colour: red\n---\nSee", 1),
			strings.Replace(strings.Replace(devText, "  description: Development\n", "", 1), "---\nSee", "colour: red\n---\nSee", 1)},
		{"pyproject", "project/.amplifier/collections/mine/pyproject.toml",
			strings.NewReplacer("author", "autor", "foundation =", "foundaton =").Replace(pyText), pyText},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A fix can bring another to light (agnets: renamed, its
			// misspelt agent is seen): fix until nothing is left to.
			path := filepath.Join(dir, tc.file)
			got := []byte(tc.text)
			for range 3 {
				edits, _ := w.Fixes(ctx, v, path, got, w.Diagnose(ctx, path, got, nil), false)
				if len(edits) == 0 {
					break
				}
				var err error
				if got, err = analysis.ApplyEdits(got, edits); err != nil {
					t.Fatal(err)
				}
			}
			if string(got) != tc.want {
				t.Errorf("after the fixes:\n%s\nwant:\n%s", got, tc.want)
			}
			if again, _ := w.Fixes(ctx, v, path, got, w.Diagnose(ctx, path, got, nil), false); len(again) != 0 {
				t.Errorf("fixes left to make after fixing: %+v", again)
			}
		})
	}
	if _, err := analysis.ApplyEdits([]byte("abc\n"), []query.TextEdit{
		{Range: diag.Range{Start: diag.Position{Character: 1}, End: diag.Position{Character: 3}}, NewText: "x"},
		{Range: diag.Range{Start: diag.Position{Character: 2}, End: diag.Position{Character: 3}}, NewText: "y"},
	}); err == nil {
		t.Error("ApplyEdits took overlapping edits")
	}
}
