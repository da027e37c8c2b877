package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/query"
	"github.com/rogpeppe/go-internal/txtar"
)

// TestEarlyResolveEqualsFull: for every name of every view of the
// fixture (and one that resolves nowhere), the early answer, from the
// summary the catalog's State leaves, is the answer of the View: flat over
// nested in one root, project over user over bundled, invalid candidates
// skipped, metadata that names another than its directory.
func TestEarlyResolveEqualsFull(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "early-resolve.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range ar.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat := catalog.New(catalog.Options{Home: filepath.Join(dir, "home"), Bundled: []string{filepath.Join(dir, "bundled")}})
	cat.AddProject("")
	for _, p := range []string{"p1", "p2"} {
		cat.AddProject(filepath.Join(dir, p))
	}
	st := cat.State()
	roots, err := summaryOf(st)
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeSummary(encodeSummary(1, 'e', roots))
	if err != nil {
		t.Fatal(err)
	}
	answers := 0
	for key, v := range st.Views() {
		for _, name := range append(v.Set.Names(), "nowhere") {
			want, err := query.MethodResolve.Answer(v, query.NameParams{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			want.Unverified = true
			got, ok := s.resolve(v.Set.Roots, name)
			if !ok {
				t.Fatalf("view %q: the summary lacks a root of %v", key, v.Set.Roots)
			}
			if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
				t.Errorf("view %q, %s: early answer\n%s\nwant\n%s", key, name, g, w)
			}
			answers++
		}
	}
	t.Logf("%d answers compared", answers)

	// The fixture resolves as its comment says.
	v, _ := st.View("")
	x := v.Set.Resolve("x")
	if x.Winner == nil || x.Winner.Layout != discovery.LayoutFlat || len(x.Shadowed) != 2 ||
		x.Shadowed[0].Layout != discovery.LayoutNested || len(x.Skipped) != 1 {
		t.Errorf("x in the view of no project: %+v", x)
	}
	if o := v.Set.Resolve("misnamed"); o.Winner != nil || len(o.Skipped) != 0 {
		t.Errorf("misnamed: %+v", o)
	}
	if o := v.Set.Resolve("other"); o.Winner == nil || filepath.Base(o.Winner.Dir) != "misnamed" {
		t.Errorf("other: %+v", o)
	}
	if !slices.Contains(v.Set.Names(), "bare") {
		t.Errorf("the directory without metadata answers to none of %v", v.Set.Names())
	}
	p1, _ := st.View(filepath.Join(dir, "p1"))
	if w := p1.Set.Resolve("x").Winner; w == nil || w.Root.Kind != discovery.RootProject {
		t.Errorf("x in p1: %+v", w)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEarlyRootsStandIn: an early answer is over the roots the question
// names: the client's own, with the collection it stands in first, not
// the daemon's alone.
func TestEarlyRootsStandIn(t *testing.T) {
	own := earlyRoots(query.Common{Project: "/p"}, "/h", []string{"/b"})
	if want := discovery.Roots("/p", "/h", []string{"/b"}); !slices.Equal(own, want) {
		t.Errorf("the daemon's own roots: %v, want %v", own, want)
	}
	got := earlyRoots(query.Common{Project: "/p", Roots: &query.Roots{Home: "/o", Bundled: []string{"/c"}, Collection: "/src/spec-kit"}}, "/h", []string{"/b"})
	want := append([]discovery.Root{{Kind: discovery.RootArgument, Path: "/src/spec-kit"}}, discovery.Roots("/p", "/o", []string{"/c"})...)
	if !slices.Equal(got, want) {
		t.Errorf("a client's roots: %v, want %v", got, want)
	}
}
