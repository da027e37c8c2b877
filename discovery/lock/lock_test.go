package lock_test

import (
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

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/lock"
	"github.com/amplidex/amplidex/discovery/syntax"
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
			l, diags, err := lock.Parse("collections.lock", src)
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
			if err != nil && !errors.Is(err, lock.ErrCorrupt) {
				t.Errorf("error %v does not match ErrLockCorrupt", err)
			}
		})
	}
}

func renderLock(l *lock.File, diags []diag.Diagnostic, err error) string {
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
	l, diags, err := lock.Read(filepath.Join(t.TempDir(), "collections.lock"))
	if err != nil || len(diags) != 0 {
		t.Fatalf("ReadLock of a missing file: %v, %v", diags, err)
	}
	if l.Version != lock.Version || l.Collections == nil || len(l.Collections) != 0 {
		t.Errorf("got %+v, want an empty lock of version %s", l, lock.Version)
	}
}

func TestReadLockDirectory(t *testing.T) {
	dir := t.TempDir()
	_, _, err := lock.Read(dir)
	if err == nil || errors.Is(err, lock.ErrCorrupt) || !strings.Contains(err.Error(), dir) {
		t.Errorf("ReadLock(directory) error = %v, want a read error naming the path", err)
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
	l, diags, err := lock.Read(lockPath)
	if err != nil || len(diags) != 0 {
		t.Fatalf("ReadLock: %v %v", diags, err)
	}
	installed := []lock.Installed{
		{Name: "ok", Dir: ok},
		{Name: "other-name", Dir: renamed}, // locked by directory
		{Name: "unlocked", Dir: unlocked},
		{Name: "relative", Dir: ok},
	}
	// Each diagnostic is listed with the text its range covers.
	var got []string
	for _, d := range lock.Check(lockPath, l, installed) {
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
	l, _, err := lock.Read(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	diags := lock.Check(lockPath, l, []lock.Installed{{Name: "a", Dir: filepath.Join(root, "a")}})
	if len(diags) != 0 {
		t.Errorf("CheckLock without a lock file: %v, want nothing", diags)
	}
	if diags := lock.Check(lockPath, nil, nil); diags != nil {
		t.Errorf("CheckLock(nil lock) = %v", diags)
	}
}

func TestCheckLockBuiltLock(t *testing.T) {
	// A File built in memory has no positions: diagnostics sit at 0:0.
	l := &lock.File{Version: "1.1", Collections: map[string]lock.Entry{
		"x": {Name: "x", Path: "/nonexistent/x", Modules: map[string]lock.Module{"m": {Type: "tool", Path: "../m"}}},
	}}
	diags := lock.Check("/l/collections.lock", l, nil)
	if len(diags) != 2 {
		t.Fatalf("got %v, want path-missing and module-escapes", diags)
	}
	for _, d := range diags {
		if d.Range != (diag.Range{}) {
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
			l := &lock.File{Version: "1.1", Collections: map[string]lock.Entry{
				"c": {Name: "c", Modules: map[string]lock.Module{"m": {Type: "tool", Path: tc.path}}},
			}}
			diags := lock.Check("collections.lock", l, []lock.Installed{{Name: "c"}})
			got := len(diags) == 1 && diags[0].Code == diag.CodeLockModuleEscapes
			if got != tc.escapes || len(diags) > 1 {
				t.Errorf("module path %q: diagnostics %v, want escape %v", tc.path, diags, tc.escapes)
			}
		})
	}
}

func FuzzParseLock(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzParseLock/, made from the fixtures.
	f.Fuzz(func(t *testing.T, src []byte) {
		l, diags, err := lock.Parse("collections.lock", src)
		lines := syntax.NewLineIndex(src)
		for _, d := range diags {
			checkRangeInside(t, lines, d.Range)
		}
		if err != nil {
			if l != nil || !errors.Is(err, lock.ErrCorrupt) || len(diags) != 1 {
				t.Fatalf("corrupt: lock %v, diags %v, err %v", l, diags, err)
			}
			return
		}
		if l == nil || !json.Valid(src) {
			t.Fatalf("accepted invalid input: lock %v", l)
		}
		lock.Check("collections.lock", l, nil)
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
		if _, _, err := lock.Parse("collections.lock", src); err != nil {
			b.Fatal(err)
		}
	}
}

// txtarFile returns the file called name of ar.
func txtarFile(t *testing.T, ar *txtar.Archive, name string) []byte {
	t.Helper()
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("archive has no %s", name)
	return nil
}

// setTxtarFile sets the file called name of ar to data.
func setTxtarFile(ar *txtar.Archive, name, data string) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = []byte(data)
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(data)})
}

// checkDefaultSeverities asserts that each diagnostic has the severity its
// code is listed with.
func checkDefaultSeverities(t *testing.T, diags []diag.Diagnostic) {
	t.Helper()
	for _, d := range diags {
		i := slices.IndexFunc(diag.Codes, func(c diag.CodeInfo) bool { return c.Code == d.Code })
		if i < 0 {
			t.Errorf("diagnostic %v has an unlisted code", d)
			continue
		}
		if d.Severity != diag.Codes[i].Severity {
			t.Errorf("diagnostic %v: severity %s, Codes lists %s", d, d.Severity, diag.Codes[i].Severity)
		}
		if d.Path == "" {
			t.Errorf("diagnostic %v has no path", d)
		}
	}
}

// rangeString prints r with 1-based lines and columns.
func rangeString(r diag.Range) string {
	return fmt.Sprintf("%d:%d-%d:%d", r.Start.Line+1, r.Start.Character+1, r.End.Line+1, r.End.Character+1)
}

// lineText returns the text a one-line, ASCII-only Range covers.
func lineText(src []byte, r diag.Range) string {
	lines := strings.Split(string(src), "\n")
	if r.Start.Line != r.End.Line || r.Start.Line >= len(lines) {
		return "<multi-line>"
	}
	line := lines[r.Start.Line]
	if r.End.Character > len(line) || r.Start.Character > r.End.Character {
		return "<out of range>"
	}
	return line[r.Start.Character:r.End.Character]
}

// checkRangeInside fails unless r is ordered and lies inside the text.
func checkRangeInside(t *testing.T, lines *syntax.LineIndex, r diag.Range) {
	t.Helper()
	if r.Start.Line < 0 || r.End.Line >= lines.Lines() || r.Start.Line > r.End.Line ||
		r.Start.Line == r.End.Line && r.Start.Character > r.End.Character || r.Start.Character < 0 {
		t.Errorf("range %+v outside the text (%d lines)", r, lines.Lines())
	}
}
