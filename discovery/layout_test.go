package discovery_test

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
)

// unpackLayout writes the files of a txtar archive below dir.
func unpackLayout(t *testing.T, dir string, ar *txtar.Archive) {
	t.Helper()
	for _, f := range ar.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f.Name, "/.dir") {
			continue // an empty directory
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestComparePaths(t *testing.T) {
	paths := []string{"a.md", "a-b/x.md", "Z.md", "a/x.md", "a/b/c.md", "a/b.md"}
	sort.Slice(paths, func(i, j int) bool { return diag.ComparePaths(paths[i], paths[j]) < 0 })
	want := []string{"Z.md", "a/b/c.md", "a/b.md", "a/x.md", "a-b/x.md", "a.md"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("sorted = %q, want %q", paths, want)
	}
}

func TestDetectShape(t *testing.T) {
	tests := []struct {
		name       string
		files      string
		layout     discovery.Layout
		base       string // relative to the collection dir
		pyproject  string
		pkgPyproj  string
		collection bool
	}{
		{"flat", "-- pyproject.toml --\n-- profiles/a.md --\n", discovery.LayoutFlat, ".", "pyproject.toml", "", true},
		{"nested named after the project", "-- pyproject.toml --\n-- my_coll/__init__.py --\n-- my_coll/pyproject.toml --\n-- my_coll/agents/a.md --\n",
			discovery.LayoutNested, "my_coll", "pyproject.toml", "my_coll/pyproject.toml", true},
		{"nested in another package", "-- pyproject.toml --\n-- other_pkg/__init__.py --\n-- other_pkg/profiles/a.md --\n",
			discovery.LayoutNested, "other_pkg", "pyproject.toml", "", true},
		{"pip install without root pyproject", "-- my_coll/__init__.py --\n-- my_coll/pyproject.toml --\n-- my_coll/agents/a.md --\n-- my_coll-1.0.0.dist-info/METADATA --\n",
			discovery.LayoutNested, "my_coll", "my_coll/pyproject.toml", "", true},
		{"hybrid", "-- my_coll/__init__.py --\n-- my_coll/pyproject.toml --\n-- agents/a.md --\n",
			discovery.LayoutHybrid, ".", "my_coll/pyproject.toml", "", true},
		{"flat wins over a package copy with resources", "-- pyproject.toml --\n-- agents/a.md --\n-- pkg/pyproject.toml --\n-- pkg/agents/b.md --\n",
			discovery.LayoutFlat, ".", "pyproject.toml", "pkg/pyproject.toml", true},
		{"root package with __init__.py", "-- pyproject.toml --\n-- __init__.py --\n-- modules/tool-x/__init__.py --\n",
			discovery.LayoutFlat, ".", "pyproject.toml", "", true},
		{"resources without metadata", "-- agents/a.md --\n-- context/b.md --\n", discovery.LayoutFlat, ".", "", "", false},
		{"neither", "-- status-test.md --\n", discovery.LayoutNone, ".", "", "", false},
		{"metadata only", "-- pyproject.toml --\n-- README.md --\n", discovery.LayoutNone, ".", "pyproject.toml", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			unpackLayout(t, dir, txtar.Parse([]byte(tc.files)))
			s, err := discovery.DetectShape(dir, "")
			if err != nil {
				t.Fatal(err)
			}
			rel := func(p string) string {
				if p == "" {
					return ""
				}
				r, _ := filepath.Rel(dir, p)
				return filepath.ToSlash(r)
			}
			if s.Layout != tc.layout || rel(s.Base) != tc.base || rel(s.Pyproject) != tc.pyproject ||
				rel(s.PackagePyproject) != tc.pkgPyproj || s.IsCollection() != tc.collection {
				t.Errorf("got layout=%s base=%s pyproject=%q package=%q collection=%v; want %s %s %q %q %v",
					s.Layout, rel(s.Base), rel(s.Pyproject), rel(s.PackagePyproject), s.IsCollection(),
					tc.layout, tc.base, tc.pyproject, tc.pkgPyproj, tc.collection)
			}
		})
	}
}

func TestListResources(t *testing.T) {
	dir := t.TempDir()
	unpackLayout(t, dir, txtar.Parse([]byte(`
-- profiles/dev.md --
-- profiles/README.md --
-- profiles/readme.MD --
-- profiles/.hidden.md --
-- profiles/dev.md~ --
-- profiles/.#dev.md --
-- profiles/dev.md.swp --
-- profiles/dev.md___jb_tmp___ --
-- profiles/nested/deep.md --
-- profiles/notes.txt --
-- agents/Zed.md --
-- agents/alpha.md --
-- agents/4913 --
-- context/README.md --
-- context/a.md --
-- context/a-b/x.md --
-- context/a/x.md --
-- context/Z.md --
-- context/.git/x.md --
-- context/_drafts/d.md --
-- context/node_modules/n.md --
-- context/venv/v.md --
-- context/notes.egg-info/e.md --
-- context/__pycache__/c.md --
-- scenario-tools/blog-writer/pyproject.toml --
-- scenario-tools/no-meta/main.py --
-- scenario-tools/__pycache__/x.pyc --
-- scenario-tools/_helper/pyproject.toml --
-- modules/_internal/__init__.py --
-- modules/tool-x/__init__.py --
-- modules/hooks-y/pyproject.toml --
-- modules/loop-z/README.md --
`)))
	// A directory symlink inside context/ is not followed, so a loop is harmless.
	if err := os.Symlink(filepath.Join(dir, "context"), filepath.Join(dir, "context", "loop")); err != nil {
		t.Fatal(err)
	}
	// A file symlink is followed; a dangling one is skipped with a warning.
	if err := os.Symlink(filepath.Join(dir, "context", "a.md"), filepath.Join(dir, "context", "linked.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere.md"), filepath.Join(dir, "context", "dangling.md")); err != nil {
		t.Fatal(err)
	}
	res, diags := discovery.ListResources(dir)
	var got []string
	for _, r := range res {
		got = append(got, string(r.Kind)+" "+r.Name+" "+r.Rel)
	}
	want := []string{
		"profile dev profiles/dev.md",
		"agent Zed agents/Zed.md",
		"agent alpha agents/alpha.md",
		"context README.md context/README.md",
		"context Z.md context/Z.md",
		"context _drafts/d.md context/_drafts/d.md",
		"context a/x.md context/a/x.md",
		"context a-b/x.md context/a-b/x.md",
		"context a.md context/a.md",
		"context linked.md context/linked.md",
		"context node_modules/n.md context/node_modules/n.md",
		"context notes.egg-info/e.md context/notes.egg-info/e.md",
		"context venv/v.md context/venv/v.md",
		"scenario-tool _helper scenario-tools/_helper",
		"scenario-tool blog-writer scenario-tools/blog-writer",
		"scenario-tool no-meta scenario-tools/no-meta",
		"module _internal modules/_internal",
		"module hooks-y modules/hooks-y",
		"module tool-x modules/tool-x",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resources:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var codes []string
	for _, d := range diags {
		codes = append(codes, d.Code+" "+filepath.Base(d.Path))
	}
	wantCodes := []string{diag.CodeSymlinkLoop + " dangling.md", diag.CodeToolNoPyproject + " no-meta"}
	if !reflect.DeepEqual(codes, wantCodes) {
		t.Errorf("diagnostics = %q, want %q", codes, wantCodes)
	}
}

// FuzzJoinName holds the join of a clean directory and an entry's name to
// filepath.Join.
func FuzzJoinName(f *testing.F) {
	for _, s := range [][2]string{{"/", "a"}, {"", "a"}, {".", "a"}, {"..", "a"}, {"/a/b", "c.md"}, {"a", "b"}, {"C:", "x"}, {`C:\`, "x"}, {"C:.", "x"}, {`\\s\h`, "x"}, {"/a/b", ".x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, dir, name string) {
		dir = filepath.Clean(dir)
		if name == "" || name == "." || name == ".." || strings.ContainsFunc(name, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(byte(r)) }) {
			return
		}
		if got, want := discovery.JoinName(dir, name), filepath.Join(dir, name); got != want {
			t.Errorf("JoinName(%q, %q) = %q, want %q", dir, name, got, want)
		}
	})
}

func TestModuleType(t *testing.T) {
	cases := []struct{ dir, want string }{
		{"tool-custom", "tool"},
		{"tool-issue", "tool"},
		{"hooks-logger", "hook"},
		{"hook-issue-auto-work", "hook"},
		{"provider-anthropic", "provider"},
		{"loop-streaming", "orchestrator"},
		{"orchestrator-basic", "orchestrator"},
		{"context-simple", "context"},
		{"amplifier-module-loop-streaming", "orchestrator"},
		{"Tool-Upper", "tool"},
		{"issue-manager", "unknown"},
		{"tool-", "unknown"},
		{"tools", "unknown"},
		{"", "unknown"},
		{"anthropic-provider", "unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			if got := discovery.ModuleType(tc.dir); got != tc.want {
				t.Errorf("ModuleType(%q) = %q, want %q", tc.dir, got, tc.want)
			}
		})
	}
}

// TestIsMarked: outside a collections root, a pyproject.toml is a
// collection's only where the layout says so; an application's or a
// library's is not.
func TestIsMarked(t *testing.T) {
	tests := []struct {
		name  string
		files string
		want  bool
	}{
		{"flat", "-- pyproject.toml --\n-- profiles/a.md --\n", true},
		{"nested", "-- pyproject.toml --\n-- my_coll/__init__.py --\n-- my_coll/agents/a.md --\n", true},
		{"hybrid", "-- my_coll/__init__.py --\n-- my_coll/pyproject.toml --\n-- agents/a.md --\n", true},
		{"resources without metadata", "-- agents/a.md --\n", true},
		{"declared", "-- pyproject.toml --\n[project]\nname = \"x\"\n\n[tool.amplifier.collection]\nauthor = \"A\"\n", true},
		{"declared, indented", "-- pyproject.toml --\n  [tool.amplifier]\n", true},
		{"an application", "-- pyproject.toml --\n[project]\nname = \"app\"\nversion = \"0.1.0\"\n-- src/app/__init__.py --\n", false},
		{"a library with a package", "-- pyproject.toml --\n[project]\nname = \"lib\"\n-- lib/__init__.py --\n-- lib/pyproject.toml --\n", false},
		{"a comment is no table", "-- pyproject.toml --\n# see [tool.amplifier.collection]\nx = \"[tool.amplifier]\"\n", false},
		{"another tool's table", "-- pyproject.toml --\n[tool.amplifierx]\n[tool.amplidex]\nseverity = \"error\"\n", false},
		{"neither", "-- README.md --\n", false},
		{"a directory of collections", "-- a/pyproject.toml --\n-- a/agents/x.md --\n-- b/pyproject.toml --\n-- b/context/c.md --\n", false},
		{"a package's declared copy only", "-- pkg/__init__.py --\n-- pkg/pyproject.toml --\n[tool.amplifier.collection]\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			unpackLayout(t, dir, txtar.Parse([]byte(tc.files)))
			if got := discovery.IsMarked(dir); got != tc.want {
				t.Errorf("IsMarked = %v, want %v", got, tc.want)
			}
		})
	}
}
