package schema_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/schema"
)

// TestEveryKeyIsDescribed walks every mapping of every schema: each key an
// editor offers has a description and says what its value may be.
func TestEveryKeyIsDescribed(t *testing.T) {
	var walk func(kind schema.DocKind, path []string)
	walk = func(kind schema.DocKind, path []string) {
		if len(path) > 8 {
			t.Fatalf("%s: schema path %v too deep", kind, path)
		}
		keys, ok := schema.Keys(kind, path)
		if !ok {
			return
		}
		for _, k := range keys {
			at := append(slices.Clone(path), k.Name)
			if k.Doc == "" || k.Type == "" {
				t.Errorf("%s: %s has no description or type: %+v", kind, strings.Join(at, "."), k)
			}
			walk(kind, at)
			walk(kind, append(at, schema.ItemStep))
		}
	}
	for _, kind := range []schema.DocKind{schema.DocProfile, schema.DocAgent, schema.DocBundle, schema.DocBundleAgent} {
		walk(kind, nil)
	}
	for _, k := range schema.CollectionKeys() {
		if k.Doc == "" || k.Type == "" {
			t.Errorf("[tool.amplifier.collection] %s has no description or type", k.Name)
		}
	}
}

func TestSchemaKeys(t *testing.T) {
	names := func(keys []schema.KeyInfo) []string {
		var out []string
		for _, k := range keys {
			out = append(out, k.Name)
		}
		return out
	}
	tests := []struct {
		kind schema.DocKind
		path []string
		want []string // nil: no mapping of known keys there
	}{
		{schema.DocProfile, nil, []string{"profile", "session", "providers", "tools", "hooks", "agents", "exclude", "ui", "task"}},
		{schema.DocProfile, []string{"profile"}, []string{"name", "version", "description", "model", "extends"}},
		{schema.DocProfile, []string{"session", "orchestrator"}, []string{"module", "source", "config"}},
		{schema.DocProfile, []string{"tools", schema.ItemStep}, []string{"module", "source", "config"}},
		{schema.DocProfile, []string{"tools", schema.ItemStep, "config"}, nil},
		{schema.DocProfile, []string{"agents", "inline", "helper"}, nil}, // agents is all, none or a list of names
		{schema.DocProfile, []string{"nonsense"}, nil},
		{schema.DocAgent, []string{"meta"}, []string{"name", "description"}},
		{schema.DocBundle, []string{"agents"}, []string{"include"}},
	}
	for _, tc := range tests {
		keys, ok := schema.Keys(tc.kind, tc.path)
		if got := names(keys); ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("SchemaKeys(%s, %v) = %v, %v; want %v", tc.kind, tc.path, got, ok, tc.want)
		}
	}

	agents, ok := schema.Key(schema.DocProfile, []string{"agents"})
	if !ok || !slices.Equal(agents.Values, []string{"all", "none"}) || !agents.List || agents.Mapping || agents.Doc == "" {
		t.Errorf("profile agents: %+v", agents)
	}
	session, _ := schema.Key(schema.DocProfile, []string{"session"})
	if !session.RootOnly || session.Required {
		t.Errorf("profile session is required of a root profile only: %+v", session)
	}
	desc, _ := schema.Key(schema.DocAgent, []string{"description"})
	if desc.Unless != "meta" {
		t.Errorf("agent description is required unless meta is there: %+v", desc)
	}
	if k, ok := schema.Key(schema.DocProfile, []string{"exclude", "tools"}); !ok || !slices.Equal(k.Values, []string{"all"}) {
		t.Errorf("exclude.tools: %+v, %v", k, ok)
	}
	if _, ok := schema.Key(schema.DocProfile, []string{"profile", "colour"}); ok {
		t.Error("profile.colour is known")
	}
}

func TestSchemaPlaceholder(t *testing.T) {
	tests := []struct {
		kind   schema.DocKind
		path   []string
		indent int
		name   string
		want   string
	}{
		{schema.DocProfile, []string{"profile", "name"}, 2, "dev", "  name: dev\n"},
		{schema.DocProfile, []string{"profile", "name"}, 2, "2fast", "  name: \"\"\n"},
		{schema.DocProfile, []string{"profile", "version"}, 2, "dev", "  version: 1.0.0\n"},
		{schema.DocProfile, []string{"profile"}, 0, "dev", "profile:\n  name: dev\n  version: 1.0.0\n  description: \"\"\n"},
		{schema.DocProfile, []string{"session"}, 0, "", "session:\n  orchestrator:\n    module: \"\"\n  context:\n    module: \"\"\n"},
		{schema.DocProfile, []string{"tools", schema.ItemStep, "module"}, 4, "", "    module: \"\"\n"},
		{schema.DocBundle, []string{"default_provider"}, 0, "", "default_provider: \"\"\n"},
		{schema.DocAgent, []string{"system"}, 0, "", "system:\n  instruction: \"\"\n"},
	}
	for _, tc := range tests {
		got, ok := schema.Placeholder(tc.kind, tc.path, tc.indent, tc.name)
		if !ok || got != tc.want {
			t.Errorf("SchemaPlaceholder(%s, %v) = %q, %v; want %q", tc.kind, tc.path, got, ok, tc.want)
		}
	}
	if _, ok := schema.Placeholder(schema.DocProfile, []string{"colour"}, 0, ""); ok {
		t.Error("a placeholder for an unknown key")
	}
}
