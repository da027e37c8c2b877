package discovery_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
)

// TestNamesOnlyResolvesAlike: a Loader with NamesOnly reads no document,
// yet resolve answers every name as one that read everything does: the
// same winner, shadowed and skipped collections, each described alike.
func TestNamesOnlyResolvesAlike(t *testing.T) {
	synthetic := t.TempDir()
	writeSyntheticRoot(t, synthetic, 60)
	cases := map[string][]discovery.Root{
		"synthetic": {{Kind: discovery.RootProject, Path: synthetic}},
	}
	if dir := os.Getenv("AMPLIDEX_CORPUS"); dir != "" {
		cases["corpus"] = []discovery.Root{
			{Kind: discovery.RootUser, Path: filepath.Join(dir, "collections")},
			{Kind: discovery.RootBundled, Path: filepath.Join(dir, "bundled")},
		}
	}
	for name, roots := range cases {
		t.Run(name, func(t *testing.T) {
			var reads int
			counted := func(p string) ([]byte, error) {
				if filepath.Base(p) != "pyproject.toml" {
					reads++
				}
				return syntax.ReadFile(p, syntax.DefaultMaxFileSize)
			}
			full := scanSet(t, &discovery.Loader{}, roots)
			names := scanSet(t, &discovery.Loader{NamesOnly: true, ReadFile: counted}, roots)
			if reads != 0 {
				t.Errorf("NamesOnly read %d documents", reads)
			}
			asked := 0
			for _, c := range full.Collections() {
				for _, n := range []string{c.Name, filepath.Base(c.Dir), c.Name + "-typo"} {
					want, _ := json.Marshal(query.ResolveSet(full, n))
					got, _ := json.Marshal(query.ResolveSet(names, n))
					if string(got) != string(want) {
						t.Errorf("resolve %s:\n names only %s\n everything %s", n, got, want)
					}
					asked++
				}
			}
			if asked == 0 {
				t.Fatal("no collection to ask about")
			}
		})
	}
}

// scanSet loads roots with l into a Set.
func scanSet(t *testing.T, l *discovery.Loader, roots []discovery.Root) *resolve.Set {
	t.Helper()
	cols := make([][]*discovery.Collection, len(roots))
	for i, r := range roots {
		cs, err := l.ScanRoot(r)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = cs
	}
	return resolve.NewSet(roots, cols)
}
