package analysis_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
)

// bundleWorkspace returns a Workspace over the bundle repository of
// testdata/bundleactions.txtar, and the repository's directory.
func bundleWorkspace(t *testing.T) (*analysis.Workspace, string) {
	t.Helper()
	dir := unpack(t, "bundleactions.txtar")
	home := filepath.Join(dir, "home")
	env := compose.Env{Home: home, AmplifierHome: filepath.Join(home, ".amplifier"), NoWellKnown: true}
	w := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: home}), analysis.WorkspaceOptions{Bundles: env})
	return w, filepath.Join(dir, "repo")
}

// wholeFile is a range over every line of a file of a fixture.
var wholeFile = diag.Range{End: diag.Position{Line: 100}}

// TestBundleCodeActions: each diagnostic of a bundle repository's
// document that has a fix that needs no choice gets one preferred quick
// fix, whose edit makes the fix; the file fixed has none left.
func TestBundleCodeActions(t *testing.T) {
	w, repo := bundleWorkspace(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		file    string
		replace []string // the buffer: the file with these replaced
		want    []string // "code: title" of each action
		text    string   // the text after every edit
	}{
		{name: "a behavior: key and a trailing dot", file: "bundle.md",
			want: []string{
				"bundle/include-without-bundle-key: Change `behavior:` to `bundle:`, so that the runtime includes the entry",
				"bundle/mention-punctuation: Write `(@demo:agents/reviewer.md).`, so that the runtime reads the mention without the punctuation",
			},
			text: strings.NewReplacer("- behavior:", "- bundle:", "as @demo:agents/reviewer.md.", "as (@demo:agents/reviewer.md).").Replace(read(t, filepath.Join(repo, "bundle.md")))},
		{name: "includes under bundle: and an @", file: "behaviors/extra.yaml",
			want: []string{
				"bundle/includes-under-bundle: Move `includes:` out of `bundle:`, to the top level",
				"bundle/at-in-yaml: Remove the leading `@`",
			},
			text: "bundle:\n  name: extra\n  version: 1.0.0\n  description: More\nincludes:\n  - bundle: demo:behaviors/review\nagents:\n  include:\n    - \"demo:reviewer\"\n"},
		{name: "a misspelt agent and a misspelt include", file: "bundle.md",
			replace: []string{"- behavior: demo:behaviors/extra", "- bundle: demo:behaviors/extr", "- demo:reviewer", "- \"demo:reviewr\"", "as @demo:agents/reviewer.md.", "as @demo:agents/reviewer.md"},
			want: []string{
				"bundle/include-unresolved: Change `demo:behaviors/extr` to `demo:behaviors/extra`",
				"bundle/agent-unresolved: Change `demo:reviewr` to `demo:reviewer`",
			},
			text: strings.NewReplacer("- behavior: demo:behaviors/extra", "- bundle: demo:behaviors/extra", "- demo:reviewer", "- \"demo:reviewer\"", "as @demo:agents/reviewer.md.", "as @demo:agents/reviewer.md").Replace(read(t, filepath.Join(repo, "bundle.md")))},
		{name: "a misspelt namespace", file: "behaviors/review.yaml",
			replace: []string{"agents:", "includes:\n  - demi:behaviors/extra\nagents:"},
			want:    []string{"bundle/include-unresolved: Change `demi:behaviors/extra` to `demo:behaviors/extra`"},
			text:    strings.Replace(read(t, filepath.Join(repo, "behaviors/review.yaml")), "agents:", "includes:\n  - demo:behaviors/extra\nagents:", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(repo, tc.file)
			text := []byte(strings.NewReplacer(tc.replace...).Replace(read(t, path)))
			actions := w.CodeActions(ctx, path, text, nil, wholeFile)
			var got []string
			var edits []query.TextEdit
			for _, a := range actions {
				got = append(got, a.Diagnostic.Code+": "+a.Title)
				if a.Kind != query.ActionQuickFix || !a.Preferred || len(a.Edits) != 1 || a.Edits[0].Path != path {
					t.Errorf("%q: kind %s, preferred %v, edits %+v", a.Title, a.Kind, a.Preferred, a.Edits)
				}
				edits = append(edits, a.Edits...)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("actions\n%q\nwant\n%q", got, tc.want)
			}
			sortEdits(edits)
			fixed, err := analysis.ApplyEdits(text, edits)
			if err != nil {
				t.Fatal(err)
			}
			if string(fixed) != tc.text {
				t.Errorf("fixed:\n%s\nwant:\n%s", fixed, tc.text)
			}
			if ds := w.Diagnose(ctx, path, fixed, nil); len(ds) != 0 {
				t.Errorf("after the fixes: %v", ds)
			}
			// SafeFixes, as fix-on-save asks, makes the same edits.
			safe := w.SafeFixes(ctx, path, text, nil, w.Diagnose(ctx, path, text, nil))
			if fmt.Sprint(safe) != fmt.Sprint(edits) {
				t.Errorf("SafeFixes %+v, want %+v", safe, edits)
			}
		})
	}

	// A name near two agents is the author's choice.
	path := filepath.Join(repo, "behaviors/review.yaml")
	text := []byte(strings.Replace(read(t, path), "- demo:reviewer", "- demo:helper-c", 1))
	if ds := w.Diagnose(ctx, path, text, nil); len(ds) != 1 || ds[0].Code != "bundle/agent-unresolved" {
		t.Errorf("diagnostics %v, want the agent unresolved", ds)
	}
	if got := w.CodeActions(ctx, path, text, nil, wholeFile); len(got) != 0 {
		t.Errorf("actions for a name near two: %+v", got)
	}

	// Only the diagnostics in the range asked about: the second line of
	// the behavior has none.
	path = filepath.Join(repo, "behaviors/extra.yaml")
	line := diag.Range{Start: diag.Position{Line: 1}, End: diag.Position{Line: 1, Character: 3}}
	if got := w.CodeActions(ctx, path, []byte(read(t, path)), nil, line); len(got) != 0 {
		t.Errorf("actions on line 2: %+v", got)
	}
}

// sortEdits sorts edits of one file by where they start.
func sortEdits(edits []query.TextEdit) {
	for i := range edits {
		for j := i + 1; j < len(edits); j++ {
			a, b := edits[j].Range.Start, edits[i].Range.Start
			if a.Line < b.Line || a.Line == b.Line && a.Character < b.Character {
				edits[i], edits[j] = edits[j], edits[i]
			}
		}
	}
}
