package discovery_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
)

// TestFollowLinkRule: a collection link is followed to a working copy
// of the user's; not to a directory that holds the root (/, the
// project), nor to another user's unless the root is that user's too.
func TestFollowLinkRule(t *testing.T) {
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(top, "proj")
	root := filepath.Join(proj, ".amplifier", "collections")
	work := filepath.Join(top, "work", "mine")
	theirs := filepath.Join(top, "theirs", "coll")
	for _, d := range []string{root, work, theirs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	owners := map[string]int{}
	owner := func(path string, _ fs.FileInfo) int {
		if uid, ok := owners[path]; ok {
			return uid
		}
		return me
	}
	for _, tc := range []struct {
		name   string
		real   string
		others []string // directories of someone else
		refuse string   // in the error; "" when followed
	}{
		{"a working copy", work, nil, ""},
		{"the file system's root", "/", nil, "holds the collections root"},
		{"the project", proj, nil, "holds the collections root"},
		{"the root itself", root, nil, "holds the collections root"},
		{"another user's directory", theirs, []string{theirs}, "belongs to another user (uid 4242)"},
		{"another user's directory, in their root", theirs, []string{theirs, root}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clear(owners)
			for _, d := range tc.others {
				owners[d] = someone
			}
			link := filepath.Join(root, "c")
			err := discovery.FollowLinkAs(root, link, tc.real, me, owner)
			switch {
			case tc.refuse == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refuse != "" && (!errors.Is(err, discovery.ErrLinkRefused) || !strings.Contains(err.Error(), tc.refuse) || !strings.Contains(err.Error(), link)):
				t.Fatalf("error %v; want ErrLinkRefused naming the link and saying %q", err, tc.refuse)
			}
		})
	}
}

// TestLoaderRefusesLink: a collection link the rule refuses is reported
// where it is, resolves nowhere, and nothing below where it leads is
// read; a link to a working copy is read as ever.
func TestLoaderRefusesLink(t *testing.T) {
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(top, "proj")
	root := filepath.Join(proj, ".amplifier", "collections")
	work := filepath.Join(top, "work", "good")
	for _, f := range []struct{ path, text string }{
		{filepath.Join(work, "pyproject.toml"), "[project]\nname = \"good\"\nversion = \"1.0.0\"\ndescription = \"d\"\n"},
		{filepath.Join(work, "agents", "a.md"), "---\nname: a\ndescription: A\n---\n"},
		// What the refused link would take in, if it were followed.
		{filepath.Join(proj, "agents", "x.md"), "---\nname: x\n---\n"},
		{filepath.Join(proj, "pyproject.toml"), "[project]\nname = \"evil\"\nversion = \"1.0.0\"\ndescription = \"d\"\n"},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"good": work, "evil": proj} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	cols, err := (&discovery.Loader{}).ScanRoot(discovery.Root{Kind: discovery.RootProject, Path: root})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]*discovery.Collection{}
	for _, c := range cols {
		found[filepath.Base(c.Dir)] = c
	}
	if g := found["good"]; g == nil || !g.Valid || g.Name != "good" || len(g.Facts) == 0 {
		t.Fatalf("the working copy's link: %+v", g)
	}
	e := found["evil"]
	if e == nil {
		t.Fatal("the refused link is not reported")
	}
	if e.Valid || len(e.Facts) != 0 || len(e.Diagnostics) != 1 || e.Diagnostics[0].Code != diag.CodeSymlinkLoop ||
		e.Diagnostics[0].Path != filepath.Join(root, "evil") || !strings.Contains(e.Diagnostics[0].Message, "holds the collections root") {
		t.Fatalf("the refused link: valid %v, %d files read, diagnostics %+v", e.Valid, len(e.Facts), e.Diagnostics)
	}
	set := resolve.NewSet([]discovery.Root{{Kind: discovery.RootProject, Path: root}}, [][]*discovery.Collection{cols})
	if set.Lookup("evil") != nil {
		t.Error("the refused link resolves")
	}
}

// TestLockPath: the project and user roots have a lock file beside them;
// bundled roots and the collections named as arguments (or stood in) have
// none.
func TestLockPath(t *testing.T) {
	for _, tc := range []struct {
		root discovery.Root
		want string
	}{
		{discovery.Root{Kind: discovery.RootProject, Path: "/p/.amplifier/collections"}, "/p/.amplifier/collections.lock"},
		{discovery.Root{Kind: discovery.RootUser, Path: "/h/.amplifier/collections"}, "/h/.amplifier/collections.lock"},
		{discovery.Root{Kind: discovery.RootBundled, Path: "/b"}, ""},
		{discovery.Root{Kind: discovery.RootArgument, Path: "/src/spec-kit"}, ""},
	} {
		if got := discovery.LockPath(tc.root); got != filepath.FromSlash(tc.want) {
			t.Errorf("LockPath(%v) = %q, want %q", tc.root, got, tc.want)
		}
	}
}
