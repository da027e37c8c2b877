package daemon_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/query"
)

// TestRapidSavesAreSeen saves one file forty times, each time of the same
// size, asking after each save: every answer shows that save, also while
// the index writer is storing the one before.
func TestRapidSavesAreSeen(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	e.start()
	c := e.client()
	helper := filepath.Join(e.userRoot(), "a", "agents", "helper.md")
	for i := range 40 {
		key := fmt.Sprintf("probe_%d", i)
		e.write(helper, "---\nmeta:\n  name: helper\n  description: H\n"+key+": 1\n---\n")
		var res query.DiagnosticsResult
		if err := e.call(c, "diagnostics", map[string]any{"path": helper}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Message, key) {
			t.Fatalf("save %d: %v", i, res.Diagnostics)
		}
	}
}
