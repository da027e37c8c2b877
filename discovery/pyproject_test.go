package discovery_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
)

var updatePyproject = flag.Bool("update-pyproject", false, "rewrite the want sections of testdata/pyproject/*.txtar")

// TestParsePyproject runs every testdata/pyproject/*.txtar case. Each
// archive holds a pyproject.toml and a want file: the parsed metadata, then
// one line per diagnostic as `line:col-line:col severity code message`,
// with 1-based lines and 1-based columns counted in UTF-16 code units.
func TestParsePyproject(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "pyproject", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			src, want := txtarFile(t, ar, "pyproject.toml"), txtarFile(t, ar, "want")
			md, diags := discovery.ParsePyproject("pyproject.toml", src)
			got := renderPyproject(md, diags)
			if *updatePyproject {
				setTxtarFile(ar, "want", got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != string(want) {
				t.Errorf("ParsePyproject mismatch\n--- got\n%s--- want\n%s", got, want)
			}
			checkDefaultSeverities(t, diags)
		})
	}
}

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

func setTxtarFile(ar *txtar.Archive, name, data string) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = []byte(data)
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(data)})
}

// renderPyproject prints what ParsePyproject returned in the format of the
// want files.
func renderPyproject(md *discovery.Metadata, diags []diag.Diagnostic) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %q\nversion: %q\ndescription: %q\n", md.Name, md.Version, md.Description)
	if md.URLs != nil {
		keys := make([]string, 0, len(md.URLs))
		for k := range md.URLs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "url: %s = %q\n", k, md.URLs[k])
		}
	}
	if md.Author != "" {
		fmt.Fprintf(&b, "author: %q\n", md.Author)
	}
	if md.Capabilities != nil {
		fmt.Fprintf(&b, "capabilities: %q\n", md.Capabilities)
	}
	switch {
	case md.Requires == nil:
	case len(md.Requires) == 0:
		b.WriteString("requires: (empty)\n")
	default:
		for _, r := range md.Requires {
			fmt.Fprintf(&b, "requires: %s %q %s\n", r.Name, r.Constraint, rangeString(r.Range))
		}
	}
	for _, d := range diags {
		fmt.Fprintf(&b, "%s %s %s %s\n", rangeString(d.Range), d.Severity, d.Code, d.Message)
	}
	return b.String()
}

// rangeString prints r with 1-based lines and columns.
func rangeString(r diag.Range) string {
	return fmt.Sprintf("%d:%d-%d:%d", r.Start.Line+1, r.Start.Character+1, r.End.Line+1, r.End.Character+1)
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

func TestParsePyprojectMetadataNeverNil(t *testing.T) {
	for _, src := range []string{"", "[[", "project = 1", "\xff\xfe", "[project]\nname = 'x'\n"} {
		md, _ := discovery.ParsePyproject("p.toml", []byte(src))
		if md == nil {
			t.Errorf("ParsePyproject(%q) returned nil metadata", src)
		}
	}
}

// TestParsePyprojectCorpus parses the real pyproject.toml files of the
// corpus: each collection's root file and its package copy.
func TestParsePyprojectCorpus(t *testing.T) {
	corpus := os.Getenv("AMPLIDEX_CORPUS")
	if corpus == "" {
		t.Skip("AMPLIDEX_CORPUS is not set; skipping the corpus test")
	}
	type want struct {
		name, version string
		requires      []string // "name constraint"; nil means no requires table
	}
	foundation := []string{"foundation ^1.0.0"}
	cases := map[string]want{
		"bundled/developer-expertise":                       {"developer-expertise", "1.0.0", foundation},
		"bundled/foundation":                                {"foundation", "1.0.0", []string{}},
		"collections/Joi__amplifier-collection-switchboard": {"sb", "1.0.0", nil},
		"collections/Joi__amplifier-collection-switchboard/amplifier_collection_switchboard":  {"switchboard", "1.0.0", nil},
		"collections/microsoft__amplifier-collection-design-intelligence":                     {"design-intelligence", "1.0.0", foundation},
		"collections/microsoft__amplifier-collection-design-intelligence/design_intelligence": {"design-intelligence", "1.0.0", foundation},
		"collections/microsoft__amplifier-collection-issues":                                  {"amplifier-collection-issues", "0.1.1", nil},
		"collections/microsoft__amplifier-collection-recipes":                                 {"recipes", "0.1.0", nil},
		"collections/microsoft__amplifier-collection-recipes/amplifier_collection_recipes":    {"recipes", "0.1.0", nil},
		"collections/microsoft__amplifier-collection-toolkit":                                 {"toolkit", "1.0.0", nil},
		"collections/microsoft__amplifier-collection-toolkit/amplifier_collection_toolkit":    {"toolkit", "1.0.0", nil},
		"collections/momuno__amplifier-collection-convergent-dev":                             {"convergent-dev", "1.0.0", foundation},
		"collections/momuno__amplifier-collection-convergent-dev/convergent_dev":              {"convergent-dev", "1.0.0", foundation},
		"collections/payneio__amplifier-collection-issues":                                    {"payne-amplifier", "0.1.1", nil},
		"collections/payneio__amplifier-collection-issues/max_payne_collection":               {"max-payne-collection", "0.1.1", nil},
		"collections/ramparte__amplifier-collection-html-tools":                               {"html-tools", "1.0.0", nil},
		"collections/ramparte__amplifier-collection-metacognition": {"metacognition", "0.1.0",
			[]string{"amplifier-core >=0.1.0", "amplifier-profiles >=0.1.0"}},
		"collections/robotdad__amplifier-collection-ddd":                                                 {"ddd", "1.0.0", foundation},
		"collections/robotdad__amplifier-collection-ddd/ddd":                                             {"ddd", "1.0.0", foundation},
		"collections/robotdad__amplifier-collection-recipes":                                             {"recipes", "0.1.0", nil},
		"collections/robotdad__amplifier-collection-recipes/amplifier_collection_recipes":                {"recipes", "0.1.0", nil},
		"collections/robotdad__amplifier-collection-spec-kit":                                            {"spec-kit", "1.0.0", foundation},
		"collections/robotdad__amplifier-collection-spec-kit/spec_kit":                                   {"spec-kit", "1.0.0", foundation},
		"collections/samueljklee__amplifier-collection-amplifier-dev":                                    {"amplifier-collection-amplifier-dev", "1.0.0", nil},
		"collections/samueljklee__amplifier-collection-amplifier-dev/amplifier_collection_amplifier_dev": {"amplifier-collection-amplifier-dev", "1.0.0", nil},
	}

	// Every root and package pyproject.toml of the corpus must be listed.
	var found []string
	for _, pattern := range []string{"collections/*/pyproject.toml", "collections/*/*/pyproject.toml",
		"bundled/*/pyproject.toml", "bundled/*/*/pyproject.toml"} {
		m, err := filepath.Glob(filepath.Join(corpus, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(corpus, filepath.Dir(f))
			found = append(found, filepath.ToSlash(rel))
		}
	}
	if len(found) != len(cases) {
		t.Errorf("found %d pyproject.toml files, want %d: %q", len(found), len(cases), found)
	}

	for _, dir := range found {
		t.Run(dir, func(t *testing.T) {
			w, ok := cases[dir]
			if !ok {
				t.Fatalf("unexpected pyproject.toml in %s", dir)
			}
			path := filepath.Join(corpus, filepath.FromSlash(dir), "pyproject.toml")
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			md, diags := discovery.ParsePyproject(path, src)
			for _, d := range diags {
				t.Errorf("unexpected diagnostic: %v", d)
			}
			if md.Name != w.name || md.Version != w.version || md.Description == "" {
				t.Errorf("got name %q version %q description %q, want %q %q and a description",
					md.Name, md.Version, md.Description, w.name, w.version)
			}
			var got []string
			if md.Requires != nil {
				got = []string{}
			}
			for _, r := range md.Requires {
				got = append(got, r.Name+" "+r.Constraint)
				if text := lineText(src, r.Range); text != `"`+r.Constraint+`"` {
					t.Errorf("requirement %s: range %s covers %q, want the quoted value", r.Name, rangeString(r.Range), text)
				}
			}
			if (got == nil) != (w.requires == nil) || !slices.Equal(got, w.requires) {
				t.Errorf("requires = %#v, want %#v", got, w.requires)
			}
		})
	}
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

func FuzzParsePyproject(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzParsePyproject/, made from the fixtures.
	f.Fuzz(func(t *testing.T, src []byte) {
		md, diags := discovery.ParsePyproject("pyproject.toml", src)
		if md == nil {
			t.Fatal("nil metadata")
		}
		lines := syntax.NewLineIndex(src)
		for _, d := range diags {
			checkRangeInside(t, lines, d.Range)
			if d.Message == "" || d.Code == "" {
				t.Errorf("empty diagnostic %+v", d)
			}
		}
		for _, r := range md.Requires {
			checkRangeInside(t, lines, r.Range)
		}
		syntax.ScanTOMLSpans(src) // must not panic on any input
	})
}

// checkRangeInside fails unless r is ordered and lies inside the text.
func checkRangeInside(t *testing.T, lines *syntax.LineIndex, r diag.Range) {
	t.Helper()
	if r.Start.Line < 0 || r.End.Line >= lines.Lines() || r.Start.Line > r.End.Line ||
		r.Start.Line == r.End.Line && r.Start.Character > r.End.Character || r.Start.Character < 0 {
		t.Errorf("range %+v outside the text (%d lines)", r, lines.Lines())
	}
}

// benchPyproject is a pyproject.toml of the size and shape real
// collections have.
const benchPyproject = `[build-system]
requires = ["setuptools>=61.0"]
build-backend = "setuptools.build_meta"

[project]
name = "design-intelligence"
version = "1.0.0"
description = "Comprehensive design intelligence capability with specialized agents and knowledge base"
readme = "README.md"
requires-python = ">=3.11"
license = { text = "MIT" }
authors = [{ name = "Amplifier Team" }]

[project.urls]
Homepage = "https://github.com/microsoft/amplifier-collection-design-intelligence"
Repository = "https://github.com/microsoft/amplifier-collection-design-intelligence"

[tool.setuptools]
packages = { find = {} }

[tool.setuptools.package-data]
design_intelligence = ["*.toml", "**/*.md"]

[tool.amplifier.collection]
author = "Amplifier Team"
capabilities = [
    "Design system architecture",
    "Component design",
    "Layout and responsive strategy",
    "Animation choreography",
    "Voice and copy strategy",
]

[tool.amplifier.collection.requires]
foundation = "^1.0.0"
`

func BenchmarkParsePyproject(b *testing.B) {
	src := []byte(benchPyproject)
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		md, diags := discovery.ParsePyproject("pyproject.toml", src)
		if md.Name == "" || len(diags) != 0 {
			b.Fatal(md, diags)
		}
	}
}

// TestUsable pins which pyproject.toml mistakes make a directory unusable
// (it resolves nowhere) and which only earn their diagnostic: only what
// keeps the file from naming the collection is fatal.
func TestUsable(t *testing.T) {
	const ok = ""
	tests := []struct {
		name, src string
		problem   string // "" when usable, else a part of the problem
	}{
		{"valid", "[project]\nname = \"x\"\nversion = \"1.0.0\"\ndescription = \"d\"\n", ok},
		{"bad version", "[project]\nname = \"x\"\nversion = \"1.0\"\ndescription = \"d\"\n", ok},
		{"no version or description", "[project]\nname = \"x\"\n", ok},
		{"bad name", "[project]\nname = \"My_Coll\"\nversion = \"1.0.0\"\ndescription = \"d\"\n", ok},
		{"bad constraint", "[project]\nname = \"x\"\nversion = \"1.0.0\"\ndescription = \"d\"\n[tool.amplifier.collection.requires]\na = \"=>1.0\"\n", ok},
		{"wrong types of optional sections", "[project]\nname = \"x\"\nurls = 3\n[tool.amplifier.collection]\nauthor = 1\ncapabilities = \"c\"\nrequires = \"r\"\n", ok},
		{"collection table not a table", "tool = 1\n[project]\nname = \"x\"\n", ok},
		{"not TOML", "[project\nname = \"x\"\n", "TOML"},
		{"no project", "[tool.other]\nx = 1\n", "Required field missing: name"},
		{"no name", "[project]\nversion = \"1.0.0\"\ndescription = \"d\"\n", "Required field missing: name"},
		{"empty name", "[project]\nname = \" \"\nversion = \"1.0.0\"\n", "Required field missing: name"},
		{"name not a string", "[project]\ndescription = 3\nname = 1\n", "project.name"},
		{"project not a table", "project = \"x\"\n", "Wrong type for project:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := discovery.AnalyzeFile("pyproject.toml", []byte(tc.src), "", schema.Options{})
			usable, problem := discovery.Usable(f), discovery.PyprojectProblem(f)
			if usable != (tc.problem == ok) || (problem == "") != usable {
				t.Fatalf("Usable = %v, PyprojectProblem = %q; want usable %v", usable, problem, tc.problem == ok)
			}
			if !strings.Contains(problem, tc.problem) {
				t.Errorf("PyprojectProblem = %q, want it to say %q", problem, tc.problem)
			}
			if usable != discovery.Usable(f.Brief()) {
				t.Errorf("brief Facts are judged otherwise")
			}
		})
	}
	if discovery.Usable(nil) || discovery.PyprojectProblem(nil) == "" {
		t.Error("no Facts are usable")
	}
}

func TestPyprojectVersionMatcher(t *testing.T) {
	re := regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	check := func(s string) {
		if want, got := re.MatchString(s), schema.IsCollectionVersion(s); got != want {
			t.Errorf("version matcher on %q = %v, the expression says %v", s, got, want)
		}
	}
	for _, s := range []string{"", "1", "1.2", "1.2.3", "01.002.0003", "1.2.3.4", "1.2.", ".1.2", "1..2", "1.2.3-rc1", "1.2.3\n", "v1.2.3", "1.2.x", "١.٢.٣"} {
		check(s)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 0, 10)
	for range 50_000 {
		buf = buf[:0]
		for range rng.IntN(9) {
			buf = append(buf, "0123456789..a-"[rng.IntN(14)])
		}
		check(string(buf))
	}
}
