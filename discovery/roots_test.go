package discovery_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
)

// The user the ownership tests pretend to be, and another one.
const (
	me      = 1000
	someone = 4242
)

// TestFindProjectOwnership lays out directories and pretends some belong to
// another user. The top of each tree is a sticky directory anyone can write
// in, owned by root (as /tmp is), so that no search goes above it.
func TestFindProjectOwnership(t *testing.T) {
	tests := []struct {
		name  string
		dirs  []string // created under the top, mode 0755; a trailing "!" makes one 1777
		files []string // empty files created under the top
		// links: symbolic link → target, created under the top; the
		// owner of a link itself is given in owners with an "@" after it.
		links map[string]string
		// owners: path (relative to the top) → uid; the rest is mine,
		// the top is root's.
		owners map[string]int
		wd     string
		uid    int // me when 0
		// want: the project directory ("" for none), the refused
		// .amplifier directory and its owner.
		dir, refused string
		owner        int
	}{
		{
			name: "own project above",
			dirs: []string{"home/me/proj/.amplifier", "home/me/proj/src/sub"},
			wd:   "home/me/proj/src/sub",
			dir:  "home/me/proj", owner: -1,
		},
		{
			name: "nothing found: the working directory",
			dirs: []string{"home/me/work"},
			wd:   "home/me/work",
			dir:  "home/me/work", owner: -1,
		},
		{
			name:    "squatted in the sticky top",
			dirs:    []string{".amplifier", "me/work"},
			owners:  map[string]int{".amplifier": someone},
			wd:      "me/work",
			refused: ".amplifier", owner: someone,
		},
		{
			name:    "my .amplifier in the sticky top: the top is not mine",
			dirs:    []string{".amplifier", "me/work"},
			wd:      "me/work",
			refused: ".amplifier", owner: 0,
		},
		{
			name:    "another user's directory holds a .amplifier",
			dirs:    []string{"shared/.amplifier", "shared/me/work"},
			owners:  map[string]int{"shared": someone, "shared/.amplifier": someone},
			wd:      "shared/me/work",
			refused: "shared/.amplifier", owner: someone,
		},
		{
			name:    "a .amplifier of mine in another user's directory",
			dirs:    []string{"shared/.amplifier", "shared/me/work"},
			owners:  map[string]int{"shared": someone},
			wd:      "shared/me/work",
			refused: "shared/.amplifier", owner: someone,
		},
		{
			name:    "another user's .amplifier in my directory",
			dirs:    []string{"me/.amplifier", "me/work"},
			owners:  map[string]int{"me/.amplifier": someone},
			wd:      "me/work",
			refused: "me/.amplifier", owner: someone,
		},
		{
			name:    "the working directory holds the refused one",
			dirs:    []string{"me/work/.amplifier"},
			owners:  map[string]int{"me/work/.amplifier": someone},
			wd:      "me/work",
			refused: "me/work/.amplifier", owner: someone,
		},
		{
			name:   "another user's directory that not all may write is passed",
			dirs:   []string{"me/.amplifier", "me/bob/work"},
			owners: map[string]int{"me/bob": someone},
			wd:     "me/bob/work",
			dir:    "me", owner: -1,
		},
		{
			name:    "root's .amplifier is refused",
			dirs:    []string{"etc/.amplifier", "etc/me/work"},
			owners:  map[string]int{"etc": 0, "etc/.amplifier": 0},
			wd:      "etc/me/work",
			refused: "etc/.amplifier", owner: 0,
		},
		{
			name:   "passed through root's directory to my project",
			dirs:   []string{"root/me/.amplifier", "root/me/work"},
			owners: map[string]int{"root": 0},
			wd:     "root/me/work",
			dir:    "root/me", owner: -1,
		},
		{
			name:   "a world-writable directory of another user stops the search",
			dirs:   []string{"me/.amplifier", "me/tmp!", "me/tmp/mine/work"},
			owners: map[string]int{"me/tmp": 0},
			wd:     "me/tmp/mine/work",
			dir:    "me/tmp/mine/work", owner: -1,
		},
		{
			name: "a world-writable directory of my own does not stop it",
			dirs: []string{"me/.amplifier", "me/open!", "me/open/work"},
			wd:   "me/open/work",
			dir:  "me", owner: -1,
		},
		{
			name:  "a .amplifier that is a file is not a project",
			dirs:  []string{"me/.amplifier", "me/work"},
			files: []string{"me/work/.amplifier"},
			wd:    "me/work",
			dir:   "me", owner: -1,
		},
		{
			name:    "another user's link as .amplifier, to my directory",
			dirs:    []string{"me/amp", "me/work"},
			links:   map[string]string{"me/.amplifier": "amp"},
			owners:  map[string]int{"me/.amplifier@": someone},
			wd:      "me/work",
			refused: "me/.amplifier", owner: someone,
		},
		{
			name:    "my link as .amplifier, to another user's directory",
			dirs:    []string{"other/amp", "me/work"},
			links:   map[string]string{"me/.amplifier": "../other/amp"},
			owners:  map[string]int{"other/amp": someone},
			wd:      "me/work",
			refused: "me/.amplifier", owner: someone,
		},
		{
			name:  "my link as .amplifier, to my directory",
			dirs:  []string{"me/amp", "me/work"},
			links: map[string]string{"me/.amplifier": "amp"},
			wd:    "me/work",
			dir:   "me", owner: -1,
		},
		{
			name:   "root takes what root owns",
			dirs:   []string{"srv/.amplifier", "srv/work"},
			owners: map[string]int{"srv": 0, "srv/.amplifier": 0},
			uid:    -1,
			wd:     "srv/work",
			dir:    "srv", owner: -1,
		},
		{
			name:    "root refuses what another user owns",
			dirs:    []string{"srv/.amplifier", "srv/work"},
			owners:  map[string]int{"srv": 0, "srv/.amplifier": someone},
			uid:     -1,
			wd:      "srv/work",
			refused: "srv/.amplifier", owner: someone,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			if err := os.Chmod(top, 0o777|os.ModeSticky); err != nil {
				t.Fatal(err)
			}
			for _, d := range tc.dirs {
				open := strings.HasSuffix(d, "!")
				p := filepath.Join(top, filepath.FromSlash(strings.TrimSuffix(d, "!")))
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
				if open {
					if err := os.Chmod(p, 0o777|os.ModeSticky); err != nil {
						t.Fatal(err)
					}
				}
			}
			for link, target := range tc.links {
				if err := os.Symlink(filepath.FromSlash(target), filepath.Join(top, filepath.FromSlash(link))); err != nil {
					t.Skipf("no symbolic links here: %v", err)
				}
			}
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(top, filepath.FromSlash(f)), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			uid := me
			if tc.uid == -1 {
				uid = 0
			}
			// Owners of directories are known by identity, so that a
			// directory reached through a link is still itself.
			owner := func(path string, fi fs.FileInfo) int {
				rel, err := filepath.Rel(top, path)
				if err != nil || strings.HasPrefix(rel, "..") {
					return 0 // everything above the top: root's
				}
				if fi.Mode()&fs.ModeSymlink != 0 {
					if o, ok := tc.owners[filepath.ToSlash(rel)+"@"]; ok {
						return o
					}
					return uid
				}
				if top, err := os.Stat(top); err == nil && os.SameFile(fi, top) {
					return 0 // the top: root's
				}
				for p, o := range tc.owners {
					if pi, err := os.Stat(filepath.Join(top, filepath.FromSlash(p))); err == nil && !strings.HasSuffix(p, "@") && os.SameFile(fi, pi) {
						return o
					}
				}
				return uid
			}
			got := discovery.FindProjectAs(filepath.Join(top, filepath.FromSlash(tc.wd)), uid, owner)
			abs := func(rel string) string {
				if rel == "" {
					return ""
				}
				return filepath.Join(top, filepath.FromSlash(rel))
			}
			want := discovery.ProjectSearch{Dir: abs(tc.dir), Refused: abs(tc.refused), Owner: tc.owner}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("FindProject = %+v\nwant          %+v", got, want)
			}
			if (got.Warning() == "") != (got.Refused == "") {
				t.Errorf("warning %q for refused %q", got.Warning(), got.Refused)
			}
		})
	}
}

// TestFindProject runs the search with the real owners: what the test
// creates is its user's.
func TestFindProject(t *testing.T) {
	top := t.TempDir()
	wd := filepath.Join(top, "proj", "src")
	for _, d := range []string{filepath.Join(top, "proj", ".amplifier"), wd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := discovery.FindProject(wd)
	want := discovery.ProjectSearch{Dir: filepath.Join(top, "proj"), Owner: -1}
	if got != want {
		t.Errorf("FindProject(%s) = %+v, want %+v", wd, got, want)
	}
}

// TestRootsProjectInHome: a project found in the home directory (a
// .amplifier there, as every user with collections has) is the user root,
// labelled user, not a project root of the same path.
func TestRootsProjectInHome(t *testing.T) {
	home := filepath.Join(string(filepath.Separator), "home", "me")
	for _, project := range []string{home, home + string(filepath.Separator), filepath.Join(home, "x", "..")} {
		got := discovery.Roots(project, home, []string{"/b"})
		want := []discovery.Root{
			{Kind: discovery.RootUser, Path: filepath.Join(home, ".amplifier", "collections")},
			{Kind: discovery.RootBundled, Path: filepath.Clean("/b")},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Roots(%q, %q) = %v, want %v", project, home, got, want)
		}
	}
	got := discovery.Roots(filepath.Join(home, "proj"), home, nil)
	want := []discovery.Root{
		{Kind: discovery.RootProject, Path: filepath.Join(home, "proj", ".amplifier", "collections")},
		{Kind: discovery.RootUser, Path: filepath.Join(home, ".amplifier", "collections")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Roots(project below home) = %v, want %v", got, want)
	}
}

// TestUntrusted: a file another user controls (its own, the file its link
// leads to, the link itself, or the directory holding it) is untrusted,
// by FindProject's rule; and a directory of another user that anyone may
// write in stops a search.
func TestUntrusted(t *testing.T) {
	top := t.TempDir()
	for _, d := range []string{"mine", "theirs", "open"} {
		if err := os.Mkdir(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(top, "open"), 0o777); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"mine/a.toml", "mine/b.toml", "theirs/a.toml"} {
		if err := os.WriteFile(filepath.Join(top, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"mine/to-b.toml": "b.toml", "mine/to-theirs.toml": "../theirs/a.toml", "mine/their-link.toml": "a.toml"}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(top, l)); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	// What is not mine: theirs/ (and so what it holds), mine/b.toml, the
	// link mine/their-link.toml, open/.
	// Files are known by identity, so that one reached through a link is
	// still itself.
	owner := func(path string, fi fs.FileInfo) int {
		if fi.Mode()&fs.ModeSymlink != 0 {
			if filepath.Base(path) == "their-link.toml" {
				return someone
			}
			return me
		}
		for _, p := range []string{"theirs", "open", "mine/b.toml", "theirs/a.toml"} {
			if pi, err := os.Stat(filepath.Join(top, p)); err == nil && os.SameFile(fi, pi) {
				return someone
			}
		}
		return me
	}
	tests := []struct {
		path  string
		owner int
		bad   bool
	}{
		{"mine/a.toml", -1, false},
		{"mine/missing.toml", -1, false},
		{"mine/b.toml", someone, true},
		{"theirs/a.toml", someone, true},
		{"theirs/missing.toml", someone, true},
		{"mine/to-b.toml", someone, true},
		{"mine/to-theirs.toml", someone, true},
		{"mine/their-link.toml", someone, true},
	}
	for _, tc := range tests {
		owner, bad := discovery.UntrustedAs(filepath.Join(top, tc.path), me, owner)
		if bad != tc.bad || bad && owner != tc.owner {
			t.Errorf("Untrusted(%s) = %d, %v; want %d, %v", tc.path, owner, bad, tc.owner, tc.bad)
		}
	}
	for dir, want := range map[string]bool{"mine": false, "theirs": false, "open": true, "missing": false} {
		if got := discovery.OpenToOthersAs(filepath.Join(top, dir), me, owner); got != want {
			t.Errorf("OpenToOthers(%s) = %v, want %v", dir, got, want)
		}
	}
}
