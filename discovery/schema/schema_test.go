package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/amplidex/amplidex/discovery/schema"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite testdata/schema/*.json from JSONSchema")

// TestJSONSchemaGolden keeps the JSON Schemas that `amplidex schema`
// prints in testdata/schema, so that a change to the tables shows in review.
func TestJSONSchemaGolden(t *testing.T) {
	for _, kind := range []schema.DocKind{schema.DocProfile, schema.DocAgent, schema.DocBundle, schema.DocBundleAgent} {
		t.Run(string(kind), func(t *testing.T) {
			got, err := schema.JSON(kind)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "schema", string(kind)+".json")
			if *updateSchema {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update-schema)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("JSONSchema(%s) differs from %s (run go test -update-schema and review the diff)", kind, golden)
			}
		})
	}
}

func TestJSONSchemaShape(t *testing.T) {
	type jsonSchema struct {
		Schema     string                     `json:"$schema"`
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		AnyOf      []struct {
			Required []string `json:"required"`
		} `json:"anyOf"`
		Additional *bool           `json:"additionalProperties"`
		If         json.RawMessage `json:"if"`
		Else       json.RawMessage `json:"else"`
	}
	load := func(kind schema.DocKind) jsonSchema {
		t.Helper()
		b, err := schema.JSON(kind)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonSchema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if s.Schema != "http://json-schema.org/draft-07/schema#" || s.Type != "object" ||
			s.Additional == nil || *s.Additional {
			t.Errorf("%s: not a strict draft-07 object schema: %+v", kind, s)
		}
		return s
	}
	keys := func(s jsonSchema) []string {
		var out []string
		for k := range s.Properties {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}

	p := load(schema.DocProfile)
	if want := []string{"agents", "exclude", "hooks", "profile", "providers", "session", "task", "tools", "ui"}; !slices.Equal(keys(p), want) {
		t.Errorf("profile keys %v, want %v", keys(p), want)
	}
	if !slices.Equal(p.Required, []string{"profile"}) || p.If == nil || p.Else == nil {
		t.Errorf("profile: required %v, if/else %s %s", p.Required, p.If, p.Else)
	}

	a := load(schema.DocAgent)
	if len(a.AnyOf) != 2 || !slices.Equal(a.AnyOf[0].Required, []string{"meta"}) ||
		!slices.Equal(a.AnyOf[1].Required, []string{"name", "description"}) {
		t.Errorf("agent: anyOf %+v", a.AnyOf)
	}
	if _, ok := a.Properties["model_role"]; ok {
		t.Error("agent schema has model_role")
	}
	if _, ok := load(schema.DocBundleAgent).Properties["model_role"]; !ok {
		t.Error("bundle agent schema lacks model_role")
	}

	b := load(schema.DocBundle)
	if !slices.Equal(b.Required, []string{"bundle", "default_provider"}) {
		t.Errorf("bundle required %v", b.Required)
	}

	if _, err := schema.JSON("mode"); !errors.Is(err, schema.ErrUnknownDocKind) {
		t.Errorf("unknown kind: %v", err)
	}
}
