package check_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/check"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/schema"
)

// TestLone: a profile no collection holds gets its own problems, its
// references checked over the Set and its suppression comments applied, composed in one place
// for check and the editor.
func TestLone(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "base")
	for p, text := range map[string]string{
		"pyproject.toml":   "[project]\nname = \"base\"\nversion = \"1.0.0\"\ndescription = \"Base\"\n",
		"context/notes.md": "Notes.\n",
		"agents/helper.md": "---\nmeta:\n  name: helper\n  description: Helps\n---\nHelp.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := discovery.Root{Kind: discovery.RootUser, Path: root}
	set := resolve.NewSet([]discovery.Root{r}, [][]*discovery.Collection{{(&discovery.Loader{}).Load(r, dir)}})

	const path = "/elsewhere/profiles/dev.md"
	text := "---\nprofile:\n  name: dev\n  version: 1.0.0\n  description: Dev\n  extends: nowhere:base  # amplidex: ignore[ref/extends-unresolved]\n" +
		"agents: [base:helper, ghost:helper, helper]\ncolour: blue\n---\nRead @base:context/notes.md and @base:context/absent.md.\n"
	var got []string
	for _, d := range check.Lone(set, path, []byte(text), discovery.KindProfile, schema.Options{}) {
		if d.Path != path {
			t.Errorf("%s is about %s, not the file", d.Code, d.Path)
		}
		got = append(got, d.Code)
	}
	want := []string{diag.CodeUnknownKey, diag.CodeAgentUnknown, diag.CodeMentionUnresolved}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("codes %v, want %v (extends suppressed; base:helper, helper (one collection has it) and @base:context/notes.md resolving)", got, want)
	}
}
