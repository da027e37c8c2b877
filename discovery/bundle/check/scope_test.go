package check_test

import (
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
)

// TestRootOf checks where the repository around a path is found.
func TestRootOf(t *testing.T) {
	files := compose.NewOverlay(nil, map[string][]byte{
		"/h/bundle.md":                      nil, // the home directory's: never a repository
		"/h/src/app/bundle.md":              nil,
		"/h/src/app/agents/a.md":            nil,
		"/h/src/app/bundles/sub/bundle.md":  nil,
		"/h/src/app/bundles/sub/context/x":  nil,
		"/h/src/y/bundle.yaml":              nil,
		"/h/src/y/behaviors/b.yaml":         nil,
		"/h/src/git/.git/HEAD":              nil, // the top of a repository: not above it
		"/h/src/git/behaviors/b.yaml":       nil,
		"/top/bundle.md":                    nil,
		"/top/repo/.git":                    nil, // a worktree's .git is a file
		"/top/repo/modes/m.md":              nil,
		"/h/src/plain/agents/collection.md": nil,
	})
	for path, want := range map[string]string{
		"/h/src/app":                        "/h/src/app",
		"/h/src/app/agents/a.md":            "/h/src/app",
		"/h/src/app/agents":                 "/h/src/app",
		"/h/src/app/bundles/sub/context/x":  "/h/src/app/bundles/sub",
		"/h/src/y/behaviors/b.yaml":         "/h/src/y",
		"/h/src/git/behaviors/b.yaml":       "",
		"/top/repo/modes/m.md":              "",
		"/h/src/plain/agents/collection.md": "",
	} {
		if got := check.RootOf(files, path, "/h"); got != want {
			t.Errorf("RootOf(%s) = %q, want %q", path, got, want)
		}
	}
}

// TestLoneRoot checks where the check of a bundle file outside any
// repository is rooted, and that a collection's agent is not one.
func TestLoneRoot(t *testing.T) {
	files := compose.NewOverlay(nil, map[string][]byte{
		"/m/behaviors/hook.yaml":    []byte("bundle: {name: hook}\n"),
		"/m/skills/s/SKILL.md":      []byte("---\nname: s\n---\n"),
		"/m/extra/loose.yaml":       []byte("bundle: {name: loose}\n"),
		"/m/extra/notes.yaml":       []byte("a: 1\n"),
		"/m/agents/a.md":            []byte("---\nmeta: {name: a}\n---\n"),
		"/m/context/c.md":           []byte("text\n"),
		"/m/pyproject.toml":         []byte(""),
		"/m/recipes/build.yaml":     []byte("name: b\n"),
		"/m/elsewhere/release.yaml": []byte("name: r\nsteps: []\n"),
	})
	for path, want := range map[string]string{
		"/m/behaviors/hook.yaml":    "/m",
		"/m/skills/s/SKILL.md":      "/m",
		"/m/extra/loose.yaml":       "/m/extra",
		"/m/recipes/build.yaml":     "/m",
		"/m/elsewhere/release.yaml": "/m/elsewhere",
		"/m/extra/notes.yaml":       "",
		"/m/agents/a.md":            "",
		"/m/context/c.md":           "",
		"/m/pyproject.toml":         "",
	} {
		got, ok := check.LoneRoot(files, path)
		if got != want || ok != (want != "") {
			t.Errorf("LoneRoot(%s) = %q, %v; want %q", path, got, ok, want)
		}
	}
}

// TestPackagedManifest: amplifier-agent's manifest lies in a Python
// package; a bundle repository's does not.
func TestPackagedManifest(t *testing.T) {
	files := compose.NewOverlay(nil, map[string][]byte{
		"/s/amplifier_agent_lib/bundle/bundle.md":   nil,
		"/s/amplifier_agent_lib/bundle/__init__.py": nil,
		"/r/bundle.md":       nil,
		"/r/pkg/bundle.yaml": nil,
		"/r/pkg/__init__.py": nil,
	})
	for path, want := range map[string]bool{
		"/s/amplifier_agent_lib/bundle/bundle.md": true,
		"/r/bundle.md":       false,
		"/r/pkg/bundle.yaml": false,
	} {
		if got := check.PackagedManifest(files, path); got != want {
			t.Errorf("PackagedManifest(%s) = %v, want %v", path, got, want)
		}
	}
}

// TestReport checks a check's report of a scope: the files in it, and
// suppression comments applied in Markdown, front matter and YAML.
func TestReport(t *testing.T) {
	files, _ := repoFixture(t, "silent.txtar")
	res := runCheck(files, check.Options{})
	ds, checked := res.Report()
	if len(checked) != res.FilesChecked() || len(ds) != len(res.Diagnostics) {
		t.Errorf("the whole repository: %d files, %d diagnostics; want %d, %d", len(checked), len(ds), res.FilesChecked(), len(res.Diagnostics))
	}
	ds, checked = res.Report("/w/repo/agents", "/w/repo/behaviors/main.yaml")
	if got := strings.Join(checked, " "); got != "/w/repo/agents/flat.md /w/repo/agents/helper.md /w/repo/behaviors/main.yaml" {
		t.Errorf("files in scope: %s", got)
	}
	for _, d := range ds {
		if !strings.HasPrefix(d.Path, "/w/repo/agents/") && d.Path != "/w/repo/behaviors/main.yaml" {
			t.Errorf("out of scope: %s", d)
		}
	}

	// The same repository with suppression comments.
	o := files.(*compose.Overlay)
	sup := compose.NewOverlay(o, map[string][]byte{
		"/w/repo/agents/helper.md": []byte("---\nmeta:\n  name: helper\n  descripton: Helps.  # amplidex: ignore[bundle/unknown-key]\n---\n" +
			"See @app:context/guide.md. <!-- amplidex: ignore[bundle/mention-punctuation] -->\n"),
		"/w/repo/behaviors/other.yaml": []byte("# amplidex: ignore-file[bundle/missing-name, bundle/no-such-code]\ntools:\n  - module: tool-other\n"),
	})
	res = runCheck(sup, check.Options{})
	ds, _ = res.Report("/w/repo/agents/helper.md", "/w/repo/behaviors/other.yaml")
	var got []string
	for _, d := range ds {
		got = append(got, d.Code)
	}
	if strings.Join(got, " ") != diag.CodeSuppressUnused {
		t.Errorf("with suppression comments: %v, want one suppress/unused (bundle/no-such-code)", ds)
	}
}

// TestFix checks the fixes check --fix makes: those of the diagnostics
// reported, the check's own (a mention's trailing punctuation) in the
// first round, round after round.
func TestFix(t *testing.T) {
	files, _ := repoFixture(t, "silent.txtar")
	res := runCheck(files, check.Options{})
	byPath := map[string]*bundle.File{}
	for _, f := range res.Files {
		byPath[f.Path] = f
	}
	all := func(_ string, ds []diag.Diagnostic) []diag.Diagnostic { return ds }
	for path, tc := range map[string]struct {
		n    int
		want []string
	}{
		"/w/repo/bundle.md": {3, []string{"  - bundle: app:behaviors/other\n",
			"Read (@app:context/guide.md). Then @app:context/nowhere.md and (@app:context/guide.md): done.\n"}},
		"/w/repo/behaviors/main.yaml": {1, []string{"    - \"app:helper\"\n"}},
		"/w/repo/agents/helper.md":    {2, []string{"  description: Helps.\n", "See (@app:context/guide.md).\n"}},
	} {
		text, n := res.Fix(byPath[path], all)
		if n != tc.n {
			t.Errorf("%s: %d fixes, want %d:\n%s", path, n, tc.n, text)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(text), w) {
				t.Errorf("%s: fixed:\n%s\nwant it to hold %q", path, text, w)
			}
		}
	}
	// Nothing is fixed that is not reported.
	none := func(string, []diag.Diagnostic) []diag.Diagnostic { return nil }
	if text, n := res.Fix(byPath["/w/repo/bundle.md"], none); n != 0 || string(text) != string(byPath["/w/repo/bundle.md"].Text()) {
		t.Errorf("fixed %d with nothing reported", n)
	}
	// Nor what a comment of the text suppresses, as Report leaves it out.
	f := byPath["/w/repo/bundle.md"]
	lines := strings.Split(string(f.Text()), "\n")
	for _, x := range f.Fixes {
		lines[x.At.Start.Line] += "  # amplidex: ignore[" + x.Code + "]"
	}
	for _, x := range res.Fixes[f.Path] {
		lines[x.At.Start.Line] += " <!-- amplidex: ignore[" + x.Code + "] -->"
	}
	quietRes := runCheck(compose.NewOverlay(files, map[string][]byte{f.Path: []byte(strings.Join(lines, "\n"))}), check.Options{})
	var quiet *bundle.File
	for _, g := range quietRes.Files {
		if g.Path == f.Path {
			quiet = g
		}
	}
	if len(quiet.Fixes) == 0 || len(quietRes.Fixes[f.Path]) == 0 {
		t.Fatal("the fixes are gone with the comments")
	}
	if text, n := quietRes.Fix(quiet, all); n != 0 {
		t.Errorf("fixed %d suppressed diagnostics:\n%s", n, text)
	}
}

// TestScanCollections: a project's collections, under the repository's
// .amplifier, are checked as collections, not as a bundle's files; its
// bundles are the repository's.
func TestScanCollections(t *testing.T) {
	files := compose.NewOverlay(nil, map[string][]byte{
		"/w/repo/bundle.md": []byte("---\nbundle: {name: app}\n---\n"),
		"/w/repo/.amplifier/collections/tools/pyproject.toml": []byte("[project]\n"),
		"/w/repo/.amplifier/collections/tools/agents/a.md":    []byte("---\nname: a\n---\n"),
		"/w/repo/.amplifier/bundles/extra.yaml":               []byte("bundle: {name: extra}\n"),
		"/w/repo/.amplifier/bundles/extra/agents/helper.md":   []byte("---\nmeta: {name: helper, description: Helps.}\n---\n"),
	})
	var got []string
	for _, e := range check.Scan(files, "/w/repo").Entries {
		got = append(got, e.Rel)
	}
	if want := ".amplifier/bundles/extra/agents/helper.md .amplifier/bundles/extra.yaml bundle.md"; strings.Join(got, " ") != want {
		t.Errorf("scanned %v, want %s", got, want)
	}
}

// TestKindOf: the kind a check gives a file named, as Scan gives it.
func TestKindOf(t *testing.T) {
	files := compose.NewOverlay(nil, map[string][]byte{
		"/r/bundle.md":                 []byte("---\nbundle: {name: r}\n---\n"),
		"/r/agents/a.md":               []byte("---\nmeta: {name: a}\n---\n"),
		"/r/extra/loose.yaml":          []byte("bundle: {name: loose}\n"),
		"/r/extra/notes.yaml":          []byte("a: 1\n"),
		"/r/README.md":                 []byte("# r\n"),
		"/r/.github/workflow.yaml":     []byte("bundle: {name: w}\n"),
		"/r/node_modules/x/bundle.md":  []byte("---\nbundle: {name: x}\n---\n"),
		"/r/.amplifier/bundles/b.yaml": []byte("bundle: {name: b}\n"),
		"/r/pyproject.toml":            []byte(""),
	})
	for path, want := range map[string]bundle.Kind{
		"/r/bundle.md":                 bundle.KindBundle,
		"/r/agents/a.md":               bundle.KindAgent,
		"/r/extra/loose.yaml":          bundle.KindBundle,
		"/r/extra/notes.yaml":          bundle.KindOther,
		"/r/README.md":                 bundle.KindOther,
		"/r/.github/workflow.yaml":     bundle.KindOther,
		"/r/node_modules/x/bundle.md":  bundle.KindOther,
		"/r/.amplifier/bundles/b.yaml": bundle.KindBundle,
		"/r/pyproject.toml":            bundle.KindOther,
		"/elsewhere/bundle.md":         bundle.KindOther,
	} {
		if got := check.KindOf(files, "/r", path); got != want {
			t.Errorf("KindOf(%s) = %v, want %v", path, got, want)
		}
	}
}
