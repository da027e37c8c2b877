package analysis_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query/analysis"
)

// TestBundleCompletion: in the documents of a bundle repository, the
// keys the strict schema accepts at the cursor's mapping (less those
// written), the context files of the repository and of a bundle it
// includes in context.include and after an @ in a body, and after module: the module ids of the section that
// the repository's bundles and what they include mount.
func TestBundleCompletion(t *testing.T) {
	dir := unpack(t, "bundlecomplete.txtar")
	home := filepath.Join(dir, "home")
	repo := filepath.Join(dir, "repo")
	w := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: home}),
		analysis.WorkspaceOptions{Bundles: compose.Env{Home: home, AmplifierHome: filepath.Join(home, ".amplifier"), NoWellKnown: true}})
	for _, tc := range []struct {
		name string
		file string
		// old is replaced by new in the file, where | is the cursor.
		old, new    string
		want, wrong []string
		// detail holds what the detail of a label says, in part.
		detail map[string]string
	}{
		{name: "keys of a behavior", file: "behaviors/review.yaml", old: "tools:\n", new: "sp|\ntools:\n",
			want: []string{"spawn", "providers", "agents", "includes"}, wrong: []string{"bundle", "session", "tools", "hooks", "context", "meta"}},
		{name: "keys under bundle:", file: "bundle.md", old: "  description: A demo bundle\n", new: "  description: A demo bundle\n  na|\n",
			want: []string{"namespace_root"}, wrong: []string{"name", "version", "description", "includes"}},
		{name: "keys of an agent's meta:", file: "agents/reviewer.md", old: "  description: Reviews code\n", new: "  description: Reviews code\n  |\n",
			want: []string{"model_role", "version"}, wrong: []string{"name", "description", "tools"}},
		{name: "keys of an agent", file: "agents/reviewer.md", old: "---\nYou", new: "to|\n---\nYou",
			want: []string{"tools", "session", "model_role"}, wrong: []string{"meta", "name", "bundle"}},
		{name: "keys of a mode", file: "modes/careful.md", old: "  description: Careful work\n", new: "  description: Careful work\n  |\n",
			want: []string{"shortcut", "default_action", "tools"}, wrong: []string{"name", "description", "mode"}},
		{name: "keys of a recipe's step", file: "recipes/review.yaml", old: "    agent: demo:reviewer\n", new: "    agent: demo:reviewer\n    pr|\n",
			want: []string{"prompt", "timeout"}, wrong: []string{"id", "agent", "stages"}},
		{name: "keys of a module entry", file: "behaviors/review.yaml", old: "hooks:\n", new: "  - |\nhooks:\n",
			want: []string{"module", "source", "config"}, wrong: []string{"bundle", "tools"}},
		{name: "context paths", file: "behaviors/review.yaml", old: "    - demo:context/guide.md\n", new: "    - demo:context/guide.md\n    - |\n",
			want: []string{"demo:context/guide.md", "demo:context/deep/rules.md", "../context/deep/rules.md", "lib:context/shared.md"}, wrong: []string{"demo:agents/reviewer.md", "demo:behaviors/review"}},
		{name: "context paths of a namespace", file: "behaviors/review.yaml", old: "    - demo:context/guide.md\n", new: "    - demo:context/guide.md\n    - demo:|\n",
			want: []string{"demo:context/deep/rules.md", "lib:context/shared.md"}, wrong: []string{"demo:agents/reviewer.md"}},
		{name: "tool ids", file: "behaviors/review.yaml", old: "hooks:\n", new: "  - module: t|\nhooks:\n",
			want: []string{"tool-filesystem", "tool-grep", "tool-web"}, wrong: []string{"hooks-logging", "loop-careful", "t"},
			detail: map[string]string{"tool-web": filepath.Join(dir, "lib", "bundle.md") + ":6", "tool-grep": "behaviors/review.yaml:9"}},
		{name: "orchestrator ids", file: "bundle.md", old: "tools:\n", new: "session:\n  orchestrator:\n    module: |\ntools:\n",
			want: []string{"loop-careful"}, wrong: []string{"tool-filesystem", "hooks-logging"},
			detail: map[string]string{"loop-careful": "session.orchestrator — behaviors/review.yaml:7"}},
		{name: "a mention", file: "bundle.md", old: "See @demo:context/guide.md", new: "See @demo:c|",
			want: []string{"demo:context/guide.md", "demo:context/deep/rules.md", "lib:context/shared.md"}, wrong: []string{"context/guide.md", "demo:agents/reviewer.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(repo, tc.file)
			text := read(t, path)
			if !strings.Contains(text, tc.old) {
				t.Fatalf("%s has no %q", tc.file, tc.old)
			}
			text = strings.Replace(text, tc.old, tc.new, 1)
			cur := strings.Index(text, "|")
			text = text[:cur] + text[cur+1:]
			lineStart := strings.LastIndexByte(text[:cur], '\n') + 1
			pos := diag.Position{Line: strings.Count(text[:cur], "\n"), Character: syntax.UTF16Len([]byte(text[lineStart:cur]))}
			var got []string
			for _, it := range w.Complete(context.Background(), path, []byte(text), nil, pos) {
				got = append(got, it.Label)
				if want, ok := tc.detail[it.Label]; ok && !strings.Contains(it.Detail, want) {
					t.Errorf("the detail of %s is %q, not of %q", it.Label, it.Detail, want)
				}
			}
			for _, l := range tc.want {
				if !slices.Contains(got, l) {
					t.Errorf("no %s among %q", l, got)
				}
			}
			for _, l := range tc.wrong {
				if slices.Contains(got, l) {
					t.Errorf("%s among %q", l, got)
				}
			}
		})
	}
}
