// The tests of a main package live in it: package main cannot be imported.
package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/config"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// TestListingsMayHold checks what a listing says a directory cannot hold:
// the names of no entry, whatever the case of its letters, and nothing
// at all when an entry's name is not ASCII or the directory was not
// listed.
func TestListingsMayHold(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	folded := filepath.Join(dir, "folded")
	other := filepath.Join(dir, "other")
	for _, d := range []string{plain, folded, other, filepath.Join(plain, ".git"), filepath.Join(folded, ".Amplifier")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(plain, "x.md"), filepath.Join(folded, "AMPLIDEX.toml"), filepath.Join(other, "pyprojéct.toml")} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := newListings()
	for _, d := range []string{plain, folded, other} {
		if _, err := l.readDir(d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.readDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("listing a missing directory succeeded")
	}
	want := map[string][]string{ // the names each directory may hold
		plain:                         {".git"},
		folded:                        {"amplidex.toml", ".amplifier"},
		other:                         listedNames[:],
		filepath.Join(dir, "missing"): listedNames[:],
		dir:                           listedNames[:], // never listed
	}
	for d, names := range want {
		for _, n := range listedNames {
			may := false
			for _, w := range names {
				may = may || w == n
			}
			if got := l.mayHold(d, n); got != may {
				t.Errorf("mayHold(%s, %s) = %v, want %v", d, n, got, may)
			}
		}
	}
	var none *listings
	if !none.mayHold(plain, "amplidex.toml") {
		t.Errorf("nil listings say a directory cannot hold a name")
	}
}

// TestLookupWithListings checks that the project's configuration found
// for every directory is the same with the listings of a check as
// without: the nearest file, whatever its name or the case of its
// letters, up to the top of the repository.
func TestLookupWithListings(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"repo/.git/HEAD":                        "",
		"repo/amplidex.toml":                    "[check]\nignore = [\"schema/\"]\n",
		"repo/team/pyproject.toml":              "[project]\nname = \"team\"\n[tool.amplidex.check]\nseverity = \"warning\"\n",
		"repo/team/agents/a.md":                 "",
		"repo/team/context/deep/c.md":           "",
		"repo/team/context/deep/.amplidex.toml": "[check]\nselect = [\"ref/\"]\n",
		"repo/plain/pyproject.toml":             "[project]\nname = \"plain\"\n",
		"repo/plain/profiles/p.md":              "",
		"repo/odd/Amplidex.toml":                "[check]\nseverity = \"error\"\n",
		"repo/odd/agents/b.md":                  "",
		// Larger than a configuration is read: an error, with or without
		// listings.
		"repo/big/pyproject.toml": "[project]\nname = \"big\"\n" + strings.Repeat("# padding\n", syntax.DefaultMaxFileSize/10+1),
		"repo/big/agents/c.md":    "",
	}
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	listed := newListings()
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		dirs = append(dirs, p)
		entries, err := listed.readDir(p)
		for _, e := range entries {
			// As the Loader reads the collections' metadata.
			if e.Name() == "pyproject.toml" {
				src, err := os.ReadFile(filepath.Join(p, e.Name()))
				if err != nil {
					return err
				}
				listed.onRead(filepath.Join(p, e.Name()), src)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	pol := &Policy{user: &config.Config{}, userBase: filepath.Join(dir, "elsewhere")}
	plain, fast := pol.Lookup(), pol.Lookup()
	fast.listed = listed
	found, errs := 0, 0
	for _, d := range dirs {
		want, err := plain.projectConfig(d)
		got, ferr := fast.projectConfig(d)
		if (err != nil) != (ferr != nil) {
			t.Fatalf("%s: error %v with listings, %v without", d, ferr, err)
		}
		if err != nil {
			errs++
			continue
		}
		if (want == nil) != (got == nil) || want != nil && want.Path() != got.Path() {
			t.Errorf("%s: configuration %v with listings, %v without", d, configPath(got), configPath(want))
		}
		if want != nil {
			found++
		}
	}
	if found == 0 || errs == 0 {
		t.Fatalf("%d configurations found and %d errors in %d directories, want some of each", found, errs, len(dirs))
	}
}

func configPath(c *config.Config) string {
	if c == nil {
		return "none"
	}
	return c.Path()
}

// TestLooksLikeCollection checks how check tells a collection from a root
// of collections by its top directory alone.
func TestLooksLikeCollection(t *testing.T) {
	tests := []struct {
		name  string
		files []string // relative paths; a trailing / makes a directory
		links map[string]string
		want  bool
	}{
		{"flat", []string{"agents/a.md"}, nil, true},
		{"metadata", []string{"pyproject.toml"}, nil, true},
		{"metadata is a directory", []string{"pyproject.toml/"}, nil, false},
		{"metadata through a link", []string{"meta.toml"}, map[string]string{"pyproject.toml": "meta.toml"}, true},
		{"resources through a link", []string{"real/"}, map[string]string{"context": "real"}, true},
		{"dangling link", nil, map[string]string{"profiles": "nowhere"}, false},
		{"resource name of a file", []string{"modules"}, nil, false},
		{"pip metadata", []string{"team-1.0.dist-info/"}, nil, true},
		{"package only", []string{"team/__init__.py", "team/agents/a.md"}, nil, false},
		{"root of collections", []string{"a/pyproject.toml", "b/agents/x.md"}, nil, false},
		{"empty", nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if f[len(f)-1] == '/' {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
				} else if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for name, target := range tc.links {
				if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
					t.Skipf("symbolic links: %v", err)
				}
			}
			if got := looksLikeCollection(dir); got != tc.want {
				t.Errorf("looksLikeCollection = %v, want %v", got, tc.want)
			}
		})
	}
	if looksLikeCollection(filepath.Join(t.TempDir(), "missing")) {
		t.Errorf("a missing directory looks like a collection")
	}
}

// TestDirOf checks dirOf against filepath.Dir on clean paths.
func TestDirOf(t *testing.T) {
	for _, p := range []string{"/", "/a", "/a/b", "/a/b/c.md", "a", "a/b", ".", "..", "../a"} {
		p = filepath.FromSlash(p)
		if got, want := dirOf(p), filepath.Dir(p); got != want {
			t.Errorf("dirOf(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestListingsRealPath checks that the real paths remembered for the
// directories above collections give what filepath.EvalSymlinks gives,
// whichever of the directories on the way are symbolic links.
func TestListingsRealPath(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			t.Skipf("symbolic links: %v", err)
		}
	}
	mk("real/root/plain")
	mk("real/root/elsewhere-target")
	mk("other/team")
	link(filepath.Join(dir, "real"), "alias")                  // a root below a link
	link(filepath.Join(dir, "other", "team"), "real/root/ln")  // a collection that is a link
	link("elsewhere-target", "real/root/rel")                  // a relative link
	link(filepath.Join(dir, "alias", "root", "ln"), "chained") // a link through a link
	link(filepath.Join(dir, "nowhere"), "real/root/dangling")
	var paths []string
	for _, root := range []string{"real/root", "alias/root"} {
		for _, c := range []string{"plain", "elsewhere-target", "ln", "rel", "dangling", "missing"} {
			paths = append(paths, filepath.Join(dir, filepath.FromSlash(root), c))
		}
	}
	paths = append(paths, filepath.Join(dir, "chained"), filepath.Join(dir, "missing", "x"), dir,
		filepath.Join(dir, "alias", "root", "..", "root", "plain"))
	l := newListings()
	for range 2 { // resolved, then remembered
		for _, p := range paths {
			want, werr := filepath.EvalSymlinks(p)
			got, err := l.realPath(p)
			if (err != nil) != (werr != nil) || got != want {
				t.Errorf("realPath(%s) = %q, %v; EvalSymlinks gives %q, %v", p, got, err, want, werr)
			}
		}
	}
}
