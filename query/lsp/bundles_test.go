package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lsp"
)

// bundleServer serves the bundle repository of testdata/bundles.txtar,
// read in process with the fixture's home, and returns the client and
// the repository's directory.
func bundleServer(t *testing.T) (*client, string) {
	t.Helper()
	dir := unpack(t, "bundles.txtar")
	home := filepath.Join(dir, "home")
	w := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: home}),
		analysis.WorkspaceOptions{Bundles: bundleEnv(home)})
	return startServer(t, w, lsp.Options{}), filepath.Join(dir, "repo")
}

// codes lists a publication's diagnostics as "code@line".
func codes(p published) []string {
	var out []string
	for _, d := range p.Diagnostics {
		out = append(out, d.Code+"@"+itoa(d.Range.Start.Line))
	}
	return out
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// waitCodes waits for a publication for uri whose diagnostics are want
// (none: an empty list), skipping others; a correct server gets there
// within waitFor.
func (c *client) waitCodes(uri string, want ...string) published {
	c.t.Helper()
	for {
		p := c.diagnostics(uri)
		if strings.Join(codes(p), " ") == strings.Join(want, " ") {
			return p
		}
	}
}

// TestBundleDiagnosticsAsYouType: a behavior's misspelt agent name is
// reported on its line as it is typed, and cleared when fixed; an
// include of a behavior not yet saved resolves to its buffer.
func TestBundleDiagnosticsAsYouType(t *testing.T) {
	c, repo := bundleServer(t)
	c.initialize()
	behavior := filepath.Join(repo, "behaviors/review.yaml")
	uri := lsp.PathToURI(behavior)
	text := read(t, behavior)
	c.open(uri, text)
	c.waitCodes(uri)
	c.changeAll(uri, 2, strings.Replace(text, "- demo:reviewer", "- demo:reviewr", 1))
	p := c.waitCodes(uri, "bundle/agent-unresolved@6")
	if m := p.Diagnostics[0].Message; !strings.Contains(m, "demo:reviewr") {
		t.Errorf("message %q does not name the agent", m)
	}
	c.changeAll(uri, 3, text)
	c.waitCodes(uri)

	// The root bundle includes a behavior that exists only as a buffer.
	root := filepath.Join(repo, "bundle.md")
	rootURI := lsp.PathToURI(root)
	rootText := strings.Replace(read(t, root), "demo:behaviors/review", "demo:behaviors/fresh", 1)
	c.open(rootURI, rootText)
	c.waitCodes(rootURI, "bundle/include-unresolved@6")
	freshURI := lsp.PathToURI(filepath.Join(repo, "behaviors/fresh.yaml"))
	c.open(freshURI, "bundle:\n  name: fresh\n  version: 1.0.0\n  description: Not saved yet\n")
	c.waitCodes(rootURI)
}

// TestWatchedFiles: a client that registers watched files dynamically is
// asked to watch amplidex's files; deleting an included behavior on disk
// puts a diagnostic on the open bundle.md with no edit, and restoring it
// clears it.
func TestWatchedFiles(t *testing.T) {
	c, repo := bundleServer(t)
	r := c.call("initialize", map[string]any{"processId": nil, "capabilities": map[string]any{
		"workspace": map[string]any{"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true}}}})
	if r.Error != nil {
		t.Fatal(r.Error.Message)
	}
	c.notify("initialized", map[string]any{})
	var reg wire
	for reg = c.read(); reg.Method != "client/registerCapability"; reg = c.read() {
	}
	var params struct {
		Registrations []struct {
			Method          string `json:"method"`
			RegisterOptions struct {
				Watchers []struct {
					GlobPattern string `json:"globPattern"`
				} `json:"watchers"`
			} `json:"registerOptions"`
		} `json:"registrations"`
	}
	if err := json.Unmarshal(reg.Params, &params); err != nil {
		t.Fatal(err)
	}
	var globs []string
	for _, r := range params.Registrations {
		if r.Method != "workspace/didChangeWatchedFiles" {
			t.Errorf("registered %s", r.Method)
		}
		for _, w := range r.RegisterOptions.Watchers {
			globs = append(globs, w.GlobPattern)
		}
	}
	if got, want := strings.Join(globs, " "), "**/*.md **/*.yaml **/*.yml **/*.toml **/*.lock"; got != want {
		t.Errorf("watched %q, want %q", got, want)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": reg.ID, "result": nil})

	root := filepath.Join(repo, "bundle.md")
	rootURI := lsp.PathToURI(root)
	c.open(rootURI, read(t, root))
	c.waitCodes(rootURI)

	behavior := filepath.Join(repo, "behaviors/review.yaml")
	saved := read(t, behavior)
	if err := os.Remove(behavior); err != nil {
		t.Fatal(err)
	}
	c.notify("workspace/didChangeWatchedFiles", map[string]any{"changes": []map[string]any{{"uri": lsp.PathToURI(behavior), "type": 3}}})
	c.waitCodes(rootURI, "bundle/include-unresolved@6")

	if err := os.WriteFile(behavior, []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	c.notify("workspace/didChangeWatchedFiles", map[string]any{"changes": []map[string]any{{"uri": lsp.PathToURI(behavior), "type": 1}}})
	p := c.waitCodes(rootURI)
	if p.Diagnostics == nil {
		t.Error("the problems went away with null, not an empty list")
	}
}

// TestNoWatchRegistrationWithoutDynamicRegistration: a client that cannot
// register watched files dynamically is not asked to.
func TestNoWatchRegistrationWithoutDynamicRegistration(t *testing.T) {
	c, _ := bundleServer(t)
	c.initialize()
	if r := c.call("shutdown", nil); r.Error != nil {
		t.Fatal(r.Error.Message)
	}
	c.notify("exit", nil)
	if err := c.serveResult(); err != nil {
		t.Fatal(err)
	}
	// Everything the server wrote, to the end of its output.
	sent := c.queue
	for m := range c.msgs {
		sent = append(sent, m)
	}
	for _, m := range sent {
		if m.Method == "client/registerCapability" {
			t.Errorf("asked a client without dynamic registration to register %s", m.Params)
		}
	}
}

// bundleEnv is where a test's bundles are looked for: its home's
// .amplifier, no well-known names.
func bundleEnv(home string) compose.Env {
	return compose.Env{Home: home, AmplifierHome: filepath.Join(home, ".amplifier"), NoWellKnown: true}
}

// TestBundleNavigation: completion in `- bundle: demo:` offers the
// repository's behaviors, in agents.include its agents; definition on
// an include opens the behavior, on an agent name its file; hover on an
// include names the file and its namespace.
func TestBundleNavigation(t *testing.T) {
	c, repo := bundleServer(t)
	c.initialize()
	root := filepath.Join(repo, "bundle.md")
	uri := lsp.PathToURI(root)
	text := strings.Replace(read(t, root), "  - bundle: demo:behaviors/review\n", "  - bundle: demo:behaviors/review\n  - bundle: demo:\n", 1)
	c.open(uri, text)
	doc := func(line, char int) map[string]any {
		return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": line, "character": char}}
	}

	labels := func(r wire) []string {
		var list struct {
			Items []struct {
				Label string `json:"label"`
			} `json:"items"`
		}
		if err := json.Unmarshal(r.Result, &list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range list.Items {
			out = append(out, it.Label)
		}
		return out
	}
	if got := labels(c.call("textDocument/completion", doc(7, len("  - bundle: demo:")))); !slices.Contains(got, "demo:behaviors/review") {
		t.Errorf("completion of an include offers %q, not demo:behaviors/review", got)
	}
	c.changeAll(uri, 2, read(t, root))
	if got := labels(c.call("textDocument/completion", doc(9, len("    - demo:")))); !slices.Equal(got, []string{"demo:reviewer"}) {
		t.Errorf("completion of an agent offers %q, want [demo:reviewer]", got)
	}

	var locs []struct {
		URI string `json:"uri"`
	}
	r := c.call("textDocument/definition", doc(6, 20))
	if err := json.Unmarshal(r.Result, &locs); err != nil || len(locs) != 1 || locs[0].URI != lsp.PathToURI(filepath.Join(repo, "behaviors/review.yaml")) {
		t.Errorf("definition on the include: %s (%v)", r.Result, err)
	}
	r = c.call("textDocument/definition", doc(9, 10))
	if err := json.Unmarshal(r.Result, &locs); err != nil || len(locs) != 1 || locs[0].URI != lsp.PathToURI(filepath.Join(repo, "agents/reviewer.md")) {
		t.Errorf("definition on the agent: %s (%v)", r.Result, err)
	}

	r = c.call("textDocument/hover", doc(6, 20))
	var h struct {
		Contents struct {
			Value string `json:"value"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(r.Result, &h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{filepath.Join(repo, "behaviors/review.yaml"), "namespace `demo`"} {
		if !strings.Contains(h.Contents.Value, want) {
			t.Errorf("hover %q does not say %q", h.Contents.Value, want)
		}
	}
}
