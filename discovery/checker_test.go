package discovery_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/rogpeppe/go-internal/txtar"
)

// TestCheckerMatchesCheck changes one collection at a time and compares
// the incremental result with a full check, and counts what was redone.
func TestCheckerMatchesCheck(t *testing.T) {
	dir := t.TempDir()
	unpackLayout(t, dir, txtar.Parse([]byte(`
-- a/pyproject.toml --
[project]
name = "a"
version = "1.0.0"
description = "A"
-- a/profiles/base.md --
---
profile:
  name: base
  version: 1.0.0
  description: Base
session:
  orchestrator:
    module: loop-basic
  context:
    module: context-simple
---
-- b/pyproject.toml --
[project]
name = "b"
version = "1.0.0"
description = "B"

[tool.amplifier.collection.requires]
a = "^1.0.0"
-- b/profiles/dev.md --
---
profile:
  name: dev
  version: 1.0.0
  description: Dev
  extends: a:base
agents:
  - helper
---
-- c/pyproject.toml --
[project]
name = "c"
version = "1.0.0"
description = "Unrelated"
-- c/context/x.md --
# X
-- d/pyproject.toml --
[project]
name = "d"
version = "1.0.0"
description = "Has the agent"
-- d/agents/helper.md --
---
meta:
  name: helper
  description: Helps
---
`)))
	root := discovery.Root{Kind: discovery.RootUser, Path: dir}
	loader := &discovery.Loader{}
	load := func() ([]*discovery.Collection, *discovery.Set) {
		cols, err := loader.ScanRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		return cols, discovery.NewSet([]discovery.Root{root}, [][]*discovery.Collection{cols})
	}
	var k discovery.Checker
	cols, set := load()
	check := func(step string, wantRechecked int) {
		t.Helper()
		got := k.Check(set)
		want := set.Check()
		discovery.SortDiagnostics(got)
		discovery.SortDiagnostics(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: incremental %v\nfull %v", step, got, want)
		}
		if k.Rechecked != wantRechecked {
			t.Errorf("%s: rechecked %d collections, want %d", step, k.Rechecked, wantRechecked)
		}
	}
	check("first", 4)
	check("nothing changed", 0)

	// Reload only a (as the daemon would): b depends on it, c and d do not.
	replace := func(name string) {
		for i, c := range cols {
			if filepath.Base(c.Dir) == name {
				cols[i] = loader.Load(root, c.Dir)
			}
		}
		set = discovery.NewSet([]discovery.Root{root}, [][]*discovery.Collection{cols})
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "pyproject.toml"), []byte("[project]\nname = \"a\"\nversion = \"2.0.0\"\ndescription = \"A\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	replace("a")
	check("a's version changed", 2)

	// d holds the bare agent b names: removing it re-checks b.
	if err := os.Remove(filepath.Join(dir, "d", "agents", "helper.md")); err != nil {
		t.Fatal(err)
	}
	replace("d")
	check("d's agent removed", 2)

	replace("c")
	check("c reloaded", 1)
}
