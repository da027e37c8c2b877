package lsp_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lsp"
)

const devText = `---
profile:
  name: dev
  version: 1.0.0
  description: Development
  extends: foundation:base
agents:
  - helper
  - explorer
---
See @foundation:context/shared.md and @mine:context/notes.md.
`

// TestCodeActionsThroughTheServer drives codeAction and references
// through the protocol, in UTF-16 and UTF-8, with wide characters before
// the fix: the capabilities are advertised, the edits and the diagnostics
// they fix come in the client's encoding, and "only" filters the kinds.
func TestCodeActionsThroughTheServer(t *testing.T) {
	dir := unpack(t, "actions.txtar")
	path := filepath.Join(dir, "project/.amplifier/collections/mine/profiles/dev.md")
	uri := lsp.PathToURI(path)
	text := strings.Replace(devText, "See @foundation:context/shared.md", "See 😀 漢字 @foundation:context/shard.md", 1)
	line := 10 // the line of the misspelt mention
	tests := []struct {
		name      string
		encodings []string
	}{
		{"utf-16", nil},
		{"utf-8", []string{"utf-8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")}),
				analysis.WorkspaceOptions{Project: filepath.Join(dir, "project")})
			c := startServer(t, w, fastOpts())
			caps := c.initialize(tc.encodings...)["capabilities"].(map[string]any)
			if caps["referencesProvider"] != true {
				t.Errorf("referencesProvider = %v", caps["referencesProvider"])
			}
			if kinds := fmt.Sprint(caps["codeActionProvider"]); !strings.Contains(kinds, "quickfix") || !strings.Contains(kinds, "refactor.rewrite") {
				t.Errorf("codeActionProvider = %v", kinds)
			}
			c.open(uri, text)
			p := c.diagnostics(uri)
			if len(p.Diagnostics) != 1 || p.Diagnostics[0].Code != diag.CodeMentionUnresolved || p.Diagnostics[0].Range.Start.Line != line {
				t.Fatalf("diagnostics: %+v", p.Diagnostics)
			}
			got := p.Diagnostics[0]
			if want := map[bool]int{false: 10, true: 16}[tc.encodings != nil]; got.Range.Start.Character != want {
				t.Errorf("the mention starts at column %d, want %d", got.Range.Start.Character, want)
			}
			r := c.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
				"range": got.Range, "context": map[string]any{"diagnostics": []any{got}, "only": []string{"quickfix"}}})
			var actions []struct {
				Title       string
				Kind        string
				IsPreferred bool
				Diagnostics []struct {
					Range diag.Range
					Code  string
				}
				Edit struct {
					Changes map[string][]struct {
						Range   diag.Range
						NewText string
					}
				}
			}
			if err := json.Unmarshal(r.Result, &actions); err != nil || len(actions) != 1 {
				t.Fatalf("codeAction: %s (%v)", r.Result, err)
			}
			a := actions[0]
			edits := a.Edit.Changes[uri]
			if a.Title != "Change `@foundation:context/shard.md` to `@foundation:context/shared.md`" || a.Kind != "quickfix" || !a.IsPreferred ||
				len(edits) != 1 || len(a.Diagnostics) != 1 || a.Diagnostics[0].Range != got.Range || a.Diagnostics[0].Code != got.Code {
				t.Fatalf("action: %s", r.Result)
			}
			if edits[0].Range != got.Range || edits[0].NewText != "@foundation:context/shared.md" {
				t.Errorf("edit %+v, want the mention's range %+v", edits[0], got.Range)
			}

			// The rewrite on "explorer" is no quick fix.
			at := map[string]any{"line": 8, "character": 5}
			r = c.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
				"range": map[string]any{"start": at, "end": at}, "context": map[string]any{"diagnostics": []any{}, "only": []string{"quickfix"}}})
			if string(r.Result) != "[]" {
				t.Errorf("quick fixes on explorer: %s", r.Result)
			}
			r = c.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
				"range": map[string]any{"start": at, "end": at}, "context": map[string]any{"diagnostics": []any{}, "only": []string{"refactor"}}})
			if !strings.Contains(string(r.Result), "Qualify as `foundation:explorer`") {
				t.Errorf("rewrites on explorer: %s", r.Result)
			}

			// References to the profile dev extends, from its value.
			r = c.call("textDocument/references", map[string]any{"textDocument": map[string]any{"uri": uri},
				"position": map[string]any{"line": 5, "character": 14}, "context": map[string]any{"includeDeclaration": false}})
			var locs []struct {
				URI   string
				Range diag.Range
			}
			if err := json.Unmarshal(r.Result, &locs); err != nil || len(locs) != 2 || locs[1].URI != uri || locs[1].Range.Start != (diag.Position{Line: 5, Character: 11}) {
				t.Errorf("references: %s (%v)", r.Result, err)
			}
		})
	}
}
