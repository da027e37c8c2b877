package check_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
)

// repoFixture reads testdata/name: a repository at /w/repo, and the
// diagnostics its check must give (want: path:line:code).
func repoFixture(t *testing.T, name string) (compose.Files, []string) {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var want []string
	for _, f := range a.Files {
		if f.Name == "want" {
			want = strings.Fields(string(f.Data))
			continue
		}
		files["/w/repo/"+f.Name] = f.Data
	}
	return compose.NewOverlay(nil, files), want
}

func runCheck(files compose.Files, opts check.Options) *check.Result {
	env := compose.Env{WorkDir: "/w/repo", AmplifierHome: "/w/home", Home: "/w", NoWellKnown: true}
	return check.Check(compose.Locate(env, files), files, "/w/repo", opts)
}

func list(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%s:%d:%s", strings.TrimPrefix(d.Path, "/w/repo/"), d.Range.Start.Line+1, d.Code))
	}
	sort.Strings(out)
	return out
}

// TestCheckFixtures checks the repositories of testdata: each silent
// failure at its line, and a clean repository clean.
func TestCheckFixtures(t *testing.T) {
	for _, name := range []string{"silent.txtar", "clean.txtar"} {
		t.Run(name, func(t *testing.T) {
			files, want := repoFixture(t, name)
			res := runCheck(files, check.Options{})
			sort.Strings(want)
			if got := list(res.Diagnostics); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("got  %v\nwant %v", got, want)
				for _, d := range res.Diagnostics {
					t.Log(d.String())
				}
			}
		})
	}
}

// TestCheckMessages checks what the messages say for the mistakes whose
// fix is not obvious.
func TestCheckMessages(t *testing.T) {
	files, _ := repoFixture(t, "silent.txtar")
	res := runCheck(files, check.Options{})
	for code, want := range map[string]string{
		bundle.CodeMentionPunctuation: "you meant @app:context/guide.md",
		bundle.CodeIncludeNoBundleKey: "write - bundle: app:behaviors/other",
		bundle.CodeAgentUnresolved:    "has no agents/ghost.md",
		bundle.CodeUnknownKey:         "did you mean `description`?",
		bundle.CodeAtInYAML:           "write `app:helper`",
	} {
		found := false
		for _, d := range res.Diagnostics {
			if d.Code == code && strings.Contains(d.Message, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s saying %q", code, want)
		}
	}
	if res.FilesChecked() != 8 {
		t.Errorf("%d files checked, want 8", res.FilesChecked())
	}
	for _, d := range res.Diagnostics {
		if d.Collection != "app" {
			t.Errorf("%s: collection %q, want the repository's name", d, d.Collection)
		}
	}
}

// TestCheckManifest checks that default_provider is asked only of an
// amplifier-agent manifest.
func TestCheckManifest(t *testing.T) {
	files, _ := repoFixture(t, "clean.txtar")
	if res := runCheck(files, check.Options{}); len(res.Diagnostics) != 0 {
		t.Fatalf("a bundle is asked for default_provider: %v", res.Diagnostics)
	}
	res := runCheck(files, check.Options{Manifest: func(p string) bool { return p == "/w/repo/bundle.md" }})
	if got := list(res.Diagnostics); len(got) != 1 || got[0] != "bundle.md:2:bundle/missing-default-provider" {
		t.Errorf("manifest: %v", got)
	}
}

// TestCheckCodes checks a repository that earns each code of bundle
// repositories (testdata/codes.txtar: files under /w, want: path:line
// code severity), an amplifier-agent manifest told as the command tells
// it (check.PackagedManifest), the repository's settings file read for
// where bundles are found, one file that cannot be read.
func TestCheckCodes(t *testing.T) {
	a, err := txtar.ParseFile(filepath.Join("testdata", "codes.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var want []string
	for _, f := range a.Files {
		if f.Name == "want" {
			for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				want = append(want, strings.TrimSpace(l))
			}
			continue
		}
		files["/w/"+f.Name] = f.Data
	}
	o := unreadable{compose.NewOverlay(nil, files), "/w/repo/agents/locked.md"}
	env := compose.Env{WorkDir: "/w/repo", AmplifierHome: "/w/home", Home: "/w", NoWellKnown: true}
	res := check.Check(compose.Locate(env, o), o, "/w/repo", check.Options{Manifest: func(p string) bool { return check.PackagedManifest(o, p) }})
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, fmt.Sprintf("%s:%d %s %s", strings.TrimPrefix(d.Path, "/w/"), d.Range.Start.Line+1, d.Code, d.Severity))
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		for _, d := range res.Diagnostics {
			t.Log(d.String())
		}
	}
}

// unreadable is Files that cannot read one file.
type unreadable struct {
	compose.Files
	path string
}

func (u unreadable) Parse(p string, k bundle.Kind) (*bundle.File, error) {
	if p == u.path {
		return nil, fmt.Errorf("read %s: permission denied", p)
	}
	return u.Files.Parse(p, k)
}
