package bundle_test

import (
	"fmt"
	"sort"
	"strings"
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
		{"includes moved out of bundle:", "bundle.md",
			"---\nbundle:\n  name: app\n  includes:\n    - bundle: app:behaviors/x\n\n    - app:behaviors/y\n  version: 1.0.0\nagents:\n  include: [app:a]\n---\nBody\n",
			"---\nbundle:\n  name: app\n  version: 1.0.0\nincludes:\n  - bundle: app:behaviors/x\n\n  - app:behaviors/y\nagents:\n  include: [app:a]\n---\nBody\n"},
		{"includes moved out of bundle:, at the end of a YAML file with no newline", "behaviors/x.yaml",
			"bundle:\n  name: x\n  includes:\n  - bundle: app:behaviors/y",
			"bundle:\n  name: x\nincludes:\n- bundle: app:behaviors/y"},
		{"includes under bundle: and at the top level: no fix", "bundle.md",
			"---\nbundle:\n  name: app\n  includes:\n    - app:behaviors/x\nincludes:\n  - app:behaviors/y\n---\n", ""},
		{"includes under a flow bundle: no fix", "bundle.md",
			"---\nbundle: {name: app, includes: [app:behaviors/x]}\n---\n", ""},
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

// TestNodes checks the values of a file with their places.
func TestNodes(t *testing.T) {
	src := "\ufeff---\nbundle: {name: app}\ntools:\n  - module: tool-x\n    source: \"./x\"\n    config: {n: 1, on: yes, s: \"@app:y\"}\n---\nBody\n"
	f := bundle.Parse("/repo/bundle.md", []byte(src), bundle.Options{Rel: "bundle.md"})
	var got []string
	for _, n := range f.Nodes() {
		s := fmt.Sprintf("%s@%d:%d", strings.Join(n.Path, "."), n.Range.Start.Line+1, n.Range.Start.Character+1)
		if n.IsString {
			s += "=" + n.String
		}
		got = append(got, s)
	}
	want := "@2:1 bundle@2:9 bundle.name@2:16=app tools@4:3 tools.0@4:5 tools.0.module@4:13=tool-x tools.0.source@5:13=./x " +
		"tools.0.config@6:13 tools.0.config.n@6:17 tools.0.config.on@6:24 tools.0.config.s@6:32=@app:y"
	if strings.Join(got, " ") != want {
		t.Errorf("nodes:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if n := bundle.Parse("/repo/x.yaml", []byte("a: [\n"), bundle.Options{}).Nodes(); n != nil {
		t.Errorf("nodes of broken YAML: %v", n)
	}
}
