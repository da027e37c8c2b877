package catalog_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle/compose"
)

var sourceRow = regexp.MustCompile("^\\| ([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+) \\| `")

// layoutCache lays out $AMPLIFIER_HOME/cache under home from the corpus at
// src as the runtime lays it after cloning each repository that
// SOURCES.md lists at @main.
func layoutCache(tb testing.TB, src, home string) {
	tb.Helper()
	f, err := os.Open(filepath.Join(src, "SOURCES.md"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := sourceRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		u := compose.ParseURI("git+https://github.com/" + m[1] + "/" + m[2] + "@main")
		dst := filepath.Join(home, "cache", u.CacheDir())
		if err := copyTree(filepath.Join(src, m[1]+"__"+m[2]), dst); err != nil {
			tb.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dst, ".git"), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
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
