package catalog_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery/catalog"
)

// TestBuildTakesChangesMadeMeanwhile: a change recorded while a project's
// first View is being made, after the build took what the roots held, is
// in the View the registration publishes, and in every State after it.
// The change itself does not wait for that View (nothing published holds
// the project yet): only the build can take it in. Options.Prior, asked
// between the build's snapshot and its View, holds the build there.
func TestBuildTakesChangesMadeMeanwhile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(cat *catalog.Catalog, root, bundled string)
		want   []string // names the View resolves
		gone   []string // names it does not
	}{
		{"a collection added and one removed", func(cat *catalog.Catalog, root, _ string) {
			cat.Update(catalog.Change{Root: root, Dir: filepath.Join(root, "two")}, catalog.Change{Root: root, Dir: filepath.Join(root, "one")})
		}, []string{"two"}, []string{"one"}},
		{"the root read again", func(cat *catalog.Catalog, root, _ string) {
			cat.Update(catalog.Change{Root: root})
		}, []string{"two"}, []string{"one"}},
		{"the configuration changed", func(cat *catalog.Catalog, _, bundled string) {
			cat.Reconfigure([]string{bundled}, nil)
		}, []string{"bundled"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deadline(t, time.Minute)
			base := t.TempDir()
			tr := &tree{t: t, r: rand.New(rand.NewPCG(31, 1)), home: filepath.Join(base, "home")}
			proj := newProject(t, tr, "p")
			root := filepath.Join(proj, ".amplifier", "collections")
			bundled := filepath.Join(base, "bundled")
			tr.write(filepath.Join(bundled, "b", "pyproject.toml"), "[project]\nname = \"bundled\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
			building, goOn := make(chan struct{}), make(chan struct{})
			var once sync.Once
			var cat *catalog.Catalog
			cat = catalog.New(catalog.Options{Home: tr.home, Prior: func(key string) *catalog.Checks {
				if key == cat.ProjectKey(proj) {
					once.Do(func() {
						close(building)
						<-goOn
					})
				}
				return nil
			}})
			added := make(chan *catalog.State, 1)
			go func() {
				st, _ := cat.AddProject(proj)
				added <- st
			}()
			<-building
			tr.write(filepath.Join(root, "two", "pyproject.toml"), "[project]\nname = \"two\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
			if err := os.RemoveAll(filepath.Join(root, "one")); err != nil {
				t.Fatal(err)
			}
			tc.change(cat, root, bundled)
			close(goOn)
			st := <-added
			for what, st := range map[string]*catalog.State{"the State AddProject returned": st, "the latest State": cat.State()} {
				v, ok := st.View(proj)
				if !ok {
					t.Fatalf("%s has no View of the project", what)
				}
				for _, n := range tc.want {
					if v.Set.Lookup(n) == nil {
						t.Errorf("%s: the View lacks %s, which a change made while it was built brought", what, n)
					}
				}
				for _, n := range tc.gone {
					if v.Set.Lookup(n) != nil {
						t.Errorf("%s: the View holds %s, which a change made while it was built took away", what, n)
					}
				}
			}
		})
	}
}
