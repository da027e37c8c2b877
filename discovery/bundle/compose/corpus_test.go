package compose_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// corpusDir returns $AMPLIDEX_CORPUS/bundles, or skips.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	c := os.Getenv("AMPLIDEX_CORPUS")
	if c == "" {
		tb.Skip("AMPLIDEX_CORPUS is not set: the bundle corpus tests are skipped")
	}
	dir := filepath.Join(c, "bundles")
	if _, err := os.Stat(filepath.Join(dir, "SOURCES.md")); err != nil {
		tb.Skipf("no bundle corpus at %s: %v", dir, err)
	}
	return dir
}

var sourceRow = regexp.MustCompile("^\\| ([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+) \\| `")

// corpusRepos reads SOURCES.md: owner/repo of each repository of the corpus.
func corpusRepos(tb testing.TB, dir string) [][2]string {
	f, err := os.Open(filepath.Join(dir, "SOURCES.md"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if m := sourceRow.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, [2]string{m[1], m[2]})
		}
	}
	if len(out) == 0 {
		tb.Fatal("SOURCES.md lists no repository")
	}
	return out
}

// layoutCache lays out $AMPLIFIER_HOME/cache under home as the runtime
// lays it after cloning each repository of the corpus at @main: a copy in
// <repo>-<sha256(url@main)[:16]>/ with a .git directory. It returns the
// map from each copy's directory to the corpus directory it copies.
func layoutCache(tb testing.TB, corpus, home string) map[string]string {
	tb.Helper()
	copies := map[string]string{}
	for _, or := range corpusRepos(tb, corpus) {
		src := filepath.Join(corpus, or[0]+"__"+or[1])
		u := compose.ParseURI("git+https://github.com/" + or[0] + "/" + or[1] + "@main")
		dst := filepath.Join(home, "cache", u.CacheDir())
		if err := copyTree(src, dst); err != nil {
			tb.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dst, ".git"), 0o755); err != nil {
			tb.Fatal(err)
		}
		copies[dst] = src
	}
	return copies
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
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
}

// bundleFiles returns every bundle file of the corpus, sorted.
func bundleFiles(tb testing.TB, corpus string) []string {
	var out []string
	err := filepath.WalkDir(corpus, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		ext := filepath.Ext(p)
		if ext != ".md" && ext != ".yaml" && ext != ".yml" {
			return nil
		}
		rel, _ := filepath.Rel(corpus, p)
		i := strings.IndexByte(rel, '/')
		if i < 0 {
			return nil
		}
		src, err := syntax.ReadFile(p, 0)
		if err != nil {
			return err
		}
		if f := bundle.Parse(p, src, bundle.Options{Rel: rel[i+1:]}); f.Kind == bundle.KindBundle {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// corpusEnv is the Env of a composition of file, standing in its directory.
func corpusEnv(home, file string) compose.Env {
	return compose.Env{WorkDir: filepath.Dir(file), AmplifierHome: home, Home: filepath.Join(home, "userhome")}
}
