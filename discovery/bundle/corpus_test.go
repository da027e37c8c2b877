package bundle_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// corpusDir returns $AMPLIDEX_CORPUS/bundles, or skips the test.
func corpusDir(t testing.TB) string {
	t.Helper()
	c := os.Getenv("AMPLIDEX_CORPUS")
	if c == "" {
		t.Skip("AMPLIDEX_CORPUS is not set: the bundle corpus tests are skipped")
	}
	dir := filepath.Join(c, "bundles")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no bundle corpus at %s: %v", dir, err)
	}
	return dir
}

// TestParseCorpus parses every file of the bundle corpus: none panics, and
// each kind is found.
func TestParseCorpus(t *testing.T) {
	dir := corpusDir(t)
	kinds := map[bundle.Kind]int{}
	recipes := 0
	var diags []diag.Diagnostic
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		ext := filepath.Ext(p)
		if ext != ".md" && ext != ".yaml" && ext != ".yml" {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = rel[strings.IndexByte(rel, '/')+1:]
		src, err := syntax.ReadFile(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		f := bundle.Parse(p, src, bundle.Options{Rel: rel})
		kinds[f.Kind]++
		if f.Kind == bundle.KindRecipe {
			whole := bundle.ParseWhole(p, src, bundle.Options{Rel: rel})
			if a, b := fmt.Sprint(f.Diagnostics), fmt.Sprint(whole.Diagnostics); a != b || fmt.Sprint(f.Recipe) != fmt.Sprint(whole.Recipe) {
				t.Errorf("%s: skipping long texts changes the check:\n%s\n%s", rel, a, b)
			}
			recipes++
		}
		diags = append(diags, f.Diagnostics...)
		return nil
	})
	t.Logf("kinds: %v; %d recipes parsed both ways", kinds, recipes)
	for _, k := range []bundle.Kind{bundle.KindBundle, bundle.KindAgent, bundle.KindMode, bundle.KindSkill, bundle.KindRecipe, bundle.KindContext} {
		if kinds[k] == 0 {
			t.Errorf("no file of kind %s in the corpus", k)
		}
	}
	_ = diags
}
