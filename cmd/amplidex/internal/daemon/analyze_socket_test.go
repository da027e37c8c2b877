package daemon_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
)

// TestAnalyzeWorkingCopyOverSocket: an editor's buffer of a collection no
// root holds (a working copy) is analyzed over the socket: its broken
// agent is reported, not a failed handler.
func TestAnalyzeWorkingCopyOverSocket(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "tools"), "tools", "1.0.0")
	wc := filepath.Join(e.dir, "work", "mine")
	e.collection(wc, "mine", "1.0.0")
	e.start()
	c := e.client()
	var res query.AnalyzeResult
	err := callWithin(t, c, time.Minute, query.MethodAnalyze.Name(), query.AnalyzeParams{
		Common: query.Common{Project: e.project}, Op: query.OpDiagnose,
		Path: filepath.Join(wc, "agents", "helper.md"), Text: "---\nmeta: [unclosed\n---\n"}, &res)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) == 0 {
		t.Error("the broken agent of the working copy is not reported")
	}
}
