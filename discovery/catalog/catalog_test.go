package catalog_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
)

// tree writes random collections into a project root and a user root.
type tree struct {
	t    *testing.T
	r    *rand.Rand
	home string
	proj string
}

func (tr *tree) root(kind int) string {
	if kind == 0 {
		return filepath.Join(tr.proj, ".amplifier", "collections")
	}
	return filepath.Join(tr.home, ".amplifier", "collections")
}

func (tr *tree) write(p, text string) {
	tr.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// collection writes (or rewrites) the collection directory dir with random
// content whose references go to names among c0…c5.
func (tr *tree) collection(dir string) {
	r := tr.r
	os.RemoveAll(dir)
	name := fmt.Sprintf("c%d", r.IntN(6))
	version := fmt.Sprintf("1.%d.0", r.IntN(3))
	py := fmt.Sprintf("[project]\nname = %q\nversion = %q\ndescription = \"d\"\n", name, version)
	if r.IntN(4) == 0 {
		py = fmt.Sprintf("[project]\nname = %q\n", name) // invalid: skipped
	}
	if r.IntN(3) == 0 {
		py += fmt.Sprintf("\n[tool.amplifier.collection.requires]\nc%d = \">=1.1.0\"\n", r.IntN(6))
	}
	if r.IntN(10) != 0 {
		tr.write(filepath.Join(dir, "pyproject.toml"), py)
	}
	for i := range r.IntN(3) {
		ext := ""
		switch r.IntN(4) {
		case 0:
			ext = fmt.Sprintf("  extends: c%d:p%d\n", r.IntN(6), r.IntN(3))
		case 1:
			ext = fmt.Sprintf("  extends: p%d\n", r.IntN(3))
		}
		agents := ""
		if r.IntN(2) == 0 {
			agents = fmt.Sprintf("agents:\n  - a%d\n  - c%d:a%d\n", r.IntN(4), r.IntN(6), r.IntN(3))
		}
		session := "session:\n  orchestrator:\n    module: loop\n  context:\n    module: ctx\n"
		if ext != "" && r.IntN(2) == 0 {
			session = ""
		}
		tr.write(filepath.Join(dir, "profiles", fmt.Sprintf("p%d.md", i)),
			fmt.Sprintf("---\nprofile:\n  name: p%d\n  version: 1.0.0\n  description: x\n%s%s%s---\nSee @c%d:context/k%d.md\n", i, ext, session, agents, r.IntN(6), r.IntN(2)))
	}
	for i := range r.IntN(3) {
		tr.write(filepath.Join(dir, "agents", fmt.Sprintf("a%d.md", i)),
			fmt.Sprintf("---\nmeta:\n  name: a%d\n  description: agent\n---\nUses @c%d:agents/a%d.md\n", i, r.IntN(6), r.IntN(3)))
	}
	for i := range r.IntN(2) {
		tr.write(filepath.Join(dir, "context", fmt.Sprintf("k%d.md", i)), fmt.Sprintf("@c%d:context/k0.md\n", r.IntN(6)))
	}
}

// render prints what a View says, for comparing two Views.
func render(v *catalog.View) string {
	var b strings.Builder
	for _, c := range v.Set.Collections() {
		fmt.Fprintf(&b, "col %s %s %v\n", c.Dir, c.Name, c.Valid)
	}
	for _, c := range v.Set.Winners() {
		fmt.Fprintf(&b, "win %s %s\n", c.Name, c.Dir)
	}
	for _, d := range v.Diagnostics() {
		fmt.Fprintf(&b, "%s\n", d)
	}
	return b.String()
}

// TestUpdateMatchesFreshCatalog changes random collections, tells the
// catalog which directory changed, and compares its View with one a fresh
// catalog computes from scratch.
func TestUpdateMatchesFreshCatalog(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { updateMatchesFresh(t, seed) })
	}
}

func updateMatchesFresh(t *testing.T, seed uint64) {
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(3, seed)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
	dirs := []string{}
	for kind := range 2 {
		for i := range 5 {
			dirs = append(dirs, filepath.Join(tr.root(kind), fmt.Sprintf("d%d", i)))
		}
	}
	for _, d := range dirs {
		tr.collection(d)
	}
	lock := filepath.Join(tr.home, ".amplifier", "collections.lock")
	writeLock := func() {
		tr.write(lock, fmt.Sprintf(`{"version": "1.1", "collections": {"c%d": {"name": "c1", "version": "1.0.0", "source": "git+https://x/y@main", "path": "collections/d%d", "modules": {}}}}`, tr.r.IntN(6), tr.r.IntN(5)))
	}
	writeLock()
	newCatalog := func() *catalog.Catalog {
		return catalog.New(catalog.Options{Home: tr.home, Loader: &discovery.Loader{}})
	}
	cat := newCatalog()
	cat.AddProject("")
	cat.AddProject(tr.proj)
	for step := range 150 {
		var changes []catalog.Change
		for range 1 + tr.r.IntN(2) {
			d := dirs[tr.r.IntN(len(dirs))]
			if tr.r.IntN(5) == 0 {
				os.RemoveAll(d)
			} else {
				tr.collection(d)
			}
			switch tr.r.IntN(8) {
			case 0:
				changes = append(changes, catalog.Change{Root: filepath.Dir(d)})
			case 1:
				writeLock()
				changes = append(changes, catalog.Change{Root: filepath.Dir(d), Dir: d}, catalog.Change{Lock: lock})
			default:
				changes = append(changes, catalog.Change{Root: filepath.Dir(d), Dir: d})
			}
		}
		st, _ := cat.Update(changes...)
		for _, project := range []string{tr.proj, ""} {
			got, _ := st.View(project)
			st2, _ := newCatalog().AddProject(project)
			want, _ := st2.View(project)
			if g, w := render(got), render(want); g != w {
				t.Fatalf("step %d, project %q: incremental view\n%s\nfresh view\n%s", step, project, g, w)
			}
		}
	}
}
