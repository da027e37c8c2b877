package check_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
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

// TestCheckCorpus checks every repository of the corpus, with no cache:
// the silent failures SOURCES.md lists are found at their lines, and the
// repositories without mistakes have no error.
func TestCheckCorpus(t *testing.T) {
	dir := corpusDir(t)
	home := t.TempDir()
	want := []string{
		"microsoft__amplifier-bundle-filesystem/bundle.md:7:bundle/include-without-bundle-key",
		"ramparte__amplifier-bundle-dev-machine/bundle.md:12:bundle/include-without-bundle-key",
		"ramparte__amplifier-bundle-dev-machine/bundle.md:22:bundle/at-in-yaml",
		"ramparte__amplifier-bundle-dev-machine/behaviors/dev-machine.yaml:1:bundle/missing-name",
		"microsoft__amplifier-bundle-routing-matrix/behaviors/routing.yaml:1:bundle/missing-name",
		"microsoft__amplifier-bundle-python-dev/bundle.yaml:32:bundle/unknown-key",
		"payneio__amplifier-bundle-observers/bundle.md:6:bundle/unknown-key",
		"colombod__amplifier-bundle-notify/behaviors/desktop-notifications.yaml:23:bundle/agent-unresolved",
		"anderlpz__amplifier-bundle-adi/agents/adi-orchestrator.md:42:bundle/unknown-key",
		"microsoft__amplifier-bundle-python-dev/agents/python-dev.md:103:bundle/mention-punctuation",
		"microsoft__amplifier-foundation/agents/foundation-expert.md:173:bundle/mention-punctuation",
		"microsoft__amplifier-foundation/experiments/exp-amplifier-dev.md:24:bundle/include-unresolved",
		"microsoft__amplifier-foundation/bundles/with-anthropic.yaml:7:bundle/include-partial",
		"microsoft__amplifier-bundle-recipes/recipes/tests/fixtures/broken-recipe.yaml:4:bundle/unknown-key",
		"microsoft__amplifier-foundation/bundle.md:34:bundle/include-not-cached",
	}
	clean := []string{"microsoft__amplifier-bundle-lsp", "microsoft__amplifier-bundle-skills", "microsoft__amplifier-bundle-modes",
		"microsoft__amplifier-bundle-superpowers", "michaeljabbour__amplifier-bundle-ergonomics", "microsoft__amplifier-bundle-design-intelligence",
		"microsoft__amplifier-core", "microsoft__amplifier-bundle-redaction", "robotdad__amplifier-bundle-beads", "microsoft__amplifier-module-hook-shell",
		"sadlilas__amplifier-bundle-skills", "microsoft__amplifier", "microsoft__amplifier-bundle-routing-matrix", "colombod__amplifier-bundle-claim-guard"}
	found := map[string]bool{}
	errors := map[string]int{}
	repos, _ := os.ReadDir(dir)
	for _, r := range repos {
		if !r.IsDir() {
			continue
		}
		root := filepath.Join(dir, r.Name())
		files := &compose.DiskFiles{}
		loc := compose.Locate(compose.Env{WorkDir: root, AmplifierHome: home, Home: filepath.Join(home, "userhome")}, files)
		res := check.Check(loc, files, root, check.Options{})
		for _, d := range res.Diagnostics {
			rel, _ := filepath.Rel(dir, d.Path)
			found[fmt.Sprintf("%s:%d:%s", filepath.ToSlash(rel), d.Range.Start.Line+1, d.Code)] = true
			if d.Severity == diag.SeverityError {
				errors[r.Name()]++
			}
		}
		t.Logf("%s: %d files checked, %d diagnostics, %d errors", r.Name(), res.FilesChecked(), len(res.Diagnostics), errors[r.Name()])
	}
	for _, w := range want {
		if !found[w] {
			t.Errorf("not found: %s", w)
		}
	}
	for _, c := range clean {
		if errors[c] != 0 {
			t.Errorf("%s has %d errors; it has none", c, errors[c])
		}
	}
	if t.Failed() {
		for f := range found {
			t.Log(strings.TrimSpace(f))
		}
	}
}
