package migrate_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/bundle/migrate"
	"github.com/amplidex/amplidex/discovery/diag"
)

var update = flag.Bool("update", false, "rewrite the want/ files and notes of testdata/*.txtar from what Migrate gives")

// fixture is a testdata archive unpacked: collection/ is the collection,
// installed/NAME/ other collections, options the Options (one "profile
// NAME" a line), want/ the files of the repository (MIGRATION.md aside)
// and notes the notes, one a line.
type fixture struct {
	arch       *txtar.Archive
	file       string
	collection string
	opts       migrate.Options
}

func readFixture(t *testing.T, name string) *fixture {
	t.Helper()
	file := filepath.Join("testdata", name)
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	fx := &fixture{arch: a, file: file, collection: filepath.Join(root, "collection")}
	installed := map[string]bool{}
	for _, f := range a.Files {
		switch {
		case f.Name == "options":
			for _, line := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				if p, ok := strings.CutPrefix(line, "profile "); ok {
					fx.opts.Profiles = append(fx.opts.Profiles, p)
				}
			}
			continue
		case strings.HasPrefix(f.Name, "want/") || f.Name == "notes":
			continue
		case strings.HasPrefix(f.Name, "installed/"):
			installed[strings.Split(f.Name, "/")[1]] = true
		}
		p := filepath.Join(root, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := make([]string, 0, len(installed))
	for n := range installed {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if c := load(filepath.Join(root, "installed", n)); c != nil {
			fx.opts.Installed = append(fx.opts.Installed, c)
		}
	}
	return fx
}

// golden returns what Migrate gave as the archive's want/ files and notes.
func golden(res *migrate.Result) map[string][]byte {
	out := map[string][]byte{}
	for _, f := range res.Files {
		if f.Path != "MIGRATION.md" {
			out["want/"+f.Path] = f.Data
		}
	}
	var notes bytes.Buffer
	for _, n := range res.Notes {
		fmt.Fprintln(&notes, n)
	}
	out["notes"] = notes.Bytes()
	return out
}

// TestMigrate migrates each collection of testdata and compares every
// file written and every note with the archive's (go test -update
// rewrites them).
func TestMigrate(t *testing.T) {
	names, _ := filepath.Glob("testdata/*.txtar")
	for _, file := range names {
		t.Run(filepath.Base(file), func(t *testing.T) {
			fx := readFixture(t, filepath.Base(file))
			res, err := migrate.Migrate(load(fx.collection), fx.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := golden(res)
			if *update {
				var kept []txtar.File
				for _, f := range fx.arch.Files {
					if !strings.HasPrefix(f.Name, "want/") && f.Name != "notes" {
						kept = append(kept, f)
					}
				}
				var keys []string
				for k := range got {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					kept = append(kept, txtar.File{Name: k, Data: got[k]})
				}
				fx.arch.Files = kept
				if err := os.WriteFile(fx.file, txtar.Format(fx.arch), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := map[string][]byte{}
			for _, f := range fx.arch.Files {
				if strings.HasPrefix(f.Name, "want/") || f.Name == "notes" {
					want[f.Name] = f.Data
				}
			}
			for k, w := range want {
				if g, ok := got[k]; !ok {
					t.Errorf("%s: not written", k)
				} else if !bytes.Equal(g, w) {
					t.Errorf("%s:\n--- got\n%s--- want\n%s", k, g, w)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: written, not wanted:\n%s", k, got[k])
				}
			}
		})
	}
}

// TestMigratedChecks checks what the fixtures migrate to: the only error
// is the one the collection had too (an agent no collection has).
func TestMigratedChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"two.txtar", []string{"behaviors/dev.yaml:bundle/agent-unresolved"}},
		{"chosen.txtar", nil},
		{"nested.txtar", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := readFixture(t, tc.name)
			res, err := migrate.Migrate(load(fx.collection), fx.opts)
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			out, home := filepath.Join(tmp, "out"), filepath.Join(tmp, "home")
			if _, err := res.Write(out); err != nil {
				t.Fatal(err)
			}
			files := &compose.DiskFiles{}
			loc := compose.Locate(compose.Env{WorkDir: out, AmplifierHome: filepath.Join(home, ".amplifier"), Home: home}, files)
			r := check.Check(loc, files, out, check.Options{})
			var got []string
			for _, d := range r.Diagnostics {
				if d.Severity == diag.SeverityError {
					rel, _ := filepath.Rel(out, d.Path)
					got = append(got, filepath.ToSlash(rel)+":"+d.Code)
					t.Log(d)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("errors %v, want %v", got, tc.want)
			}
		})
	}
}

// TestUnknownProfile: a profile the collection does not have is an error
// naming those it has.
func TestUnknownProfile(t *testing.T) {
	fx := readFixture(t, "two.txtar")
	_, err := migrate.Migrate(load(fx.collection), migrate.Options{Profiles: []string{"nope"}})
	if !errors.Is(err, migrate.ErrUnknownProfile) || !strings.Contains(err.Error(), "base, dev") {
		t.Fatalf("err = %v, want ErrUnknownProfile naming base, dev", err)
	}
	for _, name := range []string{"dev", "tools:dev", "profiles/dev.md"} {
		res, err := migrate.Migrate(load(fx.collection), migrate.Options{Profiles: []string{name}})
		if err != nil || strings.Join(res.Root, ",") != "dev" {
			t.Errorf("%s: root %v, %v; want dev", name, res.Root, err)
		}
	}
}
