package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/amplidex/amplidex/query/lsp"
	"github.com/amplidex/amplidex/query/lsp/jsonrpc"
)

// askComposed sends amplidex/composedBundle for uri and decodes the
// answer.
func askComposed(t *testing.T, c *client, uri string) (lsp.ComposedBundle, wire) {
	t.Helper()
	r := c.call(lsp.MethodComposedBundle, map[string]any{"textDocument": map[string]any{"uri": uri}})
	var res lsp.ComposedBundle
	if r.Error == nil {
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatalf("%s: %v", r.Result, err)
		}
	}
	return res, r
}

// lineWith returns the line of text that holds every one of parts, or
// "".
func lineWith(text string, parts ...string) string {
	for line := range strings.SplitSeq(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return line
		}
	}
	return ""
}

// checkLinks fails unless every link of res covers a whole
// [label](target) of its line and targets a file URI.
func checkLinks(t *testing.T, res lsp.ComposedBundle) {
	t.Helper()
	lines := strings.Split(res.Text, "\n")
	for _, l := range res.Links {
		if l.Line >= len(lines) {
			t.Errorf("link %+v is past the text's %d lines", l, len(lines))
			continue
		}
		u := utf16.Encode([]rune(lines[l.Line]))
		if l.Start < 0 || l.End > len(u) || l.Start >= l.End {
			t.Errorf("link %+v is outside its line %q", l, lines[l.Line])
			continue
		}
		s := string(utf16.Decode(u[l.Start:l.End]))
		if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, ")") || !strings.HasPrefix(l.Target, "file://") {
			t.Errorf("link %+v covers %q, not a [label](target) to a file", l, s)
		}
	}
}

// TestComposedBundleOfBehavior: asked about a behavior, the view is of
// the root bundle that includes it, with each agent and context file,
// its file, its size and its origin as links; an unsaved edit of the
// behavior shows at once; asked about the root bundle, the view says it
// is the bundle itself; a file of no bundle repository is refused.
func TestComposedBundleOfBehavior(t *testing.T) {
	c, repo := bundleServer(t)
	c.initialize()
	behavior := filepath.Join(repo, "behaviors/review.yaml")
	uri := lsp.PathToURI(behavior)

	// Not open: read from disk.
	res, r := askComposed(t, c, uri)
	if r.Error != nil {
		t.Fatalf("composedBundle: %s", r.Error.Message)
	}
	if res.URI != uri || res.Bundle != lsp.PathToURI(filepath.Join(repo, "bundle.md")) {
		t.Errorf("uri %s, bundle %s: want the behavior, composed as the root bundle", res.URI, res.Bundle)
	}
	for _, want := range []string{
		"# Composed bundle `demo` 1.0.0",
		"the repository's root bundle [bundle.md](",
		"which includes this file",
		"characters / 4",
		"\nNothing to mount in: session, providers, tools, hooks.\n",
		"\n## Includes\n", "\n## Agents\n", "\n## Context\n", "\n## Size\n",
	} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the view lacks %q:\n%s", want, res.Text)
		}
	}
	// The context file: its file, its size ("Be kind.\n": 9 bytes, 9
	// characters) and the behavior's line that includes it.
	if line := lineWith(res.Text, "`demo:context/guide.md`", "[context/guide.md](", "9 bytes, ~2 tokens", "[behaviors/review.yaml:10]("); line == "" {
		t.Errorf("no line shows the context file with its size and origin:\n%s", res.Text)
	}
	agent := read(t, filepath.Join(repo, "agents/reviewer.md"))
	if line := lineWith(res.Text, "`demo:reviewer`", "[agents/reviewer.md](", itoa(len(agent))+" bytes"); line == "" {
		t.Errorf("no line shows the agent with its file and size:\n%s", res.Text)
	}
	var toBehavior bool
	for _, l := range res.Links {
		toBehavior = toBehavior || l.Target == uri && l.TargetLine == 10
	}
	if !toBehavior {
		t.Errorf("no link goes to line 10 of the behavior: %+v", res.Links)
	}
	checkLinks(t, res)

	// An unsaved edit of the behavior: a tool.
	edited := read(t, behavior) + "tools:\n  - module: tool-grep\n    source: git+https://example.com/tool-grep@main\n"
	c.open(uri, edited)
	res, r = askComposed(t, c, uri)
	if r.Error != nil {
		t.Fatalf("composedBundle: %s", r.Error.Message)
	}
	if !strings.Contains(res.Text, "\nNothing to mount in: session, providers, hooks.\n") || !strings.Contains(res.Text, "\n## Tools\n") {
		t.Errorf("the view does not list the tools now:\n%s", res.Text)
	}
	if line := lineWith(res.Text, "`tool-grep`", "[behaviors/review.yaml:12]("); line == "" {
		t.Errorf("the unsaved tool is not in the view with its origin:\n%s", res.Text)
	}
	checkLinks(t, res)

	// The root bundle itself.
	res, r = askComposed(t, c, lsp.PathToURI(filepath.Join(repo, "bundle.md")))
	if r.Error != nil {
		t.Fatalf("composedBundle: %s", r.Error.Message)
	}
	if !strings.Contains(res.Text, "for this bundle, the repository's root bundle") || !strings.Contains(res.Text, "`tool-grep`") {
		t.Errorf("the root bundle's view does not say it is the bundle, or misses the open behavior's tool:\n%s", res.Text)
	}

	// A Markdown file of no bundle repository.
	other := filepath.Join(filepath.Dir(repo), "notes.md")
	if err := os.WriteFile(other, []byte("# Notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, r = askComposed(t, c, lsp.PathToURI(other)); r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("a file of no bundle repository: %+v, want InvalidParams", r.Error)
	}
}
