package discovery_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/schema"
)

// TestLoaderFactsOwnTheirMemory loads the test documents and
// pyproject.toml files, and the corpus, with
// one Loader, which reads every file into one buffer and parses its front
// matter into one set of nodes, both used again for the next file, and
// checks that the Facts of each file are still those the file gives on
// its own: that none holds memory a later file wrote over.
func TestLoaderFactsOwnTheirMemory(t *testing.T) {
	// A root of a collection per test document and per test pyproject.toml.
	root := t.TempDir()
	for _, set := range []string{"documents", "pyproject"} {
		archives, _ := filepath.Glob(filepath.Join("testdata", set, "*.txtar"))
		for i, a := range archives {
			ar, err := txtar.ParseFile(a)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, fmt.Sprintf("%s%d", set, i))
			unpackLayout(t, dir, ar)
			if _, err := os.Stat(filepath.Join(dir, "pyproject.toml")); err != nil {
				os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte("[project]\nname = \"c\"\nversion = \"1.0.0\"\ndescription = \"d\"\n"), 0o644)
			}
			if set == "pyproject" {
				unpackLayout(t, dir, txtar.Parse(fmt.Appendf(nil, "-- agents/a.md --\n---\nname: a%d\ndescription: A\n---\nSee @c%d:agents/a.md and @o%d:context/x.md.\n", i, i, i)))
			}
		}
	}
	roots := []discovery.Root{{Kind: discovery.RootUser, Path: root}}
	if dir := os.Getenv("AMPLIDEX_CORPUS"); dir != "" {
		roots = append(roots, discovery.Root{Kind: discovery.RootUser, Path: filepath.Join(dir, "collections")},
			discovery.Root{Kind: discovery.RootBundled, Path: filepath.Join(dir, "bundled")})
	}
	loader := &discovery.Loader{}
	files := 0
	for _, r := range roots {
		cols, err := loader.ScanRoot(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			for p, got := range c.Facts {
				src, err := os.ReadFile(p)
				if err != nil {
					continue
				}
				files++
				if want := discovery.AnalyzeFile(p, src, got.Kind, schema.Options{}); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: the Facts loaded are\n%+v\nthe file gives\n%+v", p, got, want)
				}
			}
		}
	}
	if files == 0 {
		t.Fatal("no file loaded")
	}
	t.Logf("%d files", files)
}
