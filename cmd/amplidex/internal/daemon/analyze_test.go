package daemon_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
)

// TestAnalyzeWorkingCopy asks the daemon about a buffer of a collection
// in no root (a collection's own repository): it is checked against the
// roots with its collection ahead of them, so that its references to its
// own profiles resolve.
func TestAnalyzeWorkingCopy(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "installed"), "installed", "1.0.0")
	work := filepath.Join(e.dir, "work", "mine")
	e.collection(work, "mine", "1.0.0")
	e.start()
	c := e.client()
	path := filepath.Join(work, "profiles", "dev.md")
	p := query.AnalyzeParams{Common: query.Common{Project: e.project}, Op: query.OpDiagnose, Path: path,
		Text: profile("dev", "mine:base")}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, _, err := query.Call(ctx, c, query.MethodAnalyze, p)
	if err != nil {
		t.Fatalf("analyze of a working copy's buffer: %v", err)
	}
	for _, d := range r.Diagnostics {
		t.Errorf("unexpected diagnostic: %v", d)
	}
	p.Text = profile("dev", "mine:nothing")
	if r, _, err = query.Call(ctx, c, query.MethodAnalyze, p); err != nil {
		t.Fatal(err)
	}
	if !hasCode(r.Diagnostics, "ref/extends-unresolved", "dev.md") {
		t.Fatalf("an extends of a profile the working copy lacks is not reported: %v", r.Diagnostics)
	}
}
