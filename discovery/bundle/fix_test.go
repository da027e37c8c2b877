package bundle_test

import (
	"sort"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle"
)

// applyFixes returns src with every fix of f made.
func applyFixes(src []byte, fixes []bundle.Fix) string {
	fs := append([]bundle.Fix(nil), fixes...)
	sort.Slice(fs, func(i, j int) bool { return fs[i].Start > fs[j].Start })
	out := string(src)
	for _, x := range fs {
		out = out[:x.Start] + x.Text + out[x.End:]
	}
	return out
}

// TestFixes checks the fixes that need no choice, and that the mistakes
// whose fix is a choice have none.
func TestFixes(t *testing.T) {
	for _, tc := range []struct {
		name, rel, src, want string
	}{
		{"behavior: renamed bundle:", "bundle.md",
			"---\nbundle:\n  name: app\nincludes:\n  - behavior: app:behaviors/x\n---\n",
			"---\nbundle:\n  name: app\nincludes:\n  - bundle: app:behaviors/x\n---\n"},
		{"a leading @ removed, quoted either way", "behaviors/x.yaml",
			"bundle: {name: x}\nincludes:\n  - bundle: \"@app:behaviors/y\"\n  - '@app:behaviors/z'\nagents:\n  include: [\"@app:helper\"]\ncontext:\n  include:\n    - \"@app:context/a.md\"\n",
			"bundle: {name: x}\nincludes:\n  - bundle: \"app:behaviors/y\"\n  - 'app:behaviors/z'\nagents:\n  include: [\"app:helper\"]\ncontext:\n  include:\n    - \"app:context/a.md\"\n"},
		{"a near miss renamed", "agents/a.md",
			"\ufeff---\nmeta:\n  name: a\n  descripton: Helps\n---\nBody\n",
			"\ufeff---\nmeta:\n  name: a\n  description: Helps\n---\nBody\n"},
		{"a near miss of a key that is there: no fix", "bundle.md",
			"---\nbundle:\n  name: app\n  version: 1.0.0\n  verison: 2.0.0\n---\n", ""},
		{"an entry with two keys: no fix", "bundle.md",
			"---\nbundle: {name: app}\nincludes:\n  - name: x\n    behavior: ./x.yaml\n---\n", ""},
		{"behavior: with a mapping: no fix", "bundle.md",
			"---\nbundle: {name: app}\nincludes:\n  - behavior: {uri: ./x.yaml}\n---\n", ""},
		{"an unknown key far from any: no fix", "bundle.md",
			"---\nbundle: {name: app}\nzzzzzz: 1\n---\n", ""},
		{"a quoted key: no fix", "bundle.md",
			"---\nbundle:\n  name: app\n  \"verison\": 1.0.0\n---\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := bundle.Parse("/repo/"+tc.rel, []byte(tc.src), bundle.Options{Rel: tc.rel})
			if tc.want == "" {
				if len(f.Fixes) != 0 {
					t.Errorf("fixes %+v, want none", f.Fixes)
				}
				return
			}
			if got := applyFixes([]byte(tc.src), f.Fixes); got != tc.want {
				t.Errorf("fixed:\n%s\nwant:\n%s", got, tc.want)
			}
			for _, x := range f.Fixes {
				found := false
				for _, d := range f.Diagnostics {
					found = found || d.Code == x.Code && d.Range == x.At
				}
				if !found {
					t.Errorf("fix %+v fixes no diagnostic of %v", x, f.Diagnostics)
				}
			}
			if again := bundle.Parse("/repo/"+tc.rel, []byte(tc.want), bundle.Options{Rel: tc.rel}); len(again.Fixes) != 0 || len(again.Diagnostics) != 0 {
				t.Errorf("after the fixes: %v, fixes %+v", again.Diagnostics, again.Fixes)
			}
		})
	}
}
