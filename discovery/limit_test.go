package discovery_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/check"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/lock"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/suppress"
)

// capped checks that ds holds at most diag.MaxPerArea diagnostics of
// code and one CodeTooManyDiagnostics that counts the other over of them,
// of severity sev, and returns that one.
func capped(t *testing.T, ds []diag.Diagnostic, code string, over int, sev diag.Severity) diag.Diagnostic {
	t.Helper()
	var n int
	var sums []diag.Diagnostic
	for _, d := range ds {
		switch d.Code {
		case code:
			n++
		case diag.CodeTooManyDiagnostics:
			sums = append(sums, d)
		}
	}
	if n != diag.MaxPerArea {
		t.Errorf("%d diagnostics %s, want the first %d", n, code, diag.MaxPerArea)
	}
	if len(sums) != 1 {
		t.Fatalf("%d diagnostics %s, want one: %v", len(sums), diag.CodeTooManyDiagnostics, sums)
	}
	s := sums[0]
	if want := fmt.Sprintf("%s more", thousands(over)); !strings.HasPrefix(s.Message, want) || !strings.Contains(s.Message, code) {
		t.Errorf("message %q, want it to start with %q and name %s", s.Message, want, code)
	}
	if s.Severity != sev {
		t.Errorf("severity %s, want %s", s.Severity, sev)
	}
	return s
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestMentionDiagnosticsCapped: a context file of thousands of mentions
// that do not resolve has the first diag.MaxPerArea of them, in
// file order, and one diagnostic at the next that says how many more
// there are; the same every time.
func TestMentionDiagnosticsCapped(t *testing.T) {
	const n = 5000
	dir := t.TempDir()
	col := filepath.Join(dir, "x")
	var body strings.Builder
	for i := range n {
		fmt.Fprintf(&body, "see @nosuch:context/f%d.md and @x:../up%d.md\n", i, i)
	}
	writeFiles(t, col, map[string]string{
		"pyproject.toml":  "[project]\nname = \"x\"\nversion = \"1.0.0\"\ndescription = \"d\"\n",
		"context/many.md": body.String(),
	})
	root := discovery.Root{Kind: discovery.RootUser, Path: dir}
	check := func() []diag.Diagnostic {
		cols, err := (&discovery.Loader{}).ScanRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		set := resolve.NewSet([]discovery.Root{root}, [][]*discovery.Collection{cols})
		return check.Collection(set, cols[0])
	}
	ds := check()
	if len(ds) != diag.MaxPerArea+1 {
		t.Fatalf("%d diagnostics, want %d and one that counts the rest", len(ds), diag.MaxPerArea)
	}
	// Each line has one unresolved and one escaping mention: the first
	// 100 are those of the first 50 lines, and the summary is at the
	// start of line 51.
	var unresolved, escapes int
	for _, d := range ds[:diag.MaxPerArea] {
		switch d.Code {
		case diag.CodeMentionUnresolved:
			unresolved++
		case diag.CodeMentionEscapes:
			escapes++
		}
		if d.Range.Start.Line >= diag.MaxPerArea/2 {
			t.Errorf("%v: past the first %d lines", d, diag.MaxPerArea/2)
		}
	}
	if unresolved != escapes {
		t.Errorf("%d unresolved and %d escaping mentions kept, want as many of each", unresolved, escapes)
	}
	sum := ds[len(ds)-1]
	if sum.Code != diag.CodeTooManyDiagnostics || sum.Severity != diag.SeverityError || sum.Collection != "x" ||
		sum.Range.Start != (diag.Position{Line: diag.MaxPerArea / 2, Character: 4}) {
		t.Errorf("last diagnostic %v (%s, collection %q), want %s at 51:5", sum, sum.Severity, sum.Collection, diag.CodeTooManyDiagnostics)
	}
	if want := thousands(2*n-diag.MaxPerArea) + " more ref/ diagnostics"; !strings.HasPrefix(sum.Message, want) ||
		!strings.Contains(sum.Message, diag.CodeMentionUnresolved) || !strings.Contains(sum.Message, diag.CodeMentionEscapes) {
		t.Errorf("message %q, want %q and the codes", sum.Message, want)
	}
	if again := check(); !slices.Equal(again, ds) {
		t.Error("a second check gives other diagnostics")
	}
}

// TestOwnDiagnosticsCapped: the parsers of documents, pyproject.toml and
// lock files, and the suppression comments, keep the first
// diag.MaxPerArea of an area of one file and count the rest.
func TestOwnDiagnosticsCapped(t *testing.T) {
	const n = 300
	over := n - diag.MaxPerArea
	t.Run("front matter", func(t *testing.T) {
		var fm strings.Builder
		fm.WriteString("---\nmeta:\n  name: a\n  description: d\n")
		for i := range n {
			fmt.Fprintf(&fm, "unknown%d: 1\n", i)
		}
		fm.WriteString("---\nbody\n")
		doc := schema.ParseDocument("/c/agents/a.md", []byte(fm.String()), schema.DocAgent, schema.Options{})
		capped(t, doc.Diagnostics, diag.CodeUnknownKey, over, diag.SeverityError)
	})
	t.Run("pyproject", func(t *testing.T) {
		var src strings.Builder
		src.WriteString("[project]\nname = \"x\"\nversion = \"1.0.0\"\ndescription = \"d\"\n\n[tool.amplifier.collection]\n")
		for i := range n {
			fmt.Fprintf(&src, "unknown%d = 1\n", i)
		}
		_, ds := discovery.ParsePyproject("/c/pyproject.toml", []byte(src.String()))
		capped(t, ds, diag.CodeMetadataUnknownKey, over, diag.SeverityInfo)
	})
	t.Run("lock", func(t *testing.T) {
		var src strings.Builder
		src.WriteString(`{"version": "1.1", "collections": {`)
		for i := range n {
			if i > 0 {
				src.WriteString(",")
			}
			fmt.Fprintf(&src, "\n  \"c%03d\": 1", i)
		}
		src.WriteString("\n}}\n")
		_, ds, err := lock.Parse("/c/collections.lock", []byte(src.String()))
		if err != nil {
			t.Fatal(err)
		}
		capped(t, ds, diag.CodeLockSchema, over, diag.SeverityError)
		// The entries kept are the first by name, whatever the order of
		// the map they are read into.
		for _, d := range ds {
			if d.Code == diag.CodeLockSchema && d.Collection >= fmt.Sprintf("c%03d", diag.MaxPerArea) {
				t.Errorf("kept %v of entry %s, not among the first %d", d, d.Collection, diag.MaxPerArea)
			}
		}
	})
	t.Run("suppression comments", func(t *testing.T) {
		var src strings.Builder
		src.WriteString("---\n")
		for i := range n {
			fmt.Fprintf(&src, "# amplidex: ignore[schema/unknown-key] %d\n", i)
		}
		src.WriteString("---\n")
		path := "/c/agents/a.md"
		ds := suppress.File(path, []byte(src.String()), nil)
		capped(t, ds, diag.CodeSuppressUnused, over, diag.SeverityInfo)
	})
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
