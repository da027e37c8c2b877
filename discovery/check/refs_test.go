package check_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
)

// TestSetFixtures runs the fixtures in testdata/refs. Each archive lays out
// a project root (project/.amplifier/collections), a user root
// (home/.amplifier/collections) and a bundled root (bundled), and its want
// file lists every diagnostic expected, one per line:
// `relpath:line:col code severity`, with 1-based line and column, and
// optionally a quoted text (Go syntax) that the diagnostic's message must
// contain. $DIR in a file stands for the directory the tree is unpacked in. Lines of
// the archive's comment may set `max-file-size: N`, ask for
// `symlink PATH -> TARGET` or `fifo PATH`, or say `suppress` to apply the
// suppression comments of every file (discovery.Suppress).
func TestSetFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "refs", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var want []string
			texts := map[string][]string{} // want line → texts its message must contain
			tree := &txtar.Archive{}
			for _, f := range ar.Files {
				if f.Name == "want" {
					for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
						if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
							if key, quoted, ok := strings.Cut(l, ` "`); ok {
								text, err := strconv.Unquote(`"` + quoted)
								if err != nil {
									t.Fatalf("want line %q: %v", l, err)
								}
								l = key
								texts[l] = append(texts[l], text)
							}
							want = append(want, l)
						}
					}
					continue
				}
				tree.Files = append(tree.Files, f)
			}
			for i := range tree.Files {
				tree.Files[i].Data = []byte(strings.ReplaceAll(string(tree.Files[i].Data), "$DIR", dir))
			}
			unpackLayout(t, dir, tree)
			loader := &discovery.Loader{}
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				if v, ok := strings.CutPrefix(line, "max-file-size: "); ok {
					n, err := strconv.Atoi(v)
					if err != nil {
						t.Fatal(err)
					}
					loader.MaxFileSize = int64(n)
				}
				if v, ok := strings.CutPrefix(line, "symlink "); ok {
					link, target, _ := strings.Cut(v, " -> ")
					p := filepath.Join(dir, filepath.FromSlash(link))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(target, p); err != nil {
						t.Fatal(err)
					}
				}
				if v, ok := strings.CutPrefix(line, "fifo "); ok {
					p := filepath.Join(dir, filepath.FromSlash(v))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := mkfifo(p); err != nil {
						t.Skipf("no FIFOs here: %v", err)
					}
				}
			}
			project := filepath.Join(dir, "project")
			cat := catalog.New(catalog.Options{Loader: loader, Home: filepath.Join(dir, "home"),
				Bundled: []string{filepath.Join(dir, "bundled")}})
			st, _ := cat.AddProject(project)
			view, _ := st.View(project)
			// Suppression comments apply in the View itself.
			ds := view.Diagnostics()
			var got []string
			msgs := map[string][]string{}
			for _, d := range ds {
				rel, _ := filepath.Rel(dir, d.Path)
				key := fmt.Sprintf("%s:%d:%d %s %s", filepath.ToSlash(rel),
					d.Range.Start.Line+1, d.Range.Start.Character+1, d.Code, d.Severity)
				got = append(got, key)
				msgs[key] = append(msgs[key], strings.ReplaceAll(d.Message, dir, "$DIR"))
			}
			for key, want := range texts {
				for _, text := range want {
					if !slices.ContainsFunc(msgs[key], func(m string) bool { return strings.Contains(m, text) }) {
						t.Errorf("%s: no message contains %q; messages: %q", key, text, msgs[key])
					}
				}
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("diagnostics:\n%s\nwant:\n%s\nmessages:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), messages(ds))
			}
		})
	}
}

func messages(ds []diag.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "  %s\n", d)
	}
	return b.String()
}

// TestEveryCodeHasAFixture makes sure each code in diag.Codes is
// asserted by at least one fixture's want list, in any package's testdata.
func TestEveryCodeHasAFixture(t *testing.T) {
	var all strings.Builder
	const module = "../.." // the module's root
	err := filepath.Walk(module, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() && strings.HasPrefix(fi.Name(), ".") && p != module {
			return filepath.SkipDir
		}
		if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".txtar") {
			return err
		}
		ar, err := txtar.ParseFile(p)
		if err != nil {
			return err
		}
		for _, f := range ar.Files {
			if f.Name == "want" {
				all.Write(f.Data)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range diag.Codes {
		if !strings.Contains(all.String(), " "+c.Code+" ") {
			t.Errorf("no fixture asserts %s", c.Code)
		}
	}
}

// TestNotInstalledIncremental installs, changes, breaks and removes a
// collection that one collection requires and another refers to without
// requiring it, and checks after each step that the catalog's incremental
// answer is the fresh one (check.RefNames covers what the
// not-installed rule depends on) and what it says.
func TestNotInstalledIncremental(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	root := filepath.Join(home, ".amplifier", "collections")
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	profile := func(name, extends string) string {
		return fmt.Sprintf("---\nprofile:\n  name: %s\n  version: 1.0.0\n  description: d\n  extends: %s\n---\nSee @foundation:context/x.md.\n", name, extends)
	}
	write("app/pyproject.toml", "[project]\nname = \"app\"\nversion = \"1.0.0\"\ndescription = \"d\"\n\n[tool.amplifier.collection.requires]\nfoundation = \"^1.0.0\"\n")
	write("app/profiles/dev.md", profile("dev", "foundation:base"))
	write("other/pyproject.toml", "[project]\nname = \"other\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
	write("other/profiles/p.md", profile("p", "foundation:base"))
	foundation := filepath.Join(root, "foundation")
	newCatalog := func() *catalog.Catalog {
		return catalog.New(catalog.Options{Home: home, Loader: &discovery.Loader{}})
	}
	cat := newCatalog()
	cat.AddProject("")
	render := func(v *catalog.View) []string {
		var out []string
		for _, d := range v.Diagnostics() {
			rel, _ := filepath.Rel(root, d.Path)
			out = append(out, fmt.Sprintf("%s %s %s", filepath.ToSlash(rel), d.Code, d.Message))
		}
		return out
	}
	steps := []struct {
		name   string
		change func()
		want   []string // code of each diagnostic, after its file
	}{
		{"not installed", func() {}, []string{
			"app/pyproject.toml deps/not-installed", "other/profiles/p.md ref/extends-unresolved", "other/profiles/p.md ref/mention-unresolved"}},
		{"installed", func() {
			write("foundation/pyproject.toml", "[project]\nname = \"foundation\"\nversion = \"1.2.0\"\ndescription = \"d\"\n")
			write("foundation/profiles/base.md", "---\nprofile:\n  name: base\n  version: 1.0.0\n  description: d\nsession:\n  orchestrator:\n    module: loop\n  context:\n    module: ctx\n---\n")
			write("foundation/context/x.md", "x\n")
		}, nil},
		{"installed without the file mentioned", func() {
			if err := os.Remove(filepath.Join(foundation, "context", "x.md")); err != nil {
				t.Fatal(err)
			}
		}, []string{"app/profiles/dev.md ref/mention-unresolved", "other/profiles/p.md ref/mention-unresolved"}},
		{"too old", func() {
			write("foundation/pyproject.toml", "[project]\nname = \"foundation\"\nversion = \"0.9.0\"\ndescription = \"d\"\n")
			write("foundation/context/x.md", "x\n")
		}, []string{"app/pyproject.toml deps/unsatisfied"}},
		{"no pyproject.toml: skipped", func() {
			if err := os.Remove(filepath.Join(foundation, "pyproject.toml")); err != nil {
				t.Fatal(err)
			}
		}, []string{"app/pyproject.toml deps/not-installed", "foundation metadata/missing-pyproject",
			"other/profiles/p.md ref/extends-unresolved", "other/profiles/p.md ref/mention-unresolved"}},
		{"removed", func() {
			if err := os.RemoveAll(foundation); err != nil {
				t.Fatal(err)
			}
		}, []string{"app/pyproject.toml deps/not-installed", "other/profiles/p.md ref/extends-unresolved", "other/profiles/p.md ref/mention-unresolved"}},
	}
	for _, step := range steps {
		step.change()
		st, _ := cat.Update(catalog.Change{Root: root, Dir: foundation})
		v, _ := st.View("")
		got := render(v)
		fresh, _ := newCatalog().AddProject("")
		fv, _ := fresh.View("")
		if want := render(fv); !slices.Equal(got, want) {
			t.Fatalf("%s: incremental\n%s\nfresh\n%s", step.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		var codes []string
		for _, d := range v.Diagnostics() {
			rel, _ := filepath.Rel(root, d.Path)
			codes = append(codes, filepath.ToSlash(rel)+" "+d.Code)
		}
		if !slices.Equal(codes, step.want) {
			t.Errorf("%s: diagnostics\n%s\nwant codes %q", step.name, strings.Join(got, "\n"), step.want)
		}
	}
}
