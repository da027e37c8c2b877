package suppress_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/suppress"
	"github.com/amplidex/amplidex/discovery/syntax"
)

func TestCheckCodePattern(t *testing.T) {
	tests := []struct {
		pattern string
		want    string // "" when the pattern selects a code, else a part of the error
	}{
		{"deps/not-installed", ""},
		{"deps/", ""},
		{"deps", ""},
		{"schema/unknwn-key", `did you mean "schema/unknown-key"?`},
		// A code that was renamed names its successor.
		{"deps/missing", `(it was renamed); did you mean "deps/not-installed"?`},
		// The codes of bundle repositories are in the one registry.
		{"bundle/at-in-yaml", ""},
		{"bundle/include-without-bundle-ky", `did you mean "bundle/include-without-bundle-key"?`},
		{"nothing/like-it", "is not a diagnostic code or area"},
	}
	for _, tc := range tests {
		err := diag.CheckCodePattern(tc.pattern)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckCodePattern(%q) = %v, want nil", tc.pattern, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckCodePattern(%q) = %v, want an error saying %q", tc.pattern, err, tc.want)
		}
	}
}

// TestSuppressYAML checks the comments of a bundle repository's YAML
// files: on a line, in the file, and one naming no code.
func TestSuppressYAML(t *testing.T) {
	src := []byte("bundle:\n  name: app\n  verison: 1  # amplidex: ignore[bundle/unknown-key]\n" +
		"# amplidex: ignore-file[bundle/at-in-yaml, bundle/no-such]\nincludes:\n  - bundle: \"@app:x\"\n")
	ds := []diag.Diagnostic{
		{Code: "bundle/unknown-key", Severity: diag.SeverityError, Path: "/r/behaviors/a.yaml", Range: diag.Range{Start: diag.Position{Line: 2}}},
		{Code: "bundle/at-in-yaml", Severity: diag.SeverityError, Path: "/r/behaviors/a.yaml", Range: diag.Range{Start: diag.Position{Line: 5}}},
		{Code: "bundle/missing-name", Severity: diag.SeverityWarning, Path: "/r/behaviors/a.yaml", Range: diag.Range{Start: diag.Position{Line: 0}}},
	}
	for _, ext := range []string{".yaml", ".yml"} {
		path := "/r/behaviors/a" + ext
		in := make([]diag.Diagnostic, len(ds))
		for i, d := range ds {
			d.Path = path
			in[i] = d
		}
		var got []string
		for _, d := range suppress.File(path, src, in) {
			got = append(got, d.Code)
		}
		if want := "bundle/missing-name suppress/unused"; strings.Join(got, " ") != want {
			t.Errorf("%s: kept %v, want %s", ext, got, want)
		}
	}
}

// FuzzHasSuppressMarker holds the search for a suppression comment's
// marker to bytes.Contains.
func FuzzHasSuppressMarker(f *testing.F) {
	for _, s := range []string{"", "x", "x:", "amplidex:", "amplidex", "# amplidex: ignore[x]", "ampli dex:", "xx amplidex: x",
		"amplidexamplidex:", "amplidex:x", "mplidex:", "pamplidex:", "amplidex;", "\x00amplidex:\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if got, want := suppress.HasSuppressMarker(src), bytes.Contains(src, []byte("amplidex:")); got != want {
			t.Errorf("HasSuppressMarker(%q) = %v, want %v", src, got, want)
		}
	})
}

// FuzzParseSuppressions: any bytes, as a Markdown document (front matter
// and body) or as TOML, parse without a panic into comments whose ranges
// lie inside the file, each with codes or a problem or bare.
func FuzzParseSuppressions(f *testing.F) {
	for _, s := range []string{"", "---\nx: 1  # amplidex: ignore[schema/]\n---\nSee @a:b.md <!-- amplidex: ignore[ref/] -->\n",
		"<!-- amplidex: ignore-file[ref/mention-unresolved] -->", "<!-- amplidex: ignore[x", "<!--amplidex:ignore-->", "<!-- amplidex: -->",
		"# amplidex: ignore[a, , b]", "a <!-- amplidex: ignore[] --> <!-- amplidex: ignore-file -->", "---\n<!-- amplidex: ignore -->\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		lines := syntax.NewLineIndex(src)
		end := lines.Range(len(src), len(src)).End
		for _, path := range []string{"/c/context/a.md", "/c/pyproject.toml", "/c/behaviors/a.yaml"} {
			for _, s := range suppress.Parse(path, src) {
				for _, r := range append([]diag.Range{s.Range}, rangesOf(s.Codes)...) {
					if after(r.Start, r.End) || after(r.End, end) {
						t.Fatalf("%s: range %v outside the file (ends %v) in %+v", path, r, end, s)
					}
				}
				if s.Problem == "" && s.File && len(s.Codes) == 0 {
					t.Fatalf("%s: ignore-file without codes and no problem: %+v", path, s)
				}
			}
		}
	})
}

func rangesOf(cs []suppress.Code) []diag.Range {
	out := make([]diag.Range, len(cs))
	for i, c := range cs {
		out[i] = c.Range
	}
	return out
}

// after reports whether position a comes after b.
func after(a, b diag.Position) bool {
	return a.Line > b.Line || a.Line == b.Line && a.Character > b.Character
}
