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
	"github.com/amplidex/amplidex/discovery/diag"
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

// TestDiagnosticsUnderMatchesFilter asks DiagnosticsUnder about every file
// and directory of random trees (a linked collection among them), and
// about paths above and beside them, and compares its answer with the
// whole list filtered by path.
func TestDiagnosticsUnderMatchesFilter(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			base := t.TempDir()
			tr := &tree{t: t, r: rand.New(rand.NewPCG(7, seed)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
			for kind := range 2 {
				for i := range 6 {
					tr.collection(filepath.Join(tr.root(kind), fmt.Sprintf("d%d", i)))
				}
			}
			elsewhere := filepath.Join(base, "elsewhere", "linked")
			tr.collection(elsewhere)
			if err := os.Symlink(elsewhere, filepath.Join(tr.root(1), "linked")); err != nil {
				t.Skip("no symbolic links here:", err)
			}
			tr.write(filepath.Join(tr.home, ".amplifier", "collections.lock"), `{"version": "1.1", "collections": {"c9": {"name": "c9", "version": "1.0.0", "source": "git+https://x/y@main", "path": "collections/nowhere", "modules": {}}}}`)
			st, _ := catalog.New(catalog.Options{Home: tr.home, Loader: &discovery.Loader{}}).AddProject(tr.proj)
			v, _ := st.View(tr.proj)
			all := v.Diagnostics()
			if len(all) == 0 {
				t.Fatal("the tree has no diagnostics to look for")
			}
			paths := []string{string(filepath.Separator), base, filepath.Join(base, "nowhere"), filepath.Join(tr.root(1), "d1") + "x"}
			filepath.WalkDir(base, func(p string, _ os.DirEntry, err error) error {
				paths = append(paths, p)
				return err
			})
			for _, d := range all {
				paths = append(paths, d.Path)
			}
			found := 0
			for _, p := range paths {
				var want []diag.Diagnostic
				for _, d := range all {
					if d.Path == p || strings.HasPrefix(d.Path, strings.TrimSuffix(p, string(filepath.Separator))+string(filepath.Separator)) {
						want = append(want, d)
					}
				}
				got := v.DiagnosticsUnder(p)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("DiagnosticsUnder(%s):\n%v\nfiltered Diagnostics:\n%v", p, got, want)
				}
				found += len(got)
			}
			if found == 0 {
				t.Fatal("no path had a diagnostic")
			}
		})
	}
}
