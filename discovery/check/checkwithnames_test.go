package check_test

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/check"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// TestCheckWithNamesReadsMentionsOnce: WithNames answers what
// CollectionStat and RefNames answer, reading each file's mentions
// once where the two read them twice.
func TestCheckWithNamesReadsMentionsOnce(t *testing.T) {
	root := t.TempDir()
	coll := filepath.Join(root, "team")
	unpackLayout(t, coll, txtar.Parse([]byte(`
-- pyproject.toml --
[project]
name = "team"
version = "1.0.0"
description = "Team"
-- profiles/dev.md --
---
profile:
  name: dev
  version: 1.0.0
  description: Dev
session:
  orchestrator:
    module: loop
  context:
    module: ctx
---
See @team:context/notes.md and @gone:context/x.md
-- agents/helper.md --
---
meta:
  name: helper
  description: Helps
---
Read @team:context/missing.md
-- context/notes.md --
See @foundation:context/x.md
`)))
	reads := map[string]int{}
	loader := &discovery.Loader{
		Details: func(string) *discovery.Facts { return nil },
		Mentions: func(p string) ([]syntax.Mention, bool) {
			reads[p]++
			src, err := os.ReadFile(p)
			if err != nil {
				return nil, false
			}
			return discovery.AnalyzeFile(p, src, discovery.KindContext, schema.Options{}).Mentions, true
		},
	}
	r := discovery.Root{Kind: discovery.RootUser, Path: root}
	c := loader.Load(r, coll)
	set := resolve.NewSet([]discovery.Root{r}, [][]*discovery.Collection{{c}})

	diags, names, statted := check.WithNames(set, c)
	once := maps.Clone(reads)
	clear(reads)
	wantDiags, wantStatted := check.CollectionStat(set, c)
	wantNames := check.RefNames(set, c)
	if !reflect.DeepEqual(diags, wantDiags) || statted != wantStatted {
		t.Errorf("WithNames: %v (statted %v), CollectionStat: %v (%v)", diags, statted, wantDiags, wantStatted)
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("WithNames: names %q, RefNames %q", names, wantNames)
	}
	if len(wantDiags) == 0 || len(once) != 3 {
		t.Fatalf("the fixture has %d diagnostics and %d files with mentions read; want some, and 3", len(wantDiags), len(once))
	}
	for p, n := range once {
		if n != 1 || reads[p] != 2 {
			t.Errorf("%s: mentions read %d times at once, %d times apart; want 1 and 2", filepath.Base(p), n, reads[p])
		}
	}
}
