package migrate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	colcheck "github.com/amplidex/amplidex/discovery/check"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/bundle/migrate"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
)

// corpus returns $AMPLIDEX_CORPUS, or skips.
func corpus(tb testing.TB) string {
	tb.Helper()
	c := os.Getenv("AMPLIDEX_CORPUS")
	if c == "" {
		tb.Skip("AMPLIDEX_CORPUS is not set: the migration corpus test is skipped")
	}
	if _, err := os.Stat(filepath.Join(c, "collections")); err != nil {
		tb.Skipf("no collection corpus at %s: %v", c, err)
	}
	return c
}

// load loads the collection directory dir as an argument of check does.
func load(dir string) *discovery.Collection {
	l := &discovery.Loader{}
	return l.Load(discovery.Root{Kind: discovery.RootArgument, Path: filepath.Dir(dir)}, dir)
}

// TestCorpus migrates every collection of the corpus (collections/ and
// bundled/, not bundles/) and checks each result as `amplidex check`
// checks a bundle repository: it has no more errors than `check DIR
// --with bundled/` finds in the collection. The bundled collections
// stand in for --with as bundles: each is migrated too, and registered
// under its name (bundle.added of $AMPLIFIER_HOME/settings.yaml), so that
// foundation and developer-expertise resolve to their migrations.
func TestCorpus(t *testing.T) {
	c := corpus(t)
	var dirs []string
	for _, sub := range []string{"bundled", "collections"} {
		es, err := os.ReadDir(filepath.Join(c, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(c, sub, e.Name()))
			}
		}
	}
	bundled, err := discovery.CandidateDirs(filepath.Join(c, "bundled"))
	if err != nil {
		t.Fatal(err)
	}
	var installed []*discovery.Collection
	for _, d := range bundled {
		if col := load(d); col != nil && col.Valid {
			installed = append(installed, col)
		}
	}

	tmp := t.TempDir()
	home := filepath.Join(tmp, "amplifier")
	out := filepath.Join(tmp, "out")
	type migrated struct {
		name, dir, out string
		col            *discovery.Collection
		res            *migrate.Result
	}
	var all []migrated
	var settings strings.Builder
	settings.WriteString("bundle:\n  added:\n")
	for _, d := range dirs {
		col := load(d)
		if col == nil {
			// bundled/test: no pyproject.toml and no resource directory.
			t.Logf("%s: not a collection (no pyproject.toml, no resources): nothing to migrate", filepath.Base(d))
			continue
		}
		res, err := migrate.Migrate(col, migrate.Options{Installed: installed})
		if err != nil {
			t.Errorf("%s: %v", d, err)
			continue
		}
		dst := filepath.Join(out, filepath.Base(filepath.Dir(d)), filepath.Base(d))
		if _, err := res.Write(dst); err != nil {
			t.Errorf("%s: %v", d, err)
			continue
		}
		if filepath.Base(filepath.Dir(d)) == "bundled" {
			fmt.Fprintf(&settings, "    %s: file://%s\n", res.Name, dst)
		}
		all = append(all, migrated{filepath.Base(d), d, dst, col, res})
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "settings.yaml"), []byte(settings.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	set := resolve.NewSet([]discovery.Root{{Kind: discovery.RootArgument}, {Kind: discovery.RootBundled, Path: filepath.Join(c, "bundled")}},
		[][]*discovery.Collection{nil, installed})
	totalBefore, totalAfter := 0, 0
	defer func() {
		t.Logf("in all: %d errors in the collections, %d in their migrations", totalBefore, totalAfter)
	}()
	for _, m := range all {
		// The collection's own check: its files, and its references over
		// the bundled collections (check DIR --with bundled/).
		s := set.WithFront([]discovery.Root{{Kind: discovery.RootArgument, Path: filepath.Dir(m.dir)}})
		s, _ = s.Apply(nil, []*discovery.Collection{m.col})
		before := append(m.col.OwnDiagnostics(), colcheck.Collection(s, m.col)...)
		errsBefore := diag.CountErrors(before)

		files := &compose.DiskFiles{}
		loc := compose.Locate(compose.Env{WorkDir: m.out, AmplifierHome: home, Home: filepath.Join(tmp, "home")}, files)
		res := check.Check(loc, files, m.out, check.Options{})
		errsAfter := diag.CountErrors(res.Diagnostics)
		totalBefore += errsBefore
		totalAfter += errsAfter
		t.Logf("%s: %d files, %d notes; the collection has %d errors, the bundle repository %d (%d files checked)",
			m.name, len(m.res.Files), len(m.res.Notes), errsBefore, errsAfter, res.FilesChecked())
		if errsAfter > errsBefore {
			t.Errorf("%s: the migration has %d errors, more than the collection's %d:", m.name, errsAfter, errsBefore)
			for _, d := range res.Diagnostics {
				if d.Severity == diag.SeverityError {
					t.Log("  after: ", d)
				}
			}
			for _, d := range before {
				if d.Severity == diag.SeverityError {
					t.Log("  before:", d)
				}
			}
		}
		if !strings.Contains(string(fileOf(m.res, "MIGRATION.md")), "<!-- amplidex migrate "+m.col.Name) {
			t.Errorf("%s: MIGRATION.md holds no record of the files written", m.name)
		}
	}
}

// fileOf returns the bytes of the file at p in r, or nil.
func fileOf(r *migrate.Result, p string) []byte {
	for _, f := range r.Files {
		if f.Path == p {
			return f.Data
		}
	}
	return nil
}
