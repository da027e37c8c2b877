package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
)

// TestCheckFoundationCorpus runs check in amplifier-foundation of the
// bundle corpus, with its includes in a runtime cache laid out as the
// runtime lays it ($AMPLIFIER_HOME/cache/<repo>-<hash>/, each corpus
// repository at @main): it checks every file of the repository, reads
// the includes from the cache (only the repositories the corpus lacks are
// not cached), and reports no error on a bundle file that the reference
// loads without a finding. Of foundation's bundle files, the reference
// (its differential test, discovery/bundle/compose) refuses one,
// experiments/exp-amplifier-dev.md, and logs a failed include loading six
// (findings): those of repositories the corpus lacks, and
// exp-foundation.md's include with two #subdirectory=. Errors on agents
// are not the reference's to find: it loads them with the mistake in them.
func TestCheckFoundationCorpus(t *testing.T) {
	c := os.Getenv("AMPLIDEX_CORPUS")
	if c == "" {
		t.Skip("AMPLIDEX_CORPUS is not set: the bundle corpus test is skipped")
	}
	corpus := filepath.Join(c, "bundles")
	repos := corpusRepos(t, corpus)
	dir := t.TempDir()
	amplifierHome := filepath.Join(dir, "amplifier")
	for _, r := range repos {
		u := compose.ParseURI("git+https://github.com/" + r + "@main")
		dst := filepath.Join(amplifierHome, "cache", u.CacheDir())
		copyTree(t, filepath.Join(corpus, strings.Replace(r, "/", "__", 1)), dst)
		if err := os.MkdirAll(filepath.Join(dst, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(corpus, "microsoft__amplifier-foundation")
	t.Chdir(root)
	env := map[string]string{
		"HOME":           filepath.Join(dir, "home"),
		"AMPLIDEX_HOME":  filepath.Join(dir, "amplidex"),
		"AMPLIFIER_HOME": amplifierHome,
	}
	var stdout, stderr strings.Builder
	a := NewApp(strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	code := a.Run(context.Background(), []string{"check", "--json"})
	var report struct {
		Diagnostics []diag.Diagnostic `json:"diagnostics"`
		Summary     struct {
			FilesChecked int `json:"files_checked"`
			Collections  int `json:"collections"`
			Repositories int `json:"bundle_repositories"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &report); err != nil {
		t.Fatalf("check --json (exit %d): %v\n%s\n%s", code, err, stdout.String(), stderr.String())
	}
	if s := report.Summary; s.FilesChecked < 20 || s.Repositories != 1 || s.Collections != 0 {
		t.Errorf("summary %+v: want at least 20 files checked in one bundle repository, and no collection", s)
	}
	cached := map[string]bool{}
	for _, r := range repos {
		cached["https://github.com/"+r+"@main"] = true
	}
	withFindings := map[string]bool{}
	for _, f := range []string{"bundle.md", "bundles/amplifier-dev.yaml", "bundles/anchors-amp-dev/bundle.md", "bundles/anchors/bundle.md",
		"experiments/behavioral-anchor-amplifier-dev/behavioral-anchor-amplifier-dev.md", "experiments/exp-amplifier-dev.md", "experiments/exp-foundation.md"} {
		withFindings[filepath.Join(root, filepath.FromSlash(f))] = true
	}
	errors := 0
	for _, d := range report.Diagnostics {
		if d.Code == bundle.CodeIncludeNotCached {
			for u := range cached {
				if strings.Contains(d.Message, u+" ") {
					t.Errorf("%s: %s is in the cache", d.Path, u)
				}
			}
		}
		if d.Severity != diag.SeverityError {
			continue
		}
		errors++
		if isBundleFile(t, root, d.Path) && !withFindings[d.Path] {
			t.Errorf("an error on a bundle file the reference loads: %s", d)
		}
	}
	if code != exitFailed || errors == 0 {
		t.Errorf("exit %d with %d errors; want exit 1: the reference refuses exp-amplifier-dev.md", code, errors)
	}
	t.Logf("check of amplifier-foundation: %d files checked, %d diagnostics, %d errors", report.Summary.FilesChecked, len(report.Diagnostics), errors)
}

var sourceRow = regexp.MustCompile("^\\| ([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+) \\| `")

// corpusRepos reads the owner/repo of each repository of the bundle
// corpus from its SOURCES.md.
func corpusRepos(t *testing.T, corpus string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(corpus, "SOURCES.md"))
	if err != nil {
		t.Skipf("no bundle corpus at %s: %v", corpus, err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if m := sourceRow.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, m[1])
		}
	}
	if len(out) == 0 {
		t.Fatal("SOURCES.md lists no repository")
	}
	return out
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isBundleFile reports whether the file at path, of the repository at
// root, is a bundle.
func isBundleFile(t *testing.T, root, path string) bool {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, path)
	return bundle.Parse(path, src, bundle.Options{Rel: filepath.ToSlash(rel)}).Kind == bundle.KindBundle
}
