package migrate_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle/migrate"
)

// migrateFixture migrates a testdata collection with opts' profiles.
func migrateFixture(t *testing.T, name string, profiles ...string) (*fixture, *migrate.Result) {
	t.Helper()
	fx := readFixture(t, name)
	fx.opts.Profiles = profiles
	res, err := migrate.Migrate(load(fx.collection), fx.opts)
	if err != nil {
		t.Fatal(err)
	}
	return fx, res
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWrite: a new directory, or one with only .git, is written; the
// same migration again changes nothing; a file of it that was changed
// since, another migration and anything else are refused, writing
// nothing; a file the new migration no longer has is removed.
func TestWrite(t *testing.T) {
	_, res := migrateFixture(t, "two.txtar")
	out := filepath.Join(t.TempDir(), "new", "out")
	p, err := res.Write(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Written() != len(res.Files) || p.Removed() != 0 {
		t.Errorf("written %d, removed %d; want %d, 0", p.Written(), p.Removed(), len(res.Files))
	}
	for _, f := range res.Files {
		got, err := os.ReadFile(filepath.Join(out, f.Path))
		if err != nil || !bytes.Equal(got, f.Data) {
			t.Errorf("%s: %v, or not what Migrate gave", f.Path, err)
		}
	}
	mig, _ := os.ReadFile(filepath.Join(out, "MIGRATION.md"))
	coll, files, ok := migrate.ParseManifest(mig)
	if !ok || coll != "tools" || len(files) != len(res.Files)-1 {
		t.Errorf("MIGRATION.md records %q, %d files, %v; want tools, %d", coll, len(files), ok, len(res.Files)-1)
	}

	// Again: nothing to do.
	if p, err := res.Write(out); err != nil || len(p.Changes) != 0 {
		t.Errorf("again: %v, %d changes; want none", err, len(p.Changes))
	}

	// dev chosen: bundles/dev.md is no longer written, and goes.
	_, dev := migrateFixture(t, "two.txtar", "dev")
	p, err = dev.Write(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "bundles", "dev.md")); !errors.Is(err, os.ErrNotExist) || p.Removed() != 1 {
		t.Errorf("bundles/dev.md: %v, %d removed; want it gone", err, p.Removed())
	}

	// An edited file: refused, nothing written.
	edited := filepath.Join(out, "behaviors", "base.yaml")
	writeFile(t, edited, "mine\n")
	if _, err := res.Write(out); !errors.Is(err, migrate.ErrRefused) || !strings.Contains(err.Error(), "behaviors/base.yaml") {
		t.Errorf("after an edit: %v; want ErrRefused naming behaviors/base.yaml", err)
	}
	if _, err := os.Stat(filepath.Join(out, "bundles", "dev.md")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused write wrote bundles/dev.md")
	}
	os.Remove(edited)
	if _, err := res.Write(out); err != nil {
		t.Errorf("the edited file removed: %v", err)
	}

	// A file of the earlier migration that the author changed, which the
	// new one no longer writes, is left alone.
	writeFile(t, filepath.Join(out, "bundles", "dev.md"), "mine\n")
	if _, err := dev.Write(out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "bundles", "dev.md")); string(b) != "mine\n" {
		t.Errorf("bundles/dev.md = %q, want the author's", b)
	}

	for _, tc := range []struct {
		name  string
		setup func(dir string)
		want  string
	}{
		{"a file of its own", func(dir string) { writeFile(t, filepath.Join(dir, "notes.txt"), "x") }, "holds no earlier migration"},
		{"another collection's migration", func(dir string) {
			writeFile(t, filepath.Join(dir, "MIGRATION.md"), "# x\n\n<!-- amplidex migrate other\n-->\n")
		}, "a migration of the collection other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(dir)
			if _, err := res.Write(dir); !errors.Is(err, migrate.ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want ErrRefused saying %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "bundle.md")); !errors.Is(err, os.ErrNotExist) {
				t.Error("a refused write wrote bundle.md")
			}
		})
	}

	t.Run("only .git", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
		if _, err := res.Write(dir); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a link inside", func(t *testing.T) {
		dir, elsewhere := t.TempDir(), t.TempDir()
		if _, err := res.Write(dir); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(filepath.Join(dir, "agents"))
		if err := os.Symlink(elsewhere, filepath.Join(dir, "agents")); err != nil {
			t.Skip(err)
		}
		if _, err := res.Write(dir); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("err = %v; want the link refused", err)
		}
		if es, _ := os.ReadDir(elsewhere); len(es) != 0 {
			t.Errorf("wrote %d files through the link", len(es))
		}
	})
}

// TestDiff: what a migration would change, as git diff prints it.
func TestDiff(t *testing.T) {
	fx, res := migrateFixture(t, "chosen.txtar", "dev")
	out := filepath.Join(t.TempDir(), "out")
	if _, err := res.Write(out); err != nil {
		t.Fatal(err)
	}
	// The profile's description changes, and base is chosen instead.
	p := filepath.Join(fx.collection, "profiles", "base.md")
	src, _ := os.ReadFile(p)
	writeFile(t, p, strings.Replace(string(src), "description: The base", "description: The new base", 1))
	writeFile(t, filepath.Join(fx.collection, "modules", "bin", "__init__.py"), "\x00\x01")
	res, err := migrate.Migrate(load(fx.collection), migrate.Options{Profiles: []string{"base"}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := res.Plan(out)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plan.Diff(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"--- a/behaviors/base.yaml\n+++ b/behaviors/base.yaml\n@@ -1,4 +1,4 @@\n bundle:\n   name: tools-base-behavior\n   version: 1.0.0\n-  description: The base\n+  description: The new base\n",
		"--- a/bundles/base.md\n+++ /dev/null\n",
		"--- /dev/null\n+++ b/bundles/dev.md\n",
		"Binary files /dev/null and b/modules/bin/__init__.py differ\n",
		"-  - bundle: tools:behaviors/dev\n+  - bundle: tools:behaviors/base\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the diff lacks\n%s\n--- diff:\n%s", want, got)
		}
	}
	// The directory is as it was.
	if b, _ := os.ReadFile(filepath.Join(out, "behaviors", "base.yaml")); bytes.Contains(b, []byte("new base")) {
		t.Error("Plan wrote")
	}
}
