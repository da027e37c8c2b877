package check_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
)

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

// TestCheckCorpus checks every repository of the corpus (includes not in
// a cache) and logs what it finds.
func TestCheckCorpus(t *testing.T) {
	dir := corpusDir(t)
	home := t.TempDir()
	if h := os.Getenv("DBG_HOME"); h != "" {
		home = h
	}
	repos, _ := os.ReadDir(dir)
	for _, r := range repos {
		if !r.IsDir() || (os.Getenv("DBG_REPO") != "" && !strings.Contains(r.Name(), os.Getenv("DBG_REPO"))) {
			continue
		}
		root := filepath.Join(dir, r.Name())
		files := &compose.DiskFiles{}
		loc := compose.Locate(compose.Env{WorkDir: root, AmplifierHome: home, Home: filepath.Join(home, "userhome")}, files)
		res := check.Check(loc, files, root, check.Options{})
		t.Logf("%s: %d files checked, %d diagnostics", r.Name(), res.FilesChecked(), len(res.Diagnostics))
		for _, d := range res.Diagnostics {
			t.Log("  " + strings.TrimPrefix(d.String(), dir+"/"))
		}
	}
}
