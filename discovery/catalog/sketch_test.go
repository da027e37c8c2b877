package catalog_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/query"
)

// TestSketchEqualsView: the Sketch of a project the catalog has not
// registered (the user's root as the catalog holds it, the project's
// read names only) resolves every name as the project's View does once
// it is registered, over random trees of shadowing and broken metadata.
func TestSketchEqualsView(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			base := t.TempDir()
			tr := &tree{t: t, r: rand.New(rand.NewPCG(21, seed)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
			for _, r := range []string{tr.root(0), tr.root(1)} {
				for i := range 6 {
					tr.collection(filepath.Join(r, fmt.Sprintf("d%d", i)))
				}
			}
			cat := catalog.New(catalog.Options{Home: tr.home})
			cat.AddProject("")
			key := cat.ProjectKey(tr.proj)
			set, ok := cat.Sketch(cat.RootsOf(key), cat.ReadNames)
			if !ok {
				t.Fatal("no Sketch of a project whose roots all list")
			}
			st, _ := cat.AddProject(tr.proj)
			v, _ := st.View(key)
			if g, w := fmt.Sprint(set.Names()), fmt.Sprint(v.Set.Names()); g != w {
				t.Fatalf("the Sketch answers to %s, the View to %s", g, w)
			}
			for _, name := range append(v.Set.Names(), "c", "nowhere") {
				want, err := query.MethodResolve.Answer(v, query.NameParams{Name: name})
				if err != nil {
					t.Fatal(err)
				}
				if g, w := mustJSON(t, query.ResolveSet(set, name)), mustJSON(t, want); g != w {
					t.Errorf("resolve %s: the Sketch's\n%s\nthe View's\n%s", name, g, w)
				}
			}
		})
	}
}

// TestSketchFails: a Sketch is not made of a root whose last listing
// failed, nor when its Source fails, nor by ReadNames of a root that
// cannot be listed or of a collection read in part.
func TestSketchFails(t *testing.T) {
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(22, 1)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
	tr.collection(filepath.Join(tr.root(1), "u"))
	tr.write(filepath.Join(tr.root(0), "p", "pyproject.toml"), "[project]\nname = \"p\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
	tr.write(filepath.Join(tr.root(0), "p", "agents", "a.md"), "---\nmeta:\n  name: a\n  description: d\n---\n")
	failing := ""
	list := func(dir string) ([]os.DirEntry, error) {
		if dir == failing {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: syscall.EMFILE}
		}
		return os.ReadDir(dir)
	}
	cat := catalog.New(catalog.Options{Home: tr.home, Loader: &discovery.Loader{ReadDir: list}})
	cat.AddProject("")
	roots := cat.RootsOf(cat.ProjectKey(tr.proj))
	never := func(discovery.Root) ([]*discovery.Collection, bool) { return nil, false }
	if _, ok := cat.Sketch(roots, never); ok {
		t.Error("a Sketch was made though its Source failed for the project's root")
	}
	for _, dir := range []string{tr.root(0), filepath.Join(tr.root(0), "p", "agents")} {
		failing = dir
		if _, ok := cat.Sketch(roots, cat.ReadNames); ok {
			t.Errorf("a Sketch was made though %s could not be listed", dir)
		}
	}
	failing = tr.root(1)
	cat.Update(catalog.Change{Root: tr.root(1)})
	failing = ""
	if _, ok := cat.Sketch(roots, cat.ReadNames); ok {
		t.Error("a Sketch was made of a root whose last listing failed")
	}
	cat.Update(catalog.Change{Root: tr.root(1)})
	if _, ok := cat.Sketch(roots, cat.ReadNames); !ok {
		t.Error("no Sketch once every root lists")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
