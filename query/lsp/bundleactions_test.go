package lsp_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lsp"
)

// TestBundleQuickFix: a behavior's agent name written with a leading @
// gets one quick fix through the server, which removes it, and
// source.fixAll makes the same fix; through a daemon, the fixes of a
// bundle document are the in-process Workspace's, as its diagnostics
// are.
func TestBundleQuickFix(t *testing.T) {
	c, repo := bundleServer(t)
	c.initialize()
	behavior := filepath.Join(repo, "behaviors/review.yaml")
	uri := lsp.PathToURI(behavior)
	text := read(t, behavior)
	broken := strings.Replace(text, "- demo:reviewer", `- "@demo:reviewer"`, 1)
	c.open(uri, broken)
	c.waitCodes(uri, "bundle/at-in-yaml@6")

	var quick []wireAction
	for _, a := range c.codeActionsOf(uri, broken, nil) {
		if a.Kind == "quickfix" {
			quick = append(quick, a)
		}
	}
	if len(quick) != 1 || quick[0].Title != "Remove the leading `@`" {
		t.Fatalf("quick fixes %+v, want one that removes the @", quick)
	}
	want := strings.Replace(text, "- demo:reviewer", `- "demo:reviewer"`, 1)
	if got := applyWire(t, broken, quick[0], uri, false); got != want {
		t.Errorf("after the quick fix:\n%s\nwant:\n%s", got, want)
	}
	all := fixAllOf(c.codeActionsOf(uri, broken, []string{"source.fixAll.amplidex"}))
	if len(all) != 1 {
		t.Fatalf("source.fixAll: %+v", all)
	}
	if got := applyWire(t, broken, all[0], uri, false); got != want {
		t.Errorf("after source.fixAll:\n%s\nwant:\n%s", got, want)
	}

	// A daemon that knows no bundle repository is not asked.
	home := filepath.Join(filepath.Dir(repo), "home")
	f := startFakeDaemon(t, home, nil)
	local := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: home}), analysis.WorkspaceOptions{Bundles: bundleEnv(home)})
	d := lsp.NewDaemonAnalyzer(f.client, local, nil)
	ctx := context.Background()
	ds := d.Diagnose(ctx, behavior, []byte(broken), nil)
	edits := d.SafeFixes(ctx, behavior, []byte(broken), nil, ds)
	if len(edits) != 1 || edits[0].NewText != "" {
		t.Errorf("SafeFixes through a daemon: %+v, want the @ removed", edits)
	}
	if calls := f.calls.take(); len(calls) != 0 {
		t.Errorf("the daemon was asked %v", calls)
	}
}
