package discovery_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/check"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
)

// corpusDir returns $AMPLIDEX_CORPUS or skips the test.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("AMPLIDEX_CORPUS")
	if dir == "" {
		t.Skip("AMPLIDEX_CORPUS is not set; skipping the test over the real corpus")
	}
	return dir
}

// corpusSet loads the corpus as the issue lays it out: user =
// corpus/collections, bundled = corpus/bundled.
func corpusSet(t testing.TB) *resolve.Set {
	t.Helper()
	dir := corpusDir(t)
	roots := []discovery.Root{
		{Kind: discovery.RootUser, Path: filepath.Join(dir, "collections")},
		{Kind: discovery.RootBundled, Path: filepath.Join(dir, "bundled")},
	}
	loader := &discovery.Loader{}
	cols := make([][]*discovery.Collection, len(roots))
	for i, r := range roots {
		cs, err := loader.ScanRoot(r)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = cs
	}
	return resolve.NewSet(roots, cols)
}

// TestCorpusCollections compares every collection of the corpus with
// EXPECTED.md: name, version, layout, validity and the five counts.
func TestCorpusCollections(t *testing.T) {
	set := corpusSet(t)
	type want struct {
		name, version string
		layout        discovery.Layout
		valid         bool
		counts        [5]int // profiles, agents, context, scenario tools, modules
	}
	wants := map[string]want{
		"Joi__amplifier-collection-switchboard":               {"sb", "1.0.0", discovery.LayoutFlat, true, [5]int{2, 3, 2, 0, 0}},
		"microsoft__amplifier-collection-design-intelligence": {"design-intelligence", "1.0.0", discovery.LayoutFlat, true, [5]int{1, 7, 14, 0, 0}},
		"microsoft__amplifier-collection-issues":              {"amplifier-collection-issues", "0.1.1", discovery.LayoutFlat, true, [5]int{1, 0, 0, 0, 3}},
		"microsoft__amplifier-collection-recipes":             {"recipes", "0.1.0", discovery.LayoutFlat, true, [5]int{1, 2, 0, 0, 1}},
		"microsoft__amplifier-collection-toolkit":             {"toolkit", "1.0.0", discovery.LayoutFlat, true, [5]int{1, 1, 1, 2, 0}},
		"momuno__amplifier-collection-convergent-dev":         {"convergent-dev", "1.0.0", discovery.LayoutFlat, true, [5]int{1, 9, 11, 0, 0}},
		// EXPECTED counts 3 profiles: it includes profiles/README.md, which
		// discovery ruling 2 says is not a resource.
		"payneio__amplifier-collection-issues": {"payne-amplifier", "0.1.1", discovery.LayoutNested, true, [5]int{2, 0, 0, 0, 2}},
		// No pyproject.toml: reported (Missing pyproject.toml), resolves
		// nowhere (discovery ruling 6); the resources are still listed.
		"ramparte__amplifier-collection-dev-memory":       {"ramparte__amplifier-collection-dev-memory", "", discovery.LayoutFlat, false, [5]int{0, 1, 5, 0, 0}},
		"ramparte__amplifier-collection-html-tools":       {"html-tools", "1.0.0", discovery.LayoutFlat, true, [5]int{0, 1, 4, 0, 0}},
		"ramparte__amplifier-collection-metacognition":    {"metacognition", "0.1.0", discovery.LayoutFlat, true, [5]int{1, 4, 3, 0, 0}},
		"ramparte__amplifier-collection-superpowers":      {"ramparte__amplifier-collection-superpowers", "", discovery.LayoutFlat, false, [5]int{0, 9, 3, 0, 0}},
		"robotdad__amplifier-collection-ddd":              {"ddd", "1.0.0", discovery.LayoutFlat, true, [5]int{2, 5, 12, 0, 0}},
		"robotdad__amplifier-collection-recipes":          {"recipes", "0.1.0", discovery.LayoutFlat, true, [5]int{1, 1, 0, 0, 1}},
		"robotdad__amplifier-collection-spec-kit":         {"spec-kit", "1.0.0", discovery.LayoutFlat, true, [5]int{3, 8, 6, 0, 0}},
		"samueljklee__amplifier-collection-amplifier-dev": {"amplifier-collection-amplifier-dev", "1.0.0", discovery.LayoutNested, true, [5]int{3, 4, 23, 0, 0}},
		"developer-expertise":                             {"developer-expertise", "1.0.0", discovery.LayoutFlat, true, [5]int{2, 8, 0, 0, 0}},
		"foundation":                                      {"foundation", "1.0.0", discovery.LayoutFlat, true, [5]int{4, 1, 5, 0, 0}},
		// bundled/test has neither pyproject.toml nor a resource directory:
		// it is ignored, and so absent here.
	}
	seen := map[string]bool{}
	for _, c := range set.Collections() {
		dir := filepath.Base(c.Dir)
		w, ok := wants[dir]
		if !ok {
			t.Errorf("unexpected collection %s (%s)", c.Name, c.Dir)
			continue
		}
		seen[dir] = true
		got := [5]int{c.Count(discovery.KindProfile), c.Count(discovery.KindAgent), c.Count(discovery.KindContext),
			c.Count(discovery.KindTool), c.Count(discovery.KindModule)}
		if c.Name != w.name || c.Version != w.version || c.Layout != w.layout || c.Valid != w.valid || got != w.counts {
			t.Errorf("%s: got %s %s %s valid=%v %v; want %s %s %s valid=%v %v (problem %q)", dir,
				c.Name, c.Version, c.Layout, c.Valid, got, w.name, w.version, w.layout, w.valid, w.counts, c.Problem)
		}
		if !c.Valid && c.Problem != "Missing pyproject.toml" {
			t.Errorf("%s: problem %q, want Missing pyproject.toml", dir, c.Problem)
		}
	}
	for dir := range wants {
		if !seen[dir] {
			t.Errorf("collection %s not found", dir)
		}
	}
}

// TestCorpusNestedNames checks the package copies EXPECTED.md describes:
// a differing name warns, identical copies and agreeing ones do not.
func TestCorpusNestedNames(t *testing.T) {
	set := corpusSet(t)
	warned := map[string]bool{}
	for _, c := range set.Collections() {
		for _, d := range c.Diagnostics {
			if d.Code == diag.CodeNestedNameMismatch {
				warned[filepath.Base(c.Dir)] = true
			}
		}
	}
	for _, dir := range []string{"Joi__amplifier-collection-switchboard", "payneio__amplifier-collection-issues"} {
		if !warned[dir] {
			t.Errorf("%s: no %s warning for its differing package name", dir, diag.CodeNestedNameMismatch)
		}
	}
	if len(warned) != 2 {
		t.Errorf("name-mismatch warnings on %v, want only switchboard and payneio", warned)
	}
}

func TestCorpusResolution(t *testing.T) {
	set := corpusSet(t)
	r := set.Resolve("recipes")
	if r.Winner == nil || !strings.Contains(r.Winner.Dir, "microsoft__") || len(r.Shadowed) != 1 {
		t.Fatalf("recipes resolves to %+v, want microsoft's with robotdad's shadowed", r.Winner)
	}
	sb := set.Lookup("sb")
	if sb == nil {
		t.Fatal("sb does not resolve")
	}
	ref, err := set.ResolveProfile("sb:dev-sb", nil)
	if err != nil {
		t.Fatal(err)
	}
	var chain []string
	for _, p := range set.Chain(ref) {
		chain = append(chain, p.ID())
	}
	want := "sb:dev-sb → toolkit:toolkit-dev → developer-expertise:dev → foundation:base → foundation:foundation"
	if got := strings.Join(chain, " → "); got != want {
		t.Errorf("chain = %s\nwant    %s", got, want)
	}
}

// TestCorpusCrossReferences asserts the cross-reference findings the issue
// names: payneio's bare `extends: base`, design-intelligence's requires
// satisfied by bundled foundation, metacognition's amplifier-core missing.
func TestCorpusCrossReferences(t *testing.T) {
	set := corpusSet(t)
	diags := check.All(set)
	has := func(code, pathSuffix, msgPart string) bool {
		for _, d := range diags {
			if d.Code == code && strings.HasSuffix(d.Path, pathSuffix) && strings.Contains(d.Message, msgPart) {
				return true
			}
		}
		return false
	}
	if !has(diag.CodeExtendsUnresolved, "max_payne_collection/profiles/issue-aware.md", `"base"`) {
		t.Error("payneio's bare extends: base is not reported")
	}
	if !has(diag.CodeDepNotInstalled, "ramparte__amplifier-collection-metacognition/pyproject.toml", "amplifier-core") {
		t.Error("metacognition's amplifier-core requirement is not reported not installed")
	}
	if has(diag.CodeDepUnsatisfied, "microsoft__amplifier-collection-design-intelligence/pyproject.toml", "") ||
		has(diag.CodeDepNotInstalled, "microsoft__amplifier-collection-design-intelligence/pyproject.toml", "") {
		t.Error("design-intelligence's foundation ^1.0.0 is reported unmet; bundled foundation 1.0.0 meets it")
	}
	for _, d := range diags {
		if d.Code == diag.CodeExtendsUnresolved && strings.Contains(d.Message, "foundation:") {
			t.Errorf("extends into foundation does not resolve: %s", d)
		}
	}
}

// TestCorpusWithoutBundled checks the corpus collections without the
// bundled root, as on a machine without foundation: each collection that
// requires foundation gets one deps/not-installed warning at that entry,
// and none of its references into foundation is an error; a collection
// that extends foundation without requiring it still gets the error.
func TestCorpusWithoutBundled(t *testing.T) {
	dir := corpusDir(t)
	root := discovery.Root{Kind: discovery.RootUser, Path: filepath.Join(dir, "collections")}
	cols, err := (&discovery.Loader{}).ScanRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	set := resolve.NewSet([]discovery.Root{root}, [][]*discovery.Collection{cols})
	diags := check.All(set)
	requirers := 0
	for _, c := range set.Collections() {
		if !c.Requires("foundation") {
			continue
		}
		requirers++
		warned := 0
		for _, d := range diags {
			if !strings.HasPrefix(d.Path, c.Dir+string(filepath.Separator)) {
				continue
			}
			switch {
			case d.Code == diag.CodeDepNotInstalled && d.Path == c.Pyproject && strings.Contains(d.Message, "foundation"):
				warned++
				if d.Severity != diag.SeverityWarning {
					t.Errorf("%s: %s is not a warning", c.Name, d)
				}
			case strings.HasPrefix(d.Code, "ref/") && strings.Contains(d.Message, "foundation"):
				t.Errorf("%s requires foundation, yet a reference into it is reported: %s", c.Name, d)
			}
		}
		if warned != 1 {
			t.Errorf("%s requires foundation: %d deps/not-installed warnings, want 1", c.Name, warned)
		}
	}
	if requirers != 4 {
		t.Errorf("%d collections require foundation, EXPECTED.md lists 4", requirers)
	}
	sb := false
	for _, d := range diags {
		if d.Code == diag.CodeExtendsUnresolved && strings.Contains(d.Message, `"foundation:base"`) && strings.Contains(d.Path, "switchboard") {
			sb = true
		}
	}
	if !sb {
		t.Error("switchboard extends foundation:base without requiring it, and is not told")
	}
}

// TestCorpusMergedNumbers: the effective developer-expertise:full keeps
// budget_limit: 10.0 a float, and its parent's key order.
func TestCorpusMergedNumbers(t *testing.T) {
	set := corpusSet(t)
	ref, err := set.ResolveProfile("developer-expertise:full", nil)
	if err != nil {
		t.Fatal(err)
	}
	merged, chain, err := set.Effective(ref)
	if err != nil || len(chain) < 2 {
		t.Fatalf("Effective: %v, chain %v", err, chain)
	}
	b, err := json.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"budget_limit":10.0`, `"warn_threshold":0.8`, `"compact_threshold":0.9`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("merged profile lacks %s: %s", want, b)
		}
	}
	root := chain[len(chain)-1].Collection.FullFacts(chain[len(chain)-1].Path).Front
	if got, want := merged.Keys()[:root.Len()], root.Keys(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("merged keys start %q, the root profile has %q", got, want)
	}
	y, err := yaml.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "budget_limit: 10.0\n") {
		t.Errorf("YAML of the merged profile lacks budget_limit: 10.0:\n%s", y)
	}
}
