package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lsp"
)

// unpack writes the files of a txtar fixture under a new temporary
// directory and returns it.
func unpack(t testing.TB, name string) string {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range ar.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// newWorkspace returns a Workspace over the fixture's project and user
// roots, read in process.
func newWorkspace(dir string) *analysis.Workspace {
	return analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")}),
		analysis.WorkspaceOptions{Project: filepath.Join(dir, "project")})
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const devProfile = "work/mine/profiles/dev.md"

// cursor returns the position just after the first occurrence of marker in
// text (UTF-16 columns).
func cursor(t *testing.T, text, marker string) diag.Position {
	t.Helper()
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("marker %q not in text", marker)
	}
	return syntax.NewLineIndex([]byte(text)).Position(i + len(marker))
}

// TestBrokenAgentThroughTheServer drives the real Workspace through the
// protocol: a broken agent gets its diagnostic at the right column, UTF-16
// or UTF-8, with an emoji and CJK before it, and the fix clears it.
func TestBrokenAgentThroughTheServer(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	path := filepath.Join(dir, "work/mine/agents/helper.md")
	uri := lsp.PathToURI(path)
	text := "---\nmeta: {description: \"😀漢字\", name: helper, colour: x}\n---\nBody.\n"
	tests := []struct {
		name      string
		encodings []string
		col       int // where "colour" starts in the client's encoding
	}{
		{"utf-16", nil, 42},
		{"utf-8", []string{"utf-8"}, 48},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := startServer(t, newWorkspace(dir), fastOpts())
			c.initialize(tc.encodings...)
			c.open(uri, text)
			p := c.diagnostics(uri)
			var found bool
			for _, d := range p.Diagnostics {
				if d.Code == diag.CodeUnknownKey {
					found = true
					if want := rng(1, tc.col, 1, tc.col+len("colour")); d.Range != want {
						t.Errorf("unknown key at %+v, want %+v", d.Range, want)
					}
				}
			}
			if !found {
				t.Fatalf("no %s among %+v", diag.CodeUnknownKey, p.Diagnostics)
			}
			c.changeRange(uri, 2, rng(1, tc.col-2, 1, tc.col+len("colour: x")), "")
			if p := c.diagnostics(uri); len(p.Diagnostics) != 0 || *p.Version != 2 {
				t.Fatalf("after the fix: %+v, want none for version 2", p)
			}
		})
	}
}

// TestOpeningABufferRechecksTheOthers: a profile extending one that exists
// only as an unsaved buffer is fixed when that buffer opens, and broken
// again when it closes.
func TestOpeningABufferRechecksTheOthers(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	dev := filepath.Join(dir, devProfile)
	draft := filepath.Join(dir, "work/mine/profiles/draft.md")
	devURI, draftURI := lsp.PathToURI(dev), lsp.PathToURI(draft)
	c := startServer(t, newWorkspace(dir), fastOpts())
	c.initialize()
	c.open(devURI, strings.Replace(read(t, dev), "foundation:base", "draft", 1))
	if p := c.diagnostics(devURI); len(p.Diagnostics) != 1 || p.Diagnostics[0].Code != diag.CodeExtendsUnresolved {
		t.Fatalf("before the draft opens: %+v", p.Diagnostics)
	}
	c.open(draftURI, "---\nprofile:\n  name: draft\n  version: 1.0.0\n  description: d\n  extends: foundation:base\n---\n")
	if p := c.diagnostics(devURI); len(p.Diagnostics) != 0 {
		t.Fatalf("with the draft open: %+v, want none", p.Diagnostics)
	}
	c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": draftURI}})
	if p := c.diagnostics(devURI); len(p.Diagnostics) != 1 {
		t.Fatalf("after the draft closed unsaved: %+v, want the extends unresolved again", p.Diagnostics)
	}
}
