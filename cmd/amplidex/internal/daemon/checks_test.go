package daemon_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/index"
)

// TestRestartKeepsChecks stops a daemon cleanly and starts it again: the
// second run takes the cross-reference results the first left instead of
// checking again (a result planted in what was left shows through), unless
// a file changed meanwhile.
func TestRestartKeepsChecks(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "base"), "base", "1.0.0")
	e.collection(filepath.Join(e.projectRoot(), "mine"), "mine", "1.0.0")
	d := e.start()
	c := e.client()
	before := e.diagnostics(c)
	c.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	// Plant a result in what the first run left.
	store, err := index.Open(e.paths.Index, index.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := store.Meta("checks")
	if err != nil || raw == nil {
		store.Close()
		t.Fatalf("the first run left no checks: %v", err)
	}
	var saved map[string]any
	if err := json.Unmarshal(raw, &saved); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(e.projectRoot(), "mine")
	views := saved["views"].(map[string]any)
	view := views[e.project].(map[string]any)
	cross, _ := view["cross"].(map[string]any)
	if cross == nil {
		cross = map[string]any{}
		view["cross"] = cross
	}
	cross[mine] = []diag.Diagnostic{{Code: "planted", Severity: diag.SeverityError, Path: filepath.Join(mine, "pyproject.toml"), Message: "kept from the last run"}}
	raw, _ = json.Marshal(saved)
	if err := store.SetMeta("checks", raw); err != nil {
		t.Fatal(err)
	}
	store.Close()

	planted := func(ds []diag.Diagnostic) bool {
		return slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return d.Code == "planted" })
	}
	d = e.start()
	c = e.client()
	if got := e.diagnostics(c); !planted(got) {
		t.Fatalf("the restart checked again rather than take the last run's results: %v (before: %v)", got, before)
	}
	c.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	// A file changed while no daemon ran: nothing is taken.
	e.write(filepath.Join(mine, "agents", "helper.md"), agent("helper")+"More\n")
	d = e.start()
	c = e.client()
	if got := e.diagnostics(c); planted(got) {
		t.Fatalf("the restart took results of files that changed since: %v", got)
	}
	d.Close()
}
