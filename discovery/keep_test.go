package discovery_test

import (
	"cmp"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/amplidex/amplidex/discovery"
)

// TestKeepKeepsValues loads a collection as a daemon does (brief Facts,
// details on demand), keeps it, and compares every value of it with a
// load whose values are left where loading put them: keeping moves what a
// collection keeps, and changes none of it.
func TestKeepKeepsValues(t *testing.T) {
	dir := t.TempDir()
	coll := filepath.Join(dir, "root", "team")
	files := map[string]string{
		"pyproject.toml": "[project]\nname = \"team\"\nversion = \"1.2.3\"\ndescription = \"Team\"\n\n[project.urls]\nhome = \"https://x\"\n\n" +
			"[tool.amplifier.collection]\nauthor = \"me\"\ncapabilities = [\"a\", \"b\"]\n\n[tool.amplifier.collection.requires]\nfoundation = \">=1.0.0\"\n",
		"profiles/dev.md": "---\nprofile:\n  name: dev\n  version: 1.0.0\n  description: Dev  # amplidex: ignore[schema/]\n  extends: foundation:base\n" +
			"session:\n  orchestrator:\n    module: loop\n  context:\n    module: ctx\nagents:\n  - helper\n  - foundation:explorer\n---\nSee @team:context/notes.md\n",
		"agents/helper.md":      "---\nmeta:\n  name: helper\n  description: Helps\n---\nBody\n",
		"context/notes.md":      "# Notes\n",
		"context/deep/more.md":  "See @foundation:context/x.md\n",
		"scenario-tools/t/x.py": "",
	}
	for name, text := range files {
		p := filepath.Join(coll, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := discovery.Root{Kind: discovery.RootUser, Path: filepath.Dir(coll)}
	details := func(string) *discovery.Facts { return nil }
	plain := (&discovery.Loader{Details: details}).Load(root, coll)
	kept := plain.Keep()
	compare(t, kept, (&discovery.Loader{Details: details}).Load(root, coll))
	// Every file has Facts of its own: no two files share one value, so
	// that none can be changed through another.
	seen := map[*discovery.Facts]string{}
	for p, f := range kept.Facts {
		if q, ok := seen[f]; ok {
			t.Errorf("%s and %s share one Facts value", p, q)
		}
		seen[f] = p
	}
	other := (&discovery.Loader{Details: details}).Load(root, coll).Keep()
	for p, f := range other.Facts {
		if kept.Facts[p] == f {
			t.Errorf("two loads of %s share one Facts value", p)
		}
	}
}

func compare(t *testing.T, compacted, plain *discovery.Collection) {
	t.Helper()
	if len(compacted.Facts) != len(plain.Facts) || len(compacted.Facts) == 0 {
		t.Fatalf("%d files compacted, %d not", len(compacted.Facts), len(plain.Facts))
	}
	for p, want := range plain.Facts {
		got := compacted.Facts[p]
		if got == nil {
			t.Fatalf("compacting lost the file %s", p)
		}
		if !reflect.DeepEqual(*got, *want) {
			t.Errorf("%s: compacted\n%+v\nnot\n%+v", p, *got, *want)
		}
	}
	if !reflect.DeepEqual(compacted.Resources, plain.Resources) {
		t.Errorf("resources: compacted %v, not %v", compacted.Resources, plain.Resources)
	}
	if !reflect.DeepEqual(compacted.Metadata, plain.Metadata) || compacted.Pyproject != plain.Pyproject {
		t.Errorf("metadata: compacted %+v, not %+v", compacted.Metadata, plain.Metadata)
	}
	if compacted.Metadata != compacted.Facts[compacted.Pyproject].Metadata {
		t.Error("the collection's metadata is not its pyproject's")
	}
	own := func(c *discovery.Collection) []string {
		return []string{c.Name, c.Version, c.Description, c.Dir, c.RealDir, c.Base, c.Problem, c.Degraded}
	}
	if got, want := own(compacted), own(plain); !reflect.DeepEqual(got, want) {
		t.Errorf("the collection's own strings: compacted %q, not %q", got, want)
	}
	// Its directories are parts of its pyproject.toml's path, not copies.
	for _, d := range []string{compacted.Dir, compacted.RealDir, compacted.Base} {
		if addr(d) != addr(compacted.Pyproject) {
			t.Errorf("the directory %q is not a part of %q", d, compacted.Pyproject)
		}
	}
	// Every string it keeps is a part of one string, written once with no
	// room to spare: together they cover one span of memory without a gap,
	// and none keeps an object of its own alive.
	kept := own(compacted)
	kept = append(kept, compacted.Pyproject)
	for _, r := range compacted.Resources {
		kept = append(kept, r.Path, r.Name, r.Rel)
	}
	for p, f := range compacted.Facts {
		kept = append(kept, p, f.Name, f.Description, discovery.Blocks(f))
		if f.Extends != nil {
			kept = append(kept, f.Extends.Value)
		}
		for _, a := range f.Agents {
			kept = append(kept, a.Value)
		}
	}
	m := compacted.Metadata
	kept = append(kept, m.Name, m.Version, m.Description, m.Author)
	kept = append(kept, m.Capabilities...)
	for k, v := range m.URLs {
		kept = append(kept, k, v)
	}
	for _, r := range m.Requires {
		kept = append(kept, r.Name, r.Constraint)
	}
	type span struct{ lo, hi uintptr }
	var spans []span
	for _, s := range kept {
		if s != "" {
			spans = append(spans, span{addr(s), addr(s) + uintptr(len(s))})
		}
	}
	if len(spans) < 20 {
		t.Fatalf("only %d strings to look at: %q", len(spans), kept)
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	end := spans[0].hi
	for _, sp := range spans[1:] {
		if sp.lo > end {
			t.Errorf("the strings a collection keeps are not one: a gap of %d bytes", sp.lo-end)
		}
		end = max(end, sp.hi)
	}
}

// addr returns where the bytes of s are in memory.
func addr(s string) uintptr { return reflect.ValueOf(s).Pointer() }
