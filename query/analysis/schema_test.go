package analysis_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSchemaCompletion completes keys at the cursor's level, leaving out
// those already written, and the values of keys with a fixed set.
func TestSchemaCompletion(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	w := newWorkspace(dir)
	profile := filepath.Join(dir, devProfile)
	agent := filepath.Join(dir, "work/mine/agents/helper.md")
	bundle := filepath.Join(dir, "work/bundle/bundle.md")
	py := filepath.Join(dir, "work/mine/pyproject.toml")
	tests := []struct {
		name   string
		file   string
		text   string
		marker string   // the cursor goes just after it
		want   []string // labels, in order
		insert string   // what the first item inserts, when not its label and ": "
	}{
		{"top level of a profile", profile, "---\nprofile:\n  name: p\nto\n---\n", "\nto",
			[]string{"session", "providers", "tools", "hooks", "agents", "exclude", "ui", "task"}, "session:\n  "},
		{"profile block", profile, "---\nprofile:\n  name: p\n  \nsession: {}\n---\n", "name: p\n  ",
			[]string{"version", "description", "model", "extends"}, ""},
		{"keys written below count too", profile, "---\nprofile:\n  \n  version: 1.0.0\n---\n", "profile:\n  ",
			[]string{"name", "description", "model", "extends"}, ""},
		{"session module", profile, "---\nsession:\n  orchestrator:\n    module: x\n    \n---\n", "module: x\n    ",
			[]string{"source", "config"}, ""},
		{"new list item", profile, "---\ntools:\n  - \n---\n", "tools:\n  - ",
			[]string{"module", "source", "config"}, ""},
		{"second key of an item", profile, "---\ntools:\n  - module: a\n    so\n---\n", "    so",
			[]string{"source", "config"}, ""},
		{"second item", profile, "---\ntools:\n  - module: a\n  - mo\n---\n", "  - mo",
			[]string{"module", "source", "config"}, ""},
		{"list flush with its key", profile, "---\ntools:\n- module: a\n  \n---\n", "module: a\n  ",
			[]string{"source", "config"}, ""},
		{"after a nested block", profile, "---\nsession:\n  orchestrator:\n    module: x\n\n---\n", "module: x\n",
			[]string{"profile", "providers", "tools", "hooks", "agents", "exclude", "ui", "task"}, "profile:\n  "},
		{"list item owning a mapping", bundle, "---\nincludes:\n  - bundle: x\n  - \n---\n", "  - bundle: x\n  - ",
			[]string{"bundle"}, ""},
		{"open mapping: nothing", profile, "---\ntools:\n  - module: a\n    config:\n      \n---\n", "config:\n      ", nil, ""},
		{"agents value", profile, "---\nagents: a\n---\n", "agents: a", []string{"all", "none"}, "all"},
		{"exclude value", profile, "---\nexclude:\n  tools: \n---\n", "tools: ", []string{"all"}, "all"},
		{"boolean value", profile, "---\nui:\n  show_token_usage: \n---\n", "usage: ", []string{"true", "false"}, "true"},
		{"agent meta", agent, "---\nmeta:\n  \n---\n", "meta:\n  ", []string{"name", "description"}, ""},
		{"bundle", bundle, "---\nbundle:\n  name: b\nde\n---\n", "\nde",
			[]string{"default_provider", "providers", "session", "tools", "hooks", "agents", "includes", "context", "spawn"}, ""},
		{"collection table", py, "[project]\nname = \"mine\"\n[tool.amplifier.collection]\nauthor = \"me\"\nca\n", "\nca",
			[]string{"capabilities", "requires"}, "capabilities = "},
		{"requires table", py, "[project]\nname = \"mine\"\n[tool.amplifier.collection.requires]\nfo\n", "\nfo",
			[]string{"foundation"}, `foundation = "^1.2.0"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pos := cursor(t, tc.text, tc.marker)
			items := w.Complete(context.Background(), tc.file, []byte(tc.text), nil, pos)
			if got := labels(items); !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if len(items) == 0 {
				return
			}
			want := tc.insert
			if want == "" {
				want = items[0].Label + ": "
			}
			if got := items[0].InsertText; got != want && !(got == "" && want == items[0].Label) {
				t.Errorf("%s inserts %q, want %q", items[0].Label, got, want)
			}
			if items[0].Replace == nil || items[0].Replace.End != pos {
				t.Errorf("%s replaces %+v, want up to the cursor %+v", items[0].Label, items[0].Replace, pos)
			}
			for _, it := range items {
				if it.Documentation == "" || it.Detail == "" {
					t.Errorf("%s has no documentation or detail: %+v", it.Label, it)
				}
			}
		})
	}
}

// TestKeyHover describes the key under the cursor; references keep their
// own hover.
func TestKeyHover(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	w := newWorkspace(dir)
	profile := filepath.Join(dir, devProfile)
	py := filepath.Join(dir, "work/mine/pyproject.toml")
	tests := []struct {
		name   string
		file   string
		text   string
		marker string
		want   []string // fragments; nil for no hover
	}{
		{"nested key", profile, "---\nprofile:\n  extends: foundation:base\n---\n", "  exte",
			[]string{"**`profile.extends`**: a string", "Parent profile"}},
		{"required key", profile, "---\nprofile:\n  name: x\n---\n", "  na", []string{"`profile.name`", "Required."}},
		{"key of a list item", profile, "---\ntools:\n  - module: tool-web\n---\n", "- mod",
			[]string{"**`tools[].module`**: a string", "Module id", "Required."}},
		{"root-only key", profile, "---\nsession:\n  context: {}\n---\n", "sess",
			[]string{"Required unless the profile extends another."}},
		{"enumerated key", profile, "---\nagents: all\n---\n", "agen", []string{`"all", "none" or a list`}},
		{"a value is no key", profile, "---\nprofile:\n  name: xyz\n---\n", "name: xy", nil},
		{"unknown key", profile, "---\ncolour: red\n---\n", "colo", nil},
		{"body", profile, "---\nprofile: {}\n---\nprofile: x\n", "}\n---\nprof", nil},
		{"collection table key", py, "[project]\nname = \"mine\"\n[tool.amplifier.collection]\ncapabilities = []\n", "capab",
			[]string{"`tool.amplifier.collection.capabilities`", "a list of strings"}},
		{"project key", py, "[project]\nname = \"mine\"\n", "nam", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md, ok := w.Hover(context.Background(), tc.file, []byte(tc.text), nil, cursor(t, tc.text, tc.marker))
			if ok != (tc.want != nil) {
				t.Fatalf("hover = %q, %v; want %v", md, ok, tc.want != nil)
			}
			for _, f := range tc.want {
				if !strings.Contains(md, f) {
					t.Errorf("hover lacks %q:\n%s", f, md)
				}
			}
		})
	}
	// The extends value keeps its reference hover.
	text := read(t, profile)
	md, _ := w.Hover(context.Background(), profile, []byte(text), nil, cursor(t, text, "foundation:ba"))
	if !strings.Contains(md, "Resolves to") {
		t.Errorf("hover on the extends value:\n%s", md)
	}
}
