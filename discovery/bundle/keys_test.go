package bundle_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/schema"
)

// TestKeysAtIsWhatTheChecksAccept: every key KeysAt gives for a path,
// written in the mapping at that path, draws no unknown-key diagnostic;
// where the schema is strict, a key it does not give does.
func TestKeysAtIsWhatTheChecksAccept(t *testing.T) {
	const item = schema.ItemStep
	for _, tc := range []struct {
		rel  string
		kind bundle.Kind
		path []string
		// doc is the file with %s where the mapping's keys go, each on
		// its line at indent spaces.
		doc    string
		indent int
		open   bool // the runtime takes any key there
	}{
		{"bundle.md", bundle.KindBundle, nil, "---\n%s---\n", 0, false},
		{"bundle.md", bundle.KindBundle, []string{"bundle"}, "---\nbundle:\n%s---\n", 2, false},
		{"behaviors/b.yaml", bundle.KindBundle, []string{"includes", item}, "bundle: {name: b}\nincludes:\n  - bundle: x\n%s", 4, false},
		{"behaviors/b.yaml", bundle.KindBundle, []string{"tools", item}, "bundle: {name: b}\ntools:\n  - module: x\n%s", 4, false},
		{"behaviors/b.yaml", bundle.KindBundle, []string{"session"}, "bundle: {name: b}\nsession:\n%s", 2, true},
		{"behaviors/b.yaml", bundle.KindBundle, []string{"session", "orchestrator"}, "bundle: {name: b}\nsession:\n  orchestrator:\n%s", 4, false},
		{"behaviors/b.yaml", bundle.KindBundle, []string{"spawn"}, "bundle: {name: b}\nspawn:\n%s", 2, false},
		{"agents/a.md", bundle.KindAgent, nil, "---\nmeta: {name: a, description: d}\n%s---\n", 0, false},
		{"agents/a.md", bundle.KindAgent, []string{"meta"}, "---\nmeta:\n  description: d\n%s---\n", 2, false},
		{"agents/a.md", bundle.KindAgent, []string{"hooks", item}, "---\nmeta: {name: a, description: d}\nhooks:\n  - module: x\n%s---\n", 4, false},
		{"modes/m.md", bundle.KindMode, nil, "---\n%s---\n", 0, false},
		{"modes/m.md", bundle.KindMode, []string{"mode"}, "---\nmode:\n%s---\n", 2, false},
		{"modes/m.md", bundle.KindMode, []string{"mode", "tools"}, "---\nmode:\n  name: m\n  tools:\n%s---\n", 4, false},
		{"modes/m.md", bundle.KindMode, []string{"mode", "contributes"}, "---\nmode:\n  name: m\n  contributes:\n%s---\n", 4, false},
		{"skills/s/SKILL.md", bundle.KindSkill, nil, "---\n%s---\n", 0, false},
		{"recipes/r.yaml", bundle.KindRecipe, nil, "%s", 0, false},
		{"recipes/r.yaml", bundle.KindRecipe, []string{"recursion"}, "name: r\nrecursion:\n%s", 2, false},
		{"recipes/r.yaml", bundle.KindRecipe, []string{"steps", item}, "name: r\nsteps:\n  - id: a\n%s", 4, false},
		{"recipes/r.yaml", bundle.KindRecipe, []string{"steps", item, "while_steps", item}, "name: r\nsteps:\n  - id: a\n    while_steps:\n      - id: b\n%s", 8, false},
		{"recipes/r.yaml", bundle.KindRecipe, []string{"stages", item}, "name: r\nstages:\n  - name: s\n%s", 4, false},
		{"recipes/r.yaml", bundle.KindRecipe, []string{"stages", item, "approval"}, "name: r\nstages:\n  - name: s\n    approval:\n%s", 6, false},
		{"recipes/r.yaml", bundle.KindRecipe, []string{"stages", item, "steps", item}, "name: r\nstages:\n  - name: s\n    steps:\n      - id: a\n%s", 8, false},
	} {
		t.Run(tc.rel+":"+strings.Join(tc.path, "."), func(t *testing.T) {
			keys := bundle.KeysAt(tc.kind, tc.path)
			if len(keys) == 0 {
				t.Fatal("no keys")
			}
			unknown := func(keys ...string) []string {
				var b strings.Builder
				for _, k := range keys {
					fmt.Fprintf(&b, "%s%s: null\n", strings.Repeat(" ", tc.indent), k)
				}
				src := fmt.Sprintf(tc.doc, b.String())
				f := bundle.Parse(filepath.Join("/repo", tc.rel), []byte(src), bundle.Options{Rel: tc.rel})
				if f.Kind != tc.kind {
					t.Fatalf("parsed as %v, want %v", f.Kind, tc.kind)
				}
				var out []string
				for _, d := range f.Diagnostics {
					if d.Code == bundle.CodeUnknownKey {
						out = append(out, d.Message)
					}
				}
				return out
			}
			if got := unknown(keys...); len(got) > 0 {
				t.Errorf("the keys %v draw %q", keys, got)
			}
			if got := unknown("zzz-unknown"); len(got) == 0 && !tc.open {
				t.Errorf("a key KeysAt does not give draws no diagnostic")
			}
		})
	}
	if got := bundle.KeysAt(bundle.KindBundle, []string{"tools", item, "config"}); got != nil {
		t.Errorf("a module's config: %v, want none", got)
	}
}
