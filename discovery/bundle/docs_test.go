package bundle_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle"
)

// TestDocsListCodes checks that docs/bundles.md lists every code, in its
// table of codes, with its severity.
func TestDocsListCodes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "bundles.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range bundle.Codes {
		if c.Summary == "" || c.Help == "" {
			t.Errorf("%s is not in diag.Codes, the registry of every code", c.Code)
		}
		row := "| `" + c.Code + "` | " + string(c.Severity) + " |"
		if !strings.Contains(doc, row) {
			t.Errorf("docs/bundles.md lacks the row %q", row)
		}
	}
}
