package analysis_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query/analysis"
)

// TestUnchangedBuffersGetTheViewsDiagnostics: a buffer that says what its
// file says gets exactly what the View gives that file — a profile with
// a suppressed diagnostic, an unsuppressed one and a comment that
// suppresses nothing, an agent, a shadowed collection's pyproject.toml
// and the root's lock file — since both compose them alike. A buffer's
// own comments, as typed, decide what it suppresses.
func TestUnchangedBuffersGetTheViewsDiagnostics(t *testing.T) {
	dir := unpack(t, "compose.txtar")
	project := filepath.Join(dir, "project")
	local := analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")})
	w := analysis.NewWorkspace(local, analysis.WorkspaceOptions{Project: project})
	ctx := context.Background()
	v, err := local.View(ctx, project)
	if err != nil {
		t.Fatal(err)
	}

	var files []string
	for _, c := range v.Set.Collections() {
		files = append(files, c.Pyproject)
		for _, r := range c.Resources {
			if r.Kind == discovery.KindProfile || r.Kind == discovery.KindAgent || r.Kind == discovery.KindContext {
				files = append(files, r.Path)
			}
		}
	}
	files = append(files, v.LockFiles()...)
	seen := map[string]bool{}
	for _, p := range files {
		text, err := os.ReadFile(p)
		if err != nil {
			continue // the user root's lock file, which does not exist
		}
		want := v.DiagnosticsUnder(p)
		got := w.Diagnose(ctx, p, text, nil)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the buffer gets\n%s\nthe View gives\n%s", p, list(got), list(want))
		}
		for _, d := range want {
			seen[d.Code] = true
		}
	}
	// The fixture holds what the comparison is about.
	for _, code := range []string{diag.CodeAgentUnknown, diag.CodeMentionUnresolved, diag.CodeSuppressUnused,
		diag.CodeUnknownKey, diag.CodeDuplicateName, diag.CodeLockPathMissing, diag.CodeLockNotLocked} {
		if !seen[code] {
			t.Errorf("no %s among the View's diagnostics of the fixture", code)
		}
	}
	if seen[diag.CodeExtendsUnresolved] {
		t.Errorf("the View reports the suppressed %s", diag.CodeExtendsUnresolved)
	}

	// The comments of the buffer as typed, not those on disk.
	dev := filepath.Join(project, ".amplifier/collections/alpha/profiles/dev.md")
	text := read(t, dev)
	edited := strings.Replace(text, "  # amplidex: ignore[ref/extends-unresolved]", "", 1)
	edited = strings.Replace(edited, "  - nobody", "  - nobody  # amplidex: ignore[ref/agent-unknown]", 1)
	got := codesOf(w.Diagnose(ctx, dev, []byte(edited), nil))
	if !slices.Contains(got, diag.CodeExtendsUnresolved) || slices.Contains(got, diag.CodeAgentUnknown) {
		t.Errorf("with the comment moved in the buffer: %v, want %s and no %s", got, diag.CodeExtendsUnresolved, diag.CodeAgentUnknown)
	}
}

func list(ds []diag.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "  %d:%d %s %s: %s\n", d.Range.Start.Line+1, d.Range.Start.Character+1, d.Severity, d.Code, d.Message)
	}
	return b.String()
}

func codesOf(ds []diag.Diagnostic) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Code
	}
	return out
}
