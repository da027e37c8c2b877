package schema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// TestCorpusFrontOrderAndNumbers: over every profile, agent and manifest
// of the corpus, decoded front matter has the keys of each mapping in the
// order the file has them, and each float of the file is a Float.
func TestCorpusFrontOrderAndNumbers(t *testing.T) {
	dir := documentCorpus(t)
	floats := 0
	for _, doc := range corpusDocuments(t, dir) {
		d := schema.ParseDocument(doc.rel, doc.src, doc.kind, schema.Options{})
		if d.Front == nil {
			continue
		}
		m, err := d.Decode()
		if err != nil {
			t.Fatalf("%s: %v", doc.rel, err)
		}
		floats += sameShape(t, doc.rel, d.Front, m)
	}
	if floats < 10 {
		t.Errorf("only %d floats in the corpus's front matter", floats)
	}
}

// sameShape checks v against the node it was decoded from and returns
// how many floats it holds. Mappings with merge keys or repeated keys are
// left to the unit tests.
func sameShape(t *testing.T, where string, n *yaml.Node, v any) int {
	t.Helper()
	floats := 0
	switch n.Kind {
	case yaml.MappingNode:
		m, ok := v.(*syntax.Map)
		if !ok {
			t.Errorf("%s: mapping decoded as %T", where, v)
			return 0
		}
		var keys []string
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" || seen[k.Value] {
				return 0
			}
			seen[k.Value] = true
			keys = append(keys, k.Value)
		}
		if got := m.Keys(); strings.Join(got, "\n") != strings.Join(keys, "\n") {
			t.Errorf("%s: keys %q, file has %q", where, got, keys)
			return 0
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			floats += sameShape(t, where+"."+n.Content[i].Value, n.Content[i+1], m.Value(n.Content[i].Value))
		}
	case yaml.SequenceNode:
		s, ok := v.([]any)
		if !ok || len(s) != len(n.Content) {
			t.Errorf("%s: sequence decoded as %#v", where, v)
			return 0
		}
		for i, c := range n.Content {
			floats += sameShape(t, where, c, s[i])
		}
	case yaml.ScalarNode:
		if n.Tag == "!!float" && n.Style == 0 {
			f, ok := v.(syntax.Float)
			if !ok {
				t.Errorf("%s: %s decoded as %#v", where, n.Value, v)
				return 0
			}
			// 0.80 prints 0.8, 1e-3 is no YAML 1.1 float; the rest
			// prints as written.
			if b, _ := json.Marshal(f); string(b) != n.Value && !strings.HasSuffix(n.Value, "0") {
				t.Errorf("%s: %s prints %s", where, n.Value, b)
			}
			floats++
		}
	}
	return floats
}
