package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/amplidex/amplidex/discovery/diag"
)

// corpusSessions starts a daemon over the corpus and two language
// servers: one answering through it (UTF-8 columns), one in process
// (UTF-16). It returns them and the user's home, whose collections root
// links to the corpus's collections.
func corpusSessions(t *testing.T) (viaDaemon, inProcess *lspSession, home, corpus string) {
	t.Helper()
	cd := startCorpusDaemon(t)
	home, corpus = cd.home, cd.corpus
	viaDaemon, inProcess = startLSP(t, cd.env, "utf-8"), startLSP(t, cd.solo)
	t.Cleanup(func() {
		if log := viaDaemon.stderr.String(); !strings.Contains(log, "answering through the daemon") || strings.Contains(log, "does not answer") {
			t.Errorf("the daemon-backed session did not answer through the daemon:\n%s", log)
		}
	})
	return viaDaemon, inProcess, home, corpus
}

// wireEdit is a text edit as the server sends it.
type wireEdit struct {
	Range   diag.Range `json:"range"`
	NewText string     `json:"newText"`
}

// wireAction is a code action as the server sends it.
type wireAction struct {
	Title       string           `json:"title"`
	Kind        string           `json:"kind"`
	IsPreferred bool             `json:"isPreferred"`
	Diagnostics []wireDiagnostic `json:"diagnostics"`
	Edit        struct {
		Changes map[string][]wireEdit `json:"changes"`
	} `json:"edit"`
}

// offsetIn returns the byte offset of a position counted in bytes (utf8)
// or in UTF-16 units on its line.
func offsetIn(text string, p diag.Position, utf8Cols bool) int {
	off := 0
	for range p.Line {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	line := text[off:]
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	if utf8Cols {
		return off + min(p.Character, len(line))
	}
	units := 0
	for i, r := range line {
		if units >= p.Character {
			return off + i
		}
		units += len(utf16.Encode([]rune{r}))
	}
	return off + len(line)
}

// positionOf returns the position of the first occurrence of marker in
// text, plus skip bytes, in the session's encoding.
func positionOf(text, marker string, skip int, utf8Cols bool) diag.Position {
	i := strings.Index(text, marker) + skip
	line := strings.Count(text[:i], "\n")
	start := strings.LastIndexByte(text[:i], '\n') + 1
	col := i - start
	if !utf8Cols {
		col = len(utf16.Encode([]rune(text[start:i])))
	}
	return diag.Position{Line: line, Character: col}
}

// applyWire applies the edits of one document to text.
func applyWire(t *testing.T, text string, edits []wireEdit, utf8Cols bool) string {
	t.Helper()
	sort.Slice(edits, func(i, j int) bool {
		return offsetIn(text, edits[i].Range.Start, utf8Cols) > offsetIn(text, edits[j].Range.Start, utf8Cols)
	})
	for _, e := range edits {
		s, end := offsetIn(text, e.Range.Start, utf8Cols), offsetIn(text, e.Range.End, utf8Cols)
		if s > end || !utf8.ValidString(text[:s]) {
			t.Fatalf("bad edit %+v", e)
		}
		text = text[:s] + e.NewText + text[end:]
	}
	return text
}

// openSettled opens path with text as version 1 and waits for that
// version's diagnostics, so that nothing of this buffer is published
// later, after it is closed.
func (s *lspSession) openSettled(path, text string) string {
	s.t.Helper()
	uri := fileURI(path)
	s.send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": "markdown", "version": 1, "text": text}}})
	s.next(func(m map[string]json.RawMessage) bool {
		if string(m["method"]) != `"textDocument/publishDiagnostics"` {
			return false
		}
		var p struct {
			URI     string `json:"uri"`
			Version *int   `json:"version"`
		}
		_ = json.Unmarshal(m["params"], &p)
		return p.URI == uri && p.Version != nil && *p.Version == 1
	})
	return uri
}

// TestLSPEditsOnTheCorpus: on real collections, through the daemon and
// in process, completion offers the schema's keys and values, hover
// describes keys, each code action makes the edit it names (applied, the
// text is what was meant, and the diagnostic it fixes is gone), and
// references find who extends a bundled profile.
func TestLSPEditsOnTheCorpus(t *testing.T) {
	viaDaemon, inProcess, home, corpus := corpusSessions(t)
	collections := filepath.Join(home, ".amplifier", "collections")
	devSB := filepath.Join(collections, "Joi__amplifier-collection-switchboard/profiles/dev-sb.md")
	sbPy := filepath.Join(collections, "Joi__amplifier-collection-switchboard/pyproject.toml")
	meta := filepath.Join(collections, "ramparte__amplifier-collection-metacognition/profiles/metacognitive.md")
	base := filepath.Join(corpus, "bundled/foundation/profiles/base.md")
	file := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	dev, py, metaText := file(devSB), file(sbPy), file(meta)
	devAgents := strings.Replace(dev, "\n---\n", "\nagents:\n  - explorer\n---\n", 1)

	actions := []struct {
		name    string
		path    string
		text    string // the buffer, with the mistake
		at      string // the cursor is one byte into its first occurrence
		title   string
		want    string // the buffer after the edit
		rewrite bool   // no diagnostic to fix
	}{
		{name: "misspelt profile", path: devSB, text: strings.Replace(dev, "toolkit:toolkit-dev", "toolkit:toolkit-dv", 1), at: "toolkit:toolkit-dv",
			title: "Change `toolkit:toolkit-dv` to `toolkit:toolkit-dev`", want: dev},
		{name: "bare profile of another collection", path: devSB, text: strings.Replace(dev, "toolkit:toolkit-dev", "toolkit-dev", 1), at: "toolkit-dev",
			title: "Change `toolkit-dev` to `toolkit:toolkit-dev`", want: dev},
		{name: "missing description", path: devSB, text: strings.Replace(dev, "  description: Personal workflow + scenario tool development\n", "", 1), at: "profile:",
			title: "Add the missing key `description`",
			want:  strings.Replace(strings.Replace(dev, "  description: Personal workflow + scenario tool development\n", "", 1), "patterns\n", "patterns\n  description: \"\"\n", 1)},
		{name: "misspelt agent", path: devSB, text: strings.Replace(devAgents, "- explorer", "- explorr", 1), at: "explorr",
			title: "Change `explorr` to `explorer`", want: devAgents},
		{name: "bare agent qualified", path: devSB, text: devAgents, at: "explorer",
			title: "Qualify as `foundation:explorer`", want: strings.Replace(devAgents, "- explorer", "- foundation:explorer", 1), rewrite: true},
		{name: "misspelt mention", path: devSB, text: strings.Replace(dev, "@sb:profiles/sb.md", "@sb:profiles/sbb.md", 1), at: "@sb:profiles/sbb",
			title: "Change `@sb:profiles/sbb.md` to `@sb:profiles/sb.md`", want: dev},
		{name: "unknown key of a real profile removed", path: meta, text: metaText, at: "inherits:",
			title: "Remove the unknown key `inherits`",
			want:  strings.Replace(metaText, "inherits:\n  - dev\n", "", 1)},
		{name: "misspelt collection key", path: sbPy, text: strings.Replace(py, "author =", "autor =", 1), at: "autor",
			title: "Change `autor` to `author`", want: py},
	}
	for _, s := range []struct {
		name string
		lsp  *lspSession
		utf8 bool
	}{{"through the daemon", viaDaemon, true}, {"in process", inProcess, false}} {
		t.Run(s.name, func(t *testing.T) {
			for _, tc := range actions {
				t.Run(tc.name, func(t *testing.T) {
					before := s.lsp.diagnose(tc.path, []byte(tc.text))
					uri := s.lsp.openSettled(tc.path, tc.text)
					pos := positionOf(tc.text, tc.at, 1, s.utf8)
					raw := s.lsp.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
						"range": diag.Range{Start: pos, End: pos}, "context": map[string]any{"diagnostics": []any{}}})
					s.lsp.send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didClose", "params": map[string]any{
						"textDocument": map[string]any{"uri": uri}}})
					var got []wireAction
					if err := json.Unmarshal(raw, &got); err != nil {
						t.Fatal(err)
					}
					i := slices.IndexFunc(got, func(a wireAction) bool { return a.Title == tc.title })
					if i < 0 {
						t.Fatalf("no action %q in %s", tc.title, raw)
					}
					a := got[i]
					after := applyWire(t, tc.text, a.Edit.Changes[uri], s.utf8)
					if after != tc.want {
						t.Fatalf("after %q:\n%s\nwant:\n%s", tc.title, after, tc.want)
					}
					fixed := s.lsp.diagnose(tc.path, []byte(after))
					if tc.rewrite {
						if a.Kind != "refactor.rewrite" || len(a.Diagnostics) != 0 || len(fixed) != len(before) {
							t.Errorf("rewrite %+v: diagnostics %v, then %v", a, before, fixed)
						}
						return
					}
					if a.Kind != "quickfix" || len(a.Diagnostics) != 1 {
						t.Fatalf("fix %+v", a)
					}
					for _, d := range fixed {
						if d.Code == a.Diagnostics[0].Code && d.Message == a.Diagnostics[0].Message {
							t.Errorf("still there after the fix: %+v", d)
						}
					}
					if len(fixed) >= len(before) {
						t.Errorf("diagnostics before: %v\nafter: %v", before, fixed)
					}
				})
			}

			text := strings.Replace(dev, "\n---\n", "\nagents: a\n\n---\n", 1)
			uri := s.lsp.openSettled(devSB, text)
			complete := func(marker string, skip int) []string {
				raw := s.lsp.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri},
					"position": positionOf(text, marker, skip, s.utf8)})
				var list struct {
					Items []struct {
						Label         string `json:"label"`
						Documentation *struct {
							Value string `json:"value"`
						} `json:"documentation"`
					} `json:"items"`
				}
				if err := json.Unmarshal(raw, &list); err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, it := range list.Items {
					if it.Documentation == nil || it.Documentation.Value == "" {
						t.Errorf("%s has no documentation", it.Label)
					}
					out = append(out, it.Label)
				}
				return out
			}
			if got, want := complete("agents: a\n", len("agents: a\n")), []string{"session", "providers", "tools", "hooks", "exclude", "ui", "task"}; !slices.Equal(got, want) {
				t.Errorf("top-level keys: %q, want %q", got, want)
			}
			if got, want := complete("agents: a", len("agents: a")), []string{"all", "none"}; !slices.Equal(got, want) {
				t.Errorf("agents values: %q, want %q", got, want)
			}
			raw := s.lsp.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri},
				"position": positionOf(text, "  extends", 4, s.utf8)})
			if !strings.Contains(string(raw), "profile.extends") || !strings.Contains(string(raw), "Parent profile") {
				t.Errorf("hover on extends: %s", raw)
			}
			s.lsp.send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didClose", "params": map[string]any{
				"textDocument": map[string]any{"uri": uri}}})

			// Who extends foundation:base.
			uri = s.lsp.openSettled(base, file(base))
			raw = s.lsp.call("textDocument/references", map[string]any{"textDocument": map[string]any{"uri": uri},
				"position": map[string]any{"line": 0, "character": 0}, "context": map[string]any{"includeDeclaration": false}})
			var locs []struct {
				URI string `json:"uri"`
			}
			if err := json.Unmarshal(raw, &locs); err != nil {
				t.Fatal(err)
			}
			var found []string
			for _, l := range locs {
				found = append(found, l.URI)
			}
			for _, p := range []string{filepath.Join(collections, "Joi__amplifier-collection-switchboard/profiles/sb.md"), filepath.Join(collections, "robotdad__amplifier-collection-spec-kit/profiles/planner.md")} {
				if !slices.Contains(found, fileURI(p)) {
					t.Errorf("references to foundation:base lack %s: %q", p, found)
				}
			}
		})
	}
}
