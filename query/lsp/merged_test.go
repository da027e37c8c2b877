package lsp_test

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lsp"
	"github.com/amplidex/amplidex/query/lsp/jsonrpc"
)

const (
	mergedDev  = "project/.amplifier/collections/mine/profiles/dev.md"
	mergedMid  = "project/.amplifier/collections/foundation/profiles/mid.md"
	mergedBase = "project/.amplifier/collections/foundation/profiles/base.md"
)

// newMergedWorkspace returns a Workspace over the merged.txtar project,
// read in process.
func newMergedWorkspace(dir string) *analysis.Workspace {
	return analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")}),
		analysis.WorkspaceOptions{Project: filepath.Join(dir, "project")})
}

// askMerged sends amplidex/mergedProfile for uri and decodes the answer.
func askMerged(t *testing.T, c *client, uri string) (lsp.MergedProfileResult, wire) {
	t.Helper()
	r := c.call(lsp.MethodMergedProfile, map[string]any{"textDocument": map[string]any{"uri": uri}})
	var res lsp.MergedProfileResult
	if r.Error == nil {
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatalf("%s: %v", r.Result, err)
		}
	}
	return res, r
}

// sourceOf returns the sources of the key written as a dotted path.
func sourceOf(res lsp.MergedProfileResult, key string) (query.KeySource, bool) {
	for _, s := range res.Sources {
		if strings.Join(s.Key, ".") == key {
			return s, true
		}
	}
	return query.KeySource{}, false
}

// commented reports whether text has a line that is content and a
// comment saying it comes from the profiles from.
func commented(text, content, from string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		before, comment, ok := strings.Cut(line, "  # ")
		if ok && strings.TrimRight(before, " ") == content && comment == "from "+from {
			return true
		}
	}
	return false
}

// mergedDevWant is the effective profile of dev.md once the editor has
// set ui.show_thinking in its buffer and max_turns in mid.md's.
const mergedDevWant = `# Effective profile of mine:dev, unsaved edits included.
# extends chain: mine:dev → foundation:mid → foundation:base
---
profile:                        # from mine:dev
  name: dev                     # from mine:dev
  version: 1.0.0                # from mine:dev
  description: Development      # from mine:dev
  extends: foundation:mid       # from mine:dev
session:                        # from foundation:mid, foundation:base
  orchestrator:                 # from foundation:mid, foundation:base
    module: loop-basic          # from foundation:base
    config:                     # from foundation:mid
      max_turns: 30             # from foundation:mid
  context:                      # from foundation:base
    module: context-simple      # from foundation:base
providers:                      # from foundation:base
  - module: provider-anthropic  # from foundation:base
    config:                     # from foundation:base
      model: sonnet             # from foundation:base
tools:                          # from mine:dev, foundation:mid
  - module: tool-filesystem     # from mine:dev
    config:                     # from mine:dev
      root: /src                # from mine:dev
  - module: tool-web            # from foundation:mid
ui:                             # from mine:dev, foundation:base
  show_thinking: false          # from mine:dev
  theme: dark                   # from foundation:base
agents:                         # from mine:dev
  - helper
---
`

// TestMergedProfileFollowsTheBuffers: the merged profile of an open
// profile is its whole chain merged over the unsaved buffers (its own and
// its parent's), each key saying where it comes from, and a change to
// either buffer shows in the next answer.
func TestMergedProfileFollowsTheBuffers(t *testing.T) {
	dir := unpack(t, "merged.txtar")
	c := startServer(t, newMergedWorkspace(dir), fastOpts())
	c.initialize()
	dev, mid := filepath.Join(dir, mergedDev), filepath.Join(dir, mergedMid)
	uri := lsp.PathToURI(dev)
	c.open(uri, read(t, dev))

	res, r := askMerged(t, c, uri)
	if r.Error != nil {
		t.Fatalf("error: %+v", r.Error)
	}
	if !res.Complete || res.Problem != "" || res.URI != uri {
		t.Errorf("complete %v, problem %q, uri %s", res.Complete, res.Problem, res.URI)
	}
	wantChain := []lsp.MergedLink{{ID: "mine:dev", URI: uri}, {ID: "foundation:mid", URI: lsp.PathToURI(mid)},
		{ID: "foundation:base", URI: lsp.PathToURI(filepath.Join(dir, mergedBase))}}
	if !slices.Equal(res.Chain, wantChain) {
		t.Errorf("chain %+v, want %+v", res.Chain, wantChain)
	}
	if !commented(res.Text, "      max_turns: 20", "foundation:mid") ||
		!commented(res.Text, "  show_thinking: true", "foundation:base") ||
		strings.Contains(res.Text, "tool-bash") {
		t.Errorf("before the edits:\n%s", res.Text)
	}

	// The profile's own buffer changes, and so does its parent's, unsaved.
	c.changeAll(uri, 2, strings.Replace(read(t, dev), "agents:", "ui:\n  show_thinking: false\nagents:", 1))
	c.open(lsp.PathToURI(mid), strings.Replace(read(t, mid), "max_turns: 20", "max_turns: 30", 1))
	res, r = askMerged(t, c, uri)
	if r.Error != nil {
		t.Fatalf("error: %+v", r.Error)
	}
	if res.Text != mergedDevWant {
		t.Errorf("after the edits:\n%s\nwant:\n%s", res.Text, mergedDevWant)
	}

	// Sources name each key's line in the text.
	lines := strings.Split(res.Text, "\n")
	for key, want := range map[string]struct {
		line string
		from []string
	}{
		"session.orchestrator.config.max_turns": {"      max_turns: 30", []string{"foundation:mid"}},
		"ui":                                    {"ui:", []string{"mine:dev", "foundation:base"}},
		"ui.theme":                              {"  theme: dark", []string{"foundation:base"}},
		"tools.tool-web.module":                 {"  - module: tool-web", []string{"foundation:mid"}},
		"agents":                                {"agents:", []string{"mine:dev"}},
	} {
		s, ok := sourceOf(res, key)
		if !ok {
			t.Errorf("no source for %s: %+v", key, res.Sources)
			continue
		}
		if s.Line >= len(lines) || !strings.HasPrefix(lines[s.Line], want.line+" ") || !slices.Equal(s.From, want.from) {
			t.Errorf("%s: line %d (%q) from %v, want %q from %v", key, s.Line, lines[min(s.Line, len(lines)-1)], s.From, want.line, want.from)
		}
	}
	if n := strings.Count(res.Text, "# from "); n != len(res.Sources) {
		t.Errorf("%d comments, %d sources", n, len(res.Sources))
	}

	// What is between the --- lines is the merged front matter, as YAML.
	body := strings.SplitN(res.Text, "---\n", 3)[1]
	var got map[string]any
	if err := yaml.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("the merged text is not YAML: %v\n%s", err, body)
	}
	if ui, _ := got["ui"].(map[string]any); ui["show_thinking"] != false || ui["theme"] != "dark" {
		t.Errorf("decoded ui: %v", got["ui"])
	}
}

// TestMergedProfileIncomplete: a chain that does not reach its root, or a
// buffer whose front matter does not parse, says so; what resolved is
// still merged.
func TestMergedProfileIncomplete(t *testing.T) {
	dir := unpack(t, "merged.txtar")
	c := startServer(t, newMergedWorkspace(dir), fastOpts())
	c.initialize()
	dev := filepath.Join(dir, mergedDev)
	uri := lsp.PathToURI(dev)
	c.open(uri, strings.Replace(read(t, dev), "foundation:mid", "foundation:gone", 1))
	res, r := askMerged(t, c, uri)
	if r.Error != nil {
		t.Fatalf("error: %+v", r.Error)
	}
	if res.Complete || !strings.Contains(res.Problem, `extends "foundation:gone" of mine:dev does not resolve`) ||
		!strings.Contains(res.Text, "# INCOMPLETE: ") || !commented(res.Text, "      root: /src", "mine:dev") ||
		len(res.Chain) != 1 {
		t.Errorf("unresolved parent: %+v\n%s", res, res.Text)
	}

	c.changeAll(uri, 2, "---\nprofile: [\n---\n")
	res, r = askMerged(t, c, uri)
	if r.Error != nil {
		t.Fatalf("error: %+v", r.Error)
	}
	if res.Complete || !strings.Contains(res.Text, "mine:dev has no usable front matter") || len(res.Sources) != 0 {
		t.Errorf("broken front matter: %+v\n%s", res, res.Text)
	}
}

// TestMergedProfileOfFiles: a profile that is not open is read from disk;
// a profile in no collection follows its qualified extends; a file that
// is not a profile, and an analyzer that merges nothing, get errors.
func TestMergedProfileOfFiles(t *testing.T) {
	dir := unpack(t, "merged.txtar")
	c := startServer(t, newMergedWorkspace(dir), fastOpts())
	c.initialize()

	res, r := askMerged(t, c, lsp.PathToURI(filepath.Join(dir, mergedMid)))
	if r.Error != nil || len(res.Chain) != 2 || res.Chain[1].ID != "foundation:base" || !res.Complete ||
		!commented(res.Text, "  - module: tool-web", "foundation:mid") {
		t.Errorf("a profile that is not open: %+v %+v\n%s", r.Error, res.Chain, res.Text)
	}

	res, r = askMerged(t, c, lsp.PathToURI(filepath.Join(dir, "work/lone/profiles/solo.md")))
	ids := make([]string, len(res.Chain))
	for i, l := range res.Chain {
		ids[i] = l.ID
	}
	if r.Error != nil || !slices.Equal(ids, []string{"solo", "foundation:mid", "foundation:base"}) || !res.Complete ||
		!strings.Contains(res.Text, "agents: none") {
		t.Errorf("a profile in no collection: %+v %v\n%s", r.Error, ids, res.Text)
	}

	_, r = askMerged(t, c, lsp.PathToURI(filepath.Join(dir, "project/.amplifier/collections/mine/agents/helper.md")))
	if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(r.Error.Message, "is not a profile") {
		t.Errorf("an agent: %+v", r.Error)
	}

	f := startServer(t, &fake{}, fastOpts())
	f.initialize()
	_, r = askMerged(t, f, lsp.PathToURI(filepath.Join(dir, mergedMid)))
	if r.Error == nil || r.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("an analyzer without merged profiles: %+v", r.Error)
	}
}

// TestMergedProfileThroughTheDaemon: the daemon answers a merged profile
// in one analyze call, as the in-process Workspace does.
func TestMergedProfileThroughTheDaemon(t *testing.T) {
	dir := unpack(t, "merged.txtar")
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	f := startFakeDaemon(t, home, nil)
	local := &countingLocal{Local: analysis.NewLocal(analysis.LocalOptions{Home: home})}
	d := lsp.NewDaemonAnalyzer(f.client, analysis.NewWorkspace(local, analysis.WorkspaceOptions{Project: project}), nil)
	dev := filepath.Join(dir, mergedDev)
	text := []byte(strings.Replace(read(t, dev), "root: /src", "root: /elsewhere", 1))
	ctx := context.Background()
	got := d.MergedProfile(ctx, dev, text, nil)
	if calls := f.calls.take(); !maps.Equal(calls, map[string]int{query.MethodAnalyze.Name(): 1}) {
		t.Errorf("daemon calls %v, want one %s", calls, query.MethodAnalyze.Name())
	}
	if n := local.count(); n != 0 {
		t.Errorf("the in-process catalog was asked %d times", n)
	}
	want := newMergedWorkspace(dir).MergedProfile(ctx, dev, text, nil)
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) || !strings.Contains(got.Text, "root: /elsewhere") {
		t.Errorf("through the daemon:\n%s\nin process:\n%s", gj, wj)
	}
}
