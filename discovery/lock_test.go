package discovery_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery"
)

var updateLock = flag.Bool("update-lock", false, "rewrite the want sections of testdata/lock/*.txtar")

// TestParseLock runs every testdata/lock/*.txtar case. Each archive holds a
// collections.lock and a want file: the error (if any), the parsed entries,
// then one line per diagnostic as in the pyproject fixtures.
func TestParseLock(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "lock", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			src, want := txtarFile(t, ar, "collections.lock"), txtarFile(t, ar, "want")
			l, diags, err := discovery.ParseLock("collections.lock", src)
			got := renderLock(l, diags, err)
			if *updateLock {
				setTxtarFile(ar, "want", got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != string(want) {
				t.Errorf("ParseLock mismatch\n--- got\n%s--- want\n%s", got, want)
			}
			checkDefaultSeverities(t, diags)
			if (l == nil) != (err != nil) {
				t.Errorf("lock %v with error %v: want exactly one of them", l, err)
			}
			if err != nil && !errors.Is(err, discovery.ErrLockCorrupt) {
				t.Errorf("error %v does not match ErrLockCorrupt", err)
			}
		})
	}
}

func renderLock(l *discovery.Lock, diags []discovery.Diagnostic, err error) string {
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	if l != nil {
		fmt.Fprintf(&b, "version: %q\n", l.Version)
		names := make([]string, 0, len(l.Collections))
		for name := range l.Collections {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			e := l.Collections[name]
			commit := "null"
			if e.Commit != nil {
				commit = fmt.Sprintf("%q", *e.Commit)
			}
			fmt.Fprintf(&b, "entry %s: name=%q source=%q commit=%s path=%q installed_at=%q\n",
				name, e.Name, e.Source, commit, e.Path, e.InstalledAt)
			mods := make([]string, 0, len(e.Modules))
			for mod := range e.Modules {
				mods = append(mods, mod)
			}
			slices.Sort(mods)
			for _, mod := range mods {
				fmt.Fprintf(&b, "  module %s: type=%q path=%q\n", mod, e.Modules[mod].Type, e.Modules[mod].Path)
			}
		}
	}
	for _, d := range diags {
		fmt.Fprintf(&b, "%s %s %s [%s] %s\n", rangeString(d.Range), d.Severity, d.Code, d.Collection, d.Message)
	}
	return b.String()
}

func TestReadLockMissingFile(t *testing.T) {
	l, diags, err := discovery.ReadLock(filepath.Join(t.TempDir(), "collections.lock"))
	if err != nil || len(diags) != 0 {
		t.Fatalf("ReadLock of a missing file: %v, %v", diags, err)
	}
	if l.Version != discovery.LockVersion || l.Collections == nil || len(l.Collections) != 0 {
		t.Errorf("got %+v, want an empty lock of version %s", l, discovery.LockVersion)
	}
}

func TestReadLockDirectory(t *testing.T) {
	dir := t.TempDir()
	_, _, err := discovery.ReadLock(dir)
	if err == nil || errors.Is(err, discovery.ErrLockCorrupt) || !strings.Contains(err.Error(), dir) {
		t.Errorf("ReadLock(directory) error = %v, want a read error naming the path", err)
	}
}

func strPtr(s string) *string { return &s }

func TestAddToLockCreates(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".amplifier", "collections.lock")
	e := discovery.LockEntry{
		Name:        "my-collection",
		Source:      "git+https://github.com/user/my-collection@v1.0.0",
		Commit:      strPtr("abc123"),
		Path:        "/home/user/.amplifier/collections/my-collection",
		InstalledAt: "2025-10-31T10:30:00Z",
		Modules:     map[string]discovery.LockModule{"tool-custom": {Type: "tool", Path: "modules/tool-custom"}},
	}
	if err := discovery.AddToLock(path, e); err != nil {
		t.Fatal(err)
	}
	if err := discovery.AddToLock(path, discovery.LockEntry{Name: "another", Source: "file:///x", Path: "/x"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": "1.1",
  "collections": {
    "another": {
      "name": "another",
      "source": "file:///x",
      "commit": null,
      "path": "/x",
      "installed_at": "",
      "modules": {}
    },
    "my-collection": {
      "name": "my-collection",
      "source": "git+https://github.com/user/my-collection@v1.0.0",
      "commit": "abc123",
      "path": "/home/user/.amplifier/collections/my-collection",
      "installed_at": "2025-10-31T10:30:00Z",
      "modules": {
        "tool-custom": {
          "type": "tool",
          "path": "modules/tool-custom"
        }
      }
    }
  }
}
`
	if string(got) != want {
		t.Errorf("lock file:\n%s\nwant:\n%s", got, want)
	}
	l, diags, err := discovery.ReadLock(path)
	if err != nil || len(diags) != 0 {
		t.Fatalf("ReadLock: %v %v", diags, err)
	}
	if e2 := l.Collections["my-collection"]; e2.Name != e.Name || *e2.Commit != *e.Commit || e2.Modules["tool-custom"] != e.Modules["tool-custom"] {
		t.Errorf("read back %+v, want %+v", e2, e)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, %v; want 0644", fi.Mode(), err)
	}
	assertNoTempFiles(t, filepath.Dir(path))
}

func TestAddToLockRejectsNamelessEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "collections.lock")
	if err := discovery.AddToLock(path, discovery.LockEntry{}); err == nil {
		t.Fatal("AddToLock accepted an entry without a name")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file written: %v", err)
	}
}

// TestLockCorruptNeverWritten: a corrupt file is byte-identical after every
// attempt to change it, and the error matches ErrLockCorrupt.
func TestLockCorruptNeverWritten(t *testing.T) {
	cases := []struct{ name, content string }{
		{"not-json", "this is not json\n"},
		{"truncated", `{"version": "1.1", "collections": {"a": {"name": "a"`},
		{"empty", ""},
		{"array", `[1, 2]`},
		{"null", `null`},
		{"unknown-version", `{"version": "2.0", "collections": {}}`},
		{"numeric-version", `{"version": 1.1, "collections": {}}`},
		{"no-collections", `{"version": "1.1"}`},
		{"collections-array", `{"version": "1.1", "collections": []}`},
		{"bom", "\uFEFF{\"version\": \"1.1\", \"collections\": {}}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "collections.lock")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, diags, err := discovery.ReadLock(path)
			if !errors.Is(err, discovery.ErrLockCorrupt) || len(diags) != 1 || diags[0].Code != discovery.CodeLockCorrupt {
				t.Fatalf("ReadLock: %v, %v; want one lock/corrupt diagnostic and ErrLockCorrupt", diags, err)
			}
			if err := discovery.AddToLock(path, discovery.LockEntry{Name: "x", Path: "/x"}); !errors.Is(err, discovery.ErrLockCorrupt) {
				t.Errorf("AddToLock error = %v, want ErrLockCorrupt", err)
			}
			if err := discovery.RemoveFromLock(path, "a"); !errors.Is(err, discovery.ErrLockCorrupt) {
				t.Errorf("RemoveFromLock error = %v, want ErrLockCorrupt", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, []byte(tc.content)) {
				t.Errorf("corrupt lock file changed:\n%q\nwant:\n%q", got, tc.content)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode changed to %v", fi.Mode())
			}
			assertNoTempFiles(t, dir)
		})
	}
}

// TestLockUpgrade: a 1.0 file is read as is and written back as 1.1 by
// AddToLock; entries without modules get an empty one, unknown fields and
// other entries are kept.
func TestLockUpgrade(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "collections.lock")
	old := `{
  "version": "1.0",
  "collections": {
    "old": {
      "name": "old",
      "source": "git+https://github.com/o/old@main",
      "commit": null,
      "path": "/c/old",
      "installed_at": "2025-01-01T00:00:00Z",
      "pinned": true
    }
  },
  "generator": "amplifier 0.9"
}
`
	if err := os.WriteFile(path, []byte(old), 0o640); err != nil {
		t.Fatal(err)
	}
	l, diags, err := discovery.ReadLock(path)
	if err != nil || len(diags) != 0 {
		t.Fatalf("ReadLock of a 1.0 file: %v, %v", diags, err)
	}
	if l.Version != "1.0" || l.Collections["old"].Modules == nil {
		t.Errorf("got version %q modules %v; want 1.0 and an empty module map", l.Version, l.Collections["old"].Modules)
	}
	if err := discovery.AddToLock(path, discovery.LockEntry{Name: "new", Source: "file:///n", Path: "/c/new",
		InstalledAt: "2025-02-02T00:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := `{
  "version": "1.1",
  "collections": {
    "new": {
      "name": "new",
      "source": "file:///n",
      "commit": null,
      "path": "/c/new",
      "installed_at": "2025-02-02T00:00:00Z",
      "modules": {}
    },
    "old": {
      "name": "old",
      "source": "git+https://github.com/o/old@main",
      "commit": null,
      "path": "/c/old",
      "installed_at": "2025-01-01T00:00:00Z",
      "pinned": true,
      "modules": {}
    }
  },
  "generator": "amplifier 0.9"
}
`
	if string(got) != want {
		t.Errorf("upgraded lock:\n%s\nwant:\n%s", got, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", fi.Mode())
	}
	l, diags, err = discovery.ReadLock(path)
	if err != nil || len(diags) != 0 || l.Version != "1.1" || len(l.Collections) != 2 {
		t.Errorf("re-read: %+v %v %v", l, diags, err)
	}
	assertNoTempFiles(t, dir)
}

// TestLockSchemaEntriesKept: an entry with schema problems is written back
// byte for byte (modulo indentation) when another entry changes.
func TestLockSchemaEntriesKept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "collections.lock")
	src := `{"version": "1.1", "collections": {"bad": {"name": "bad", "path": 7, "modules": {}}, "weird": [1], "gone": {"name": "gone", "source": "s", "commit": null, "path": "/g", "installed_at": "t", "modules": {}}}}`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := discovery.RemoveFromLock(path, "gone"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := `{
  "version": "1.1",
  "collections": {
    "bad": {
      "name": "bad",
      "path": 7,
      "modules": {}
    },
    "weird": [
      1
    ]
  }
}
`
	if string(got) != want {
		t.Errorf("lock after remove:\n%s\nwant:\n%s", got, want)
	}
}

func TestRemoveFromLockMissingNameWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "collections.lock")
	src := `{"version":"1.0","collections":{}}`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := discovery.RemoveFromLock(path, "nope"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != src {
		t.Errorf("file rewritten: %q", got)
	}
	missing := filepath.Join(dir, "other.lock")
	if err := discovery.RemoveFromLock(missing, "nope"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RemoveFromLock created %s", missing)
	}
}

func TestAddToLockFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.lock")
	link := filepath.Join(dir, "collections.lock")
	if err := os.WriteFile(real, []byte(`{"version":"1.1","collections":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	if err := discovery.AddToLock(link, discovery.LockEntry{Name: "a", Path: "/a"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symbolic link was replaced: %v %v", fi.Mode(), err)
	}
	l, _, err := discovery.ReadLock(real)
	if err != nil || len(l.Collections) != 1 {
		t.Errorf("target not updated: %+v %v", l, err)
	}
	assertNoTempFiles(t, dir)
}

func TestAddToLockReadOnlyDirLeavesNoTemp(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("permissions do not bind root")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "collections.lock")
	src := `{"version":"1.1","collections":{}}`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if err := discovery.AddToLock(path, discovery.LockEntry{Name: "a"}); err == nil {
		t.Fatal("AddToLock succeeded in a read-only directory")
	}
	if got, _ := os.ReadFile(path); string(got) != src {
		t.Errorf("file changed: %q", got)
	}
	assertNoTempFiles(t, dir)
}

// assertNoTempFiles fails when dir holds anything but lock files and
// symbolic links (and the directories tests create).
func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestCheckLock(t *testing.T) {
	root := t.TempDir()
	mkdir := func(name string) string {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := mkdir("ok")
	renamed := mkdir("renamed-dir")
	stray := mkdir("stray") // exists, but the root does not hold it as a collection
	unlocked := mkdir("unlocked")
	lockPath := filepath.Join(root, "collections.lock")
	entry := func(name, dir string, mods string) string {
		return fmt.Sprintf(`"%s": {"name": "%s", "source": "s", "commit": null, "path": %q, "installed_at": "t", "modules": {%s}}`,
			name, name, dir, mods)
	}
	src := "{\n\"version\": \"1.1\",\n\"collections\": {\n" + strings.Join([]string{
		entry("ok", ok, `"tool-a": {"type": "tool", "path": "modules/tool-a"}, "tool-b": {"type": "tool", "path": "./x/../../b"}`),
		entry("gone", filepath.Join(root, "gone"), ""),
		entry("by-dir", renamed, `"abs": {"type": "hook", "path": "/etc/passwd"}, "win": {"type": "hook", "path": "C:\\x"}`),
		entry("stray", stray, ""),
		entry("relative", "ok", ""),
	}, ",\n") + "\n}\n}\n"
	if err := os.WriteFile(lockPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	l, diags, err := discovery.ReadLock(lockPath)
	if err != nil || len(diags) != 0 {
		t.Fatalf("ReadLock: %v %v", diags, err)
	}
	installed := []discovery.LockCheckCollection{
		{Name: "ok", Dir: ok},
		{Name: "other-name", Dir: renamed}, // locked by directory
		{Name: "unlocked", Dir: unlocked},
		{Name: "relative", Dir: ok},
	}
	// Each diagnostic is listed with the text its range covers.
	var got []string
	for _, d := range discovery.CheckLock(lockPath, l, installed) {
		if d.Path != lockPath {
			t.Errorf("diagnostic path %q, want %q", d.Path, lockPath)
		}
		got = append(got, fmt.Sprintf("%d %s %s [%s] at %s: %s", d.Range.Start.Line+1, d.Severity, d.Code, d.Collection,
			lineText([]byte(src), d.Range), strings.ReplaceAll(d.Message, root, "ROOT")))
	}
	want := []string{
		`3 warning lock/not-locked [unlocked] at "collections": Collection unlocked is installed at ROOT/unlocked but not in the lock file`,
		`4 error lock/module-escapes [ok] at "./x/../../b": Module tool-b of ok has path "./x/../../b", which leaves the collection`,
		`5 warning lock/path-missing [gone] at "gone": Path ROOT/gone of locked collection gone no longer exists`,
		`6 error lock/module-escapes [by-dir] at "/etc/passwd": Module abs of by-dir has path "/etc/passwd", which leaves the collection`,
		`6 error lock/module-escapes [by-dir] at "C:\\x": Module win of by-dir has path "C:\\x", which leaves the collection`,
		`7 warning lock/not-installed [stray] at "stray": Collection stray is locked but not installed in this root`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("CheckLock:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCheckLockWithoutLockFile(t *testing.T) {
	root := t.TempDir()
	lockPath := filepath.Join(root, "collections.lock")
	l, _, err := discovery.ReadLock(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	diags := discovery.CheckLock(lockPath, l, []discovery.LockCheckCollection{{Name: "a", Dir: filepath.Join(root, "a")}})
	if len(diags) != 0 {
		t.Errorf("CheckLock without a lock file: %v, want nothing", diags)
	}
	if diags := discovery.CheckLock(lockPath, nil, nil); diags != nil {
		t.Errorf("CheckLock(nil lock) = %v", diags)
	}
}

func TestCheckLockBuiltLock(t *testing.T) {
	// A Lock built in memory has no positions: diagnostics sit at 0:0.
	l := &discovery.Lock{Version: "1.1", Collections: map[string]discovery.LockEntry{
		"x": {Name: "x", Path: "/nonexistent/x", Modules: map[string]discovery.LockModule{"m": {Type: "tool", Path: "../m"}}},
	}}
	diags := discovery.CheckLock("/l/collections.lock", l, nil)
	if len(diags) != 2 {
		t.Fatalf("got %v, want path-missing and module-escapes", diags)
	}
	for _, d := range diags {
		if d.Range != (discovery.Range{}) {
			t.Errorf("range %v, want zero", d.Range)
		}
	}
}

func TestModuleEscapes(t *testing.T) {
	cases := []struct {
		path    string
		escapes bool
	}{
		{"modules/tool-custom", false},
		{"modules/../modules/x", false},
		{"./modules/x", false},
		{"", false},
		{".", false},
		{"a/b/../../c", false},
		{"..", true},
		{"../x", true},
		{"modules/../../x", true},
		{"/abs/path", true},
		{`..\x`, true},
		{`\\server\share`, true},
		{`C:\x`, true},
		{"c:/x", true},
		{"..foo/x", false},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			l := &discovery.Lock{Version: "1.1", Collections: map[string]discovery.LockEntry{
				"c": {Name: "c", Modules: map[string]discovery.LockModule{"m": {Type: "tool", Path: tc.path}}},
			}}
			diags := discovery.CheckLock("collections.lock", l, []discovery.LockCheckCollection{{Name: "c"}})
			got := len(diags) == 1 && diags[0].Code == discovery.CodeLockModuleEscapes
			if got != tc.escapes || len(diags) > 1 {
				t.Errorf("module path %q: diagnostics %v, want escape %v", tc.path, diags, tc.escapes)
			}
		})
	}
}

func FuzzParseLock(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzParseLock/, made from the fixtures.
	f.Fuzz(func(t *testing.T, src []byte) {
		l, diags, err := discovery.ParseLock("collections.lock", src)
		lines := discovery.NewLineIndex(src)
		for _, d := range diags {
			checkRangeInside(t, lines, d.Range)
		}
		if err != nil {
			if l != nil || !errors.Is(err, discovery.ErrLockCorrupt) || len(diags) != 1 {
				t.Fatalf("corrupt: lock %v, diags %v, err %v", l, diags, err)
			}
			return
		}
		if l == nil || !json.Valid(src) {
			t.Fatalf("accepted invalid input: lock %v", l)
		}
		discovery.CheckLock("collections.lock", l, nil)
		// Writing it back with one more entry and reading again keeps every
		// entry and yields the current version.
		out, err := discovery.PutAndEncode(l, discovery.LockEntry{Name: "\x00fuzz", Path: "/f"})
		if err != nil {
			t.Fatalf("encode a valid lock: %v", err)
		}
		l2, _, err := discovery.ParseLock("collections.lock", out)
		if err != nil {
			t.Fatalf("re-read %q: %v", out, err)
		}
		if l2.Version != discovery.LockVersion {
			t.Errorf("written version %q", l2.Version)
		}
		for name := range l.Collections {
			if _, ok := l2.Collections[name]; !ok {
				t.Errorf("entry %q lost on rewrite", name)
			}
		}
		if _, ok := l2.Collections["\x00fuzz"]; !ok {
			t.Error("added entry missing")
		}
	})
}

func BenchmarkParseLock(b *testing.B) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "lock", "spec-example.txtar"))
	if err != nil {
		b.Fatal(err)
	}
	var src []byte
	for _, f := range ar.Files {
		if f.Name == "collections.lock" {
			src = f.Data
		}
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, _, err := discovery.ParseLock("collections.lock", src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAddToLock(b *testing.B) {
	path := filepath.Join(b.TempDir(), "collections.lock")
	e := discovery.LockEntry{Name: "my-collection", Source: "git+https://github.com/u/c@v1", Path: "/c",
		InstalledAt: "2025-10-31T10:30:00Z", Modules: map[string]discovery.LockModule{"tool-x": {Type: "tool", Path: "modules/tool-x"}}}
	b.ReportAllocs()
	for b.Loop() {
		if err := discovery.AddToLock(path, e); err != nil {
			b.Fatal(err)
		}
	}
}
