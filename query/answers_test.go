package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/internal/sockos"
	"github.com/amplidex/amplidex/query/server"
)

// answers is the View of testdata/answers.txtar's project, unpacked in a
// temporary directory.
type answers struct {
	dir string
	v   *catalog.View
}

func newAnswers(t *testing.T) answers {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "answers.txtar"))
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
	c := catalog.New(catalog.Options{Home: filepath.Join(dir, "home"), Bundled: []string{filepath.Join(dir, "bundled")}})
	project := filepath.Join(dir, "project")
	st, _ := c.AddProject(project)
	v, ok := st.View(c.ProjectKey(project))
	if !ok {
		t.Fatal("no View of the project")
	}
	return answers{dir: dir, v: v}
}

// path returns the absolute path of a slash-separated path of the fixture.
func (a answers) path(rel string) string {
	return filepath.Join(a.dir, filepath.FromSlash(rel))
}

// The fixture's roots and collection directories.
const (
	projectRoot = "project/.amplifier/collections"
	userRoot    = "home/.amplifier/collections"
	bundledRoot = "bundled"
)

// info is the CollectionInfo of a flat collection in directory root/base.
func (a answers) info(root discovery.RootKind, rootRel, base, name, version, desc, status string, counts query.Counts) query.CollectionInfo {
	dir := a.path(rootRel + "/" + base)
	ci := query.CollectionInfo{Name: name, Version: version, Description: desc, Root: root, RootPath: a.path(rootRel),
		Dir: dir, RealDir: dir, Base: dir, Layout: discovery.LayoutFlat, Valid: status != "skipped", Status: status, Counts: counts}
	if status == "skipped" {
		ci.Problem = "Missing pyproject.toml"
	}
	return ci
}

func (a answers) projectFoundation() query.CollectionInfo {
	return a.info(discovery.RootProject, projectRoot, "foundation", "foundation", "2.0.0", "Foundation profiles", "active",
		query.Counts{Profiles: 2, Agents: 1, Context: 2, ScenarioTools: 1, Modules: 1})
}

func (a answers) userFoundation() query.CollectionInfo {
	return a.info(discovery.RootUser, userRoot, "foundation", "foundation", "1.0.0", "An older foundation", "shadowed", query.Counts{Profiles: 1})
}

func (a answers) bundledFoundation() query.CollectionInfo {
	return a.info(discovery.RootBundled, bundledRoot, "foundation", "foundation", "0.9.0", "The bundled foundation", "shadowed", query.Counts{Profiles: 1})
}

func (a answers) broken() query.CollectionInfo {
	return a.info(discovery.RootUser, userRoot, "broken", "broken", "", "", "skipped", query.Counts{Agents: 1})
}

// req is a requires entry of a pyproject.toml, on line line (0-based)
// with its constraint from character start to end.
func req(name, constraint string, line, start, end int) discovery.Requirement {
	return discovery.Requirement{Name: name, Constraint: constraint, Range: diag.Range{
		Start: diag.Position{Line: line, Character: start}, End: diag.Position{Line: line, Character: end}}}
}

func (a answers) apps() query.CollectionInfo {
	ci := a.info(discovery.RootProject, projectRoot, "apps", "apps", "1.0.0", "Applications", "active", query.Counts{Profiles: 6, Agents: 1})
	ci.Requires = []discovery.Requirement{
		req("foundation", ">=2.0.0", 6, 13, 22), req("extras", "^1.0.0", 7, 9, 17),
		req("missing-lib", "^1.0.0", 8, 14, 22), req("core", "~3.1", 9, 7, 13),
	}
	return ci
}

func (a answers) extras() query.CollectionInfo {
	ci := a.info(discovery.RootUser, userRoot, "extras", "extras", "0.5.0", "Extra agents", "active", query.Counts{Agents: 1, ScenarioTools: 1})
	ci.Requires = []discovery.Requirement{req("foundation", "<2.0.0", 6, 13, 21)}
	return ci
}

func (a answers) core() query.CollectionInfo {
	return a.info(discovery.RootBundled, bundledRoot, "core", "core", "3.1.0", "Core", "active", query.Counts{Profiles: 1})
}

// resource is the ResourceInfo of collection c's file rel.
func (a answers) resource(c query.CollectionInfo, kind discovery.Kind, name, rel, desc string) query.ResourceInfo {
	return query.ResourceInfo{Collection: c.Name, Kind: kind, Name: name, Ref: c.Name + ":" + name,
		Path: filepath.Join(c.Dir, filepath.FromSlash(rel)), Rel: rel, Description: desc, Root: c.Root}
}

// diff fails the test when got and want differ, showing both as JSON.
func diff(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// wantCode fails the test unless err is an *Error with code.
func wantCode(t *testing.T, what string, err error, code query.Code, text string) {
	t.Helper()
	var qe *query.Error
	if !errors.As(err, &qe) || qe.Code != code || !strings.Contains(qe.Message, text) {
		t.Errorf("%s: error %v, want %s containing %q", what, err, code, text)
	}
}

func TestAnswerCollections(t *testing.T) {
	a := newAnswers(t)
	got, err := query.MethodCollections.Answer(a.v, query.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	// By root, project first, then by directory.
	want := []query.CollectionInfo{a.apps(), a.projectFoundation(), a.broken(), a.extras(), a.userFoundation(), a.core(), a.bundledFoundation()}
	diff(t, "collections", got, want)
}

func TestAnswerResolve(t *testing.T) {
	a := newAnswers(t)
	winner := a.projectFoundation()
	tests := []struct {
		name string
		want *query.ResolveResult
	}{
		{"foundation", &query.ResolveResult{Name: "foundation", Found: true, Winner: &winner,
			Shadowed: []query.CollectionInfo{a.userFoundation(), a.bundledFoundation()}, Skipped: []query.CollectionInfo{}}},
		{"broken", &query.ResolveResult{Name: "broken", Shadowed: []query.CollectionInfo{}, Skipped: []query.CollectionInfo{a.broken()}}},
		{"nowhere", &query.ResolveResult{Name: "nowhere", Shadowed: []query.CollectionInfo{}, Skipped: []query.CollectionInfo{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := query.MethodResolve.Answer(a.v, query.NameParams{Name: tc.name})
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "resolve", got, tc.want)
		})
	}
}

// TestResolveDescribed: resolving, in a Sketch of the view's roots, the
// collections of each root that answer to a name, each standing for
// its description (as a daemon's summary gives them), gives the answer
// the view gives, for every name of the fixture and one that resolves
// nowhere; also when each root's are given in reverse, and with every
// other collection of the root besides.
func TestResolveDescribed(t *testing.T) {
	a := newAnswers(t)
	among := func(name string, cols [][]*discovery.Collection) *query.ResolveResult {
		described := map[*discovery.Collection]query.CollectionInfo{}
		set, ok := catalog.Sketch(a.v.Set.Roots, func(r discovery.Root) ([]*discovery.Collection, bool) {
			var out []*discovery.Collection
			for _, c := range cols[a.v.Set.RootIndex(r)] {
				stub := &discovery.Collection{Name: c.Name, Root: r, Dir: c.Dir, RealDir: c.RealDir, Base: c.Base,
					Layout: c.Layout, Valid: c.Valid}
				described[stub] = query.Describe(c)
				out = append(out, stub)
			}
			return out, true
		})
		if !ok {
			t.Fatal("no Sketch")
		}
		return query.ResolveDescribed(set, name, func(c *discovery.Collection) query.CollectionInfo { return described[c] })
	}
	for _, name := range append(a.v.Set.Names(), "nowhere") {
		want, err := query.MethodResolve.Answer(a.v, query.NameParams{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		candidates := make([][]*discovery.Collection, len(a.v.Set.Roots))
		all := make([][]*discovery.Collection, len(a.v.Set.Roots))
		for i := range a.v.Set.Roots {
			for _, c := range a.v.Set.InRoot(i) {
				if slices.Contains(c.AnswersTo(), name) {
					candidates[i] = append(candidates[i], c)
				}
				all[i] = append(all[i], c)
			}
		}
		diff(t, "resolve among "+name, among(name, candidates), want)
		for i := range candidates {
			slices.Reverse(candidates[i])
		}
		diff(t, "resolve among "+name+", each root's in reverse", among(name, candidates), want)
		diff(t, "resolve among "+name+" and the rest", among(name, all), want)
	}
}

func TestAnswerCollection(t *testing.T) {
	a := newAnswers(t)
	f := a.projectFoundation()
	got, err := query.MethodCollection.Answer(a.v, query.NameParams{Name: "foundation"})
	if err != nil {
		t.Fatal(err)
	}
	want := &query.CollectionDetail{CollectionInfo: f, Author: "Ada", Capabilities: []string{"profiles", "agents"},
		URLs: map[string]string{"homepage": "https://example.com/foundation"},
		Resources: []query.ResourceInfo{
			a.resource(f, discovery.KindProfile, "base", "profiles/base.md", "The base profile"),
			a.resource(f, discovery.KindProfile, "dev", "profiles/dev.md", "Development on the base"),
			a.resource(f, discovery.KindAgent, "explorer", "agents/explorer.md", "Explores code"),
			a.resource(f, discovery.KindContext, "guide.md", "context/guide.md", ""),
			a.resource(f, discovery.KindContext, "notes.md", "context/notes.md", ""),
			a.resource(f, discovery.KindTool, "helper", "scenario-tools/helper", ""),
			a.resource(f, discovery.KindModule, "tool-web", "modules/tool-web", ""),
		},
		Shadowed: []query.CollectionInfo{a.userFoundation(), a.bundledFoundation()}, Skipped: []query.CollectionInfo{}}
	diff(t, "collection foundation", got, want)

	// A name only a skipped collection has shows that one.
	b := a.broken()
	got, err = query.MethodCollection.Answer(a.v, query.NameParams{Name: "broken"})
	if err != nil {
		t.Fatal(err)
	}
	want = &query.CollectionDetail{CollectionInfo: b,
		Resources: []query.ResourceInfo{a.resource(b, discovery.KindAgent, "stray", "agents/stray.md", "Lost")},
		Shadowed:  []query.CollectionInfo{}, Skipped: []query.CollectionInfo{b}}
	diff(t, "collection broken", got, want)

	_, err = query.MethodCollection.Answer(a.v, query.NameParams{Name: "nowhere"})
	wantCode(t, "collection nowhere", err, query.CodeNotFound, `collection "nowhere" resolves nowhere`)
}

func TestAnswerResources(t *testing.T) {
	a := newAnswers(t)
	f, apps, extras, core := a.projectFoundation(), a.apps(), a.extras(), a.core()
	tests := []struct {
		m    *query.Method[query.ListParams, []query.ResourceInfo]
		want []query.ResourceInfo
	}{
		// The winners' resources, by collection name.
		{query.MethodProfiles, []query.ResourceInfo{
			a.resource(apps, discovery.KindProfile, "bare", "profiles/bare.md", ""),
			a.resource(apps, discovery.KindProfile, "child", "profiles/child.md", "The child of dev"),
			a.resource(apps, discovery.KindProfile, "headless", "profiles/headless.md", "Extends a profile without front matter"),
			a.resource(apps, discovery.KindProfile, "loop-a", "profiles/loop-a.md", "One half of a cycle"),
			a.resource(apps, discovery.KindProfile, "loop-b", "profiles/loop-b.md", "The other half"),
			a.resource(apps, discovery.KindProfile, "orphan", "profiles/orphan.md", "Extends nothing that exists"),
			a.resource(core, discovery.KindProfile, "minimal", "profiles/minimal.md", "The least"),
			a.resource(f, discovery.KindProfile, "base", "profiles/base.md", "The base profile"),
			a.resource(f, discovery.KindProfile, "dev", "profiles/dev.md", "Development on the base"),
		}},
		{query.MethodAgents, []query.ResourceInfo{
			a.resource(apps, discovery.KindAgent, "explorer", "agents/explorer.md", "Explores apps"),
			a.resource(extras, discovery.KindAgent, "helper", "agents/helper.md", "Helps with searching"),
			a.resource(f, discovery.KindAgent, "explorer", "agents/explorer.md", "Explores code"),
		}},
		{query.MethodContext, []query.ResourceInfo{
			a.resource(f, discovery.KindContext, "guide.md", "context/guide.md", ""),
			a.resource(f, discovery.KindContext, "notes.md", "context/notes.md", ""),
		}},
		{query.MethodTools, []query.ResourceInfo{
			a.resource(extras, discovery.KindTool, "loose", "scenario-tools/loose", ""),
			a.resource(f, discovery.KindTool, "helper", "scenario-tools/helper", ""),
		}},
		{query.MethodModules, []query.ResourceInfo{a.resource(f, discovery.KindModule, "tool-web", "modules/tool-web", "")}},
	}
	for _, tc := range tests {
		t.Run(tc.m.Name(), func(t *testing.T) {
			got, err := tc.m.Answer(a.v, query.ListParams{})
			if err != nil {
				t.Fatal(err)
			}
			diff(t, tc.m.Name(), got, tc.want)
		})
	}
}

// profileFront is the front matter of foundation:dev as its author wrote
// it, in JSON.
const devFront = `{"profile":{"name":"dev","version":"2.1.0","description":"Development on the base","extends":"foundation:base"},` +
	`"ui":{"theme":"dark","width":100},"tools":[{"module":"tool-search"},{"module":"tool-bash","config":{"timeout":60}}],` +
	`"exclude":{"tools":["tool-web"]},"hooks":[{"module":"hooks-logging"}],"agents":["explorer"]}`

// devMerged is foundation:dev merged over foundation:base: base's keys in
// base's order, then dev's new ones; tool-web excluded, tool-bash merged
// in its place, tool-search appended; floats stay floats.
const devMerged = `{"profile":{"name":"dev","version":"2.1.0","description":"Development on the base","extends":"foundation:base"},` +
	`"session":{"orchestrator":{"module":"loop-basic","config":{"max_turns":10,"temperature":0.7}},"context":{"module":"context-simple"}},` +
	`"tools":[{"module":"tool-bash","config":{"timeout":60,"ratio":1.0}},{"module":"tool-search"}],` +
	`"ui":{"width":100,"budget_limit":10.0,"theme":"dark"},"hooks":[{"module":"hooks-logging"}],"agents":["explorer"]}`

// childMerged is apps:child over devMerged: only the orchestrator's
// temperature changes.
var childMerged = strings.Replace(
	strings.Replace(devMerged, `"temperature":0.7`, `"temperature":0.2`, 1),
	`{"name":"dev","version":"2.1.0","description":"Development on the base","extends":"foundation:base"}`,
	`{"name":"child","version":"1.0.0","description":"The child of dev","extends":"foundation:dev"}`, 1)

// profileMeta is the front matter of a profile with only a profile block.
func profileMeta(name, desc, extends string) string {
	return `{"profile":{"name":"` + name + `","version":"1.0.0","description":"` + desc + `","extends":"` + extends + `"}}`
}

func TestAnswerProfile(t *testing.T) {
	a := newAnswers(t)
	f, apps := a.projectFoundation(), a.apps()
	dev := a.resource(f, discovery.KindProfile, "dev", "profiles/dev.md", "Development on the base")
	diagAt := func(code, rel, msg string, line, start, end int) diag.Diagnostic {
		return diag.Diagnostic{Code: code, Severity: diag.SeverityError, Path: a.path(projectRoot + "/" + rel),
			Range:   diag.Range{Start: diag.Position{Line: line, Character: start}, End: diag.Position{Line: line, Character: end}},
			Message: msg, Collection: "apps"}
	}
	cycle := []diag.Diagnostic{
		diagAt(diag.CodeExtendsCycle, "apps/profiles/loop-a.md", "inheritance cycle: apps:loop-a → apps:loop-b → apps:loop-a", 5, 11, 17),
		diagAt(diag.CodeExtendsCycle, "apps/profiles/loop-b.md", "inheritance cycle: apps:loop-b → apps:loop-a → apps:loop-b", 5, 11, 22),
	}
	tests := []struct {
		name   string
		ref    string
		merged bool
		// want is the answer but for Front and Merged, which are
		// compared as JSON with wantFront and wantMerged.
		want                  query.ProfileResult
		wantFront, wantMerged string
	}{
		{"plain", "foundation:dev", false,
			query.ProfileResult{ResourceInfo: dev, Version: "2.1.0", Extends: "foundation:base",
				Chain: []string{"foundation:dev", "foundation:base"}, Complete: true},
			devFront, "null"},
		{"merged", "foundation:dev", true,
			query.ProfileResult{ResourceInfo: dev, Version: "2.1.0", Extends: "foundation:base",
				Chain: []string{"foundation:dev", "foundation:base"}, Complete: true},
			devFront, devMerged},
		{"bare name", "dev", false,
			query.ProfileResult{ResourceInfo: dev, Version: "2.1.0", Extends: "foundation:base",
				Chain: []string{"foundation:dev", "foundation:base"}, Complete: true},
			devFront, "null"},
		{"by path", "foundation:profiles/dev.md", false,
			query.ProfileResult{ResourceInfo: dev, Version: "2.1.0", Extends: "foundation:base",
				Chain: []string{"foundation:dev", "foundation:base"}, Complete: true},
			devFront, "null"},
		{"chain of three", "apps:child", true,
			query.ProfileResult{ResourceInfo: a.resource(apps, discovery.KindProfile, "child", "profiles/child.md", "The child of dev"),
				Version: "1.0.0", Extends: "foundation:dev", Chain: []string{"apps:child", "foundation:dev", "foundation:base"}, Complete: true},
			`{"profile":{"name":"child","version":"1.0.0","description":"The child of dev","extends":"foundation:dev"},` +
				`"session":{"orchestrator":{"config":{"temperature":0.2}}}}`,
			childMerged},
		// An incomplete chain merges what resolved, and says why.
		{"cycle", "apps:loop-a", true,
			query.ProfileResult{ResourceInfo: a.resource(apps, discovery.KindProfile, "loop-a", "profiles/loop-a.md", "One half of a cycle"),
				Version: "1.0.0", Extends: "loop-b", Chain: []string{"apps:loop-a", "apps:loop-b"}, Problems: cycle},
			profileMeta("loop-a", "One half of a cycle", "loop-b"), profileMeta("loop-a", "One half of a cycle", "loop-b")},
		{"unresolved", "apps:orphan", true,
			query.ProfileResult{ResourceInfo: a.resource(apps, discovery.KindProfile, "orphan", "profiles/orphan.md", "Extends nothing that exists"),
				Version: "1.0.0", Extends: "nowhere:base", Chain: []string{"apps:orphan"}, Problems: []diag.Diagnostic{
					diagAt(diag.CodeExtendsUnresolved, "apps/profiles/orphan.md",
						`extends "nowhere:base" does not resolve: collection "nowhere" does not resolve: none is installed; `+
							`declare it in requires ([tool.amplifier.collection.requires] in apps's pyproject.toml), `+
							`install it in a collections root, or pass check --with DIR`, 5, 11, 23)}},
			profileMeta("orphan", "Extends nothing that exists", "nowhere:base"), profileMeta("orphan", "Extends nothing that exists", "nowhere:base")},
		// A profile without front matter stops the chain, and nothing
		// merges.
		{"no front matter", "apps:headless", true,
			query.ProfileResult{ResourceInfo: a.resource(apps, discovery.KindProfile, "headless", "profiles/headless.md", "Extends a profile without front matter"),
				Version: "1.0.0", Extends: "bare", Chain: []string{"apps:headless", "apps:bare"}, Problems: []diag.Diagnostic{
					diagAt(diag.CodeFrontMatterMissing, "apps/profiles/bare.md", "missing front matter: the first non-empty line must be ---", 0, 0, 31)}},
			profileMeta("headless", "Extends a profile without front matter", "bare"), "null"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := query.MethodProfile.Answer(a.v, query.ProfileParams{Ref: tc.ref, Merged: tc.merged})
			if err != nil {
				t.Fatal(err)
			}
			if g, _ := json.Marshal(got.Front); string(g) != tc.wantFront {
				t.Errorf("front\n got %s\nwant %s", g, tc.wantFront)
			}
			if g, _ := json.Marshal(got.Merged); string(g) != tc.wantMerged {
				t.Errorf("merged\n got %s\nwant %s", g, tc.wantMerged)
			}
			rest := *got
			rest.Front, rest.Merged = nil, nil
			diff(t, "profile "+tc.ref, &rest, &tc.want)
		})
	}

	for _, tc := range []struct {
		ref  string
		code query.Code
		text string
	}{
		{"nowhere:base", query.CodeNotFound, `collection "nowhere" resolves nowhere`},
		{"foundation:nope", query.CodeNotFound, `no profile "nope" in collection foundation`},
		{"nope", query.CodeNotFound, `no profile named "nope" in any collection`},
		{"broken:stray", query.CodeNotFound, `collection "broken" resolves nowhere`},
	} {
		_, err := query.MethodProfile.Answer(a.v, query.ProfileParams{Ref: tc.ref})
		wantCode(t, "profile "+tc.ref, err, tc.code, tc.text)
	}
}

// TestAnswerProfileText: the text of a merged profile is YAML in the
// same order, floats written as floats.
func TestAnswerProfileText(t *testing.T) {
	a := newAnswers(t)
	got, err := query.MethodProfile.Answer(a.v, query.ProfileParams{Ref: "foundation:dev", Merged: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := query.MethodProfile.Print(&b, got, query.PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "foundation:dev\t" + got.Path + `
chain: foundation:dev → foundation:base
---
profile:
  name: dev
  version: 2.1.0
  description: Development on the base
  extends: foundation:base
session:
  orchestrator:
    module: loop-basic
    config:
      max_turns: 10
      temperature: 0.7
  context:
    module: context-simple
tools:
  - module: tool-bash
    config:
      timeout: 60
      ratio: 1.0
  - module: tool-search
ui:
  width: 100
  budget_limit: 10.0
  theme: dark
hooks:
  - module: hooks-logging
agents:
  - explorer
---
`
	if b.String() != want {
		t.Errorf("text\n got %s\nwant %s", b.String(), want)
	}
}

func TestAnswerAgent(t *testing.T) {
	a := newAnswers(t)
	f, apps, extras := a.projectFoundation(), a.apps(), a.extras()
	for _, tc := range []struct {
		ref  string
		want query.ResourceInfo
	}{
		{"foundation:explorer", a.resource(f, discovery.KindAgent, "explorer", "agents/explorer.md", "Explores code")},
		{"apps:agents/explorer.md", a.resource(apps, discovery.KindAgent, "explorer", "agents/explorer.md", "Explores apps")},
		{"helper", a.resource(extras, discovery.KindAgent, "helper", "agents/helper.md", "Helps with searching")},
	} {
		got, err := query.MethodAgent.Answer(a.v, query.RefParams{Ref: tc.ref})
		if err != nil {
			t.Errorf("agent %s: %v", tc.ref, err)
			continue
		}
		diff(t, "agent "+tc.ref, got, &query.AgentResult{ResourceInfo: tc.want})
	}
	for _, tc := range []struct {
		ref  string
		code query.Code
		text string
	}{
		{"explorer", query.CodeInvalidParams, `agent "explorer" is ambiguous: apps:explorer, foundation:explorer`},
		{"foundation:helper", query.CodeNotFound, `no agent "helper" in collection foundation`},
		{"nope", query.CodeNotFound, `no agent named "nope" in any collection`},
		// A profile is no agent.
		{"foundation:dev", query.CodeNotFound, `no agent "dev" in collection foundation`},
	} {
		_, err := query.MethodAgent.Answer(a.v, query.RefParams{Ref: tc.ref})
		wantCode(t, "agent "+tc.ref, err, tc.code, tc.text)
	}
}

func TestAnswerSearch(t *testing.T) {
	a := newAnswers(t)
	f, apps, extras := a.projectFoundation(), a.apps(), a.extras()
	for _, tc := range []struct {
		text string
		want []query.ResourceInfo
	}{
		// By ref, case folded.
		{"EXPLOR", []query.ResourceInfo{
			a.resource(apps, discovery.KindAgent, "explorer", "agents/explorer.md", "Explores apps"),
			a.resource(f, discovery.KindAgent, "explorer", "agents/explorer.md", "Explores code"),
		}},
		// By description.
		{" helps with ", []query.ResourceInfo{a.resource(extras, discovery.KindAgent, "helper", "agents/helper.md", "Helps with searching")}},
		// By path.
		{"scenario-tools/", []query.ResourceInfo{
			a.resource(extras, discovery.KindTool, "loose", "scenario-tools/loose", ""),
			a.resource(f, discovery.KindTool, "helper", "scenario-tools/helper", ""),
		}},
		// Not in shadowed or skipped collections.
		{"stray", []query.ResourceInfo{}},
		{"Old base", []query.ResourceInfo{}},
		{"  ", []query.ResourceInfo{}},
	} {
		got, err := query.MethodSearch.Answer(a.v, query.SearchParams{Text: tc.text})
		if err != nil {
			t.Fatal(err)
		}
		diff(t, "search "+tc.text, got, tc.want)
	}
}

func TestAnswerDiagnostics(t *testing.T) {
	a := newAnswers(t)
	// code path:line:character, by path.
	all := []string{
		"layout/shadowed bundled/foundation/pyproject.toml:0:0",
		"metadata/missing-pyproject home/.amplifier/collections/broken:0:0",
		"deps/unsatisfied home/.amplifier/collections/extras/pyproject.toml:6:13",
		"layout/tool-missing-pyproject home/.amplifier/collections/extras/scenario-tools/loose:0:0",
		"layout/shadowed home/.amplifier/collections/foundation/pyproject.toml:0:0",
		"frontmatter/missing project/.amplifier/collections/apps/profiles/bare.md:0:0",
		"ref/extends-cycle project/.amplifier/collections/apps/profiles/loop-a.md:5:11",
		"ref/extends-cycle project/.amplifier/collections/apps/profiles/loop-b.md:5:11",
		"ref/extends-unresolved project/.amplifier/collections/apps/profiles/orphan.md:5:11",
		"deps/unsatisfied project/.amplifier/collections/apps/pyproject.toml:7:9",
		"deps/not-installed project/.amplifier/collections/apps/pyproject.toml:8:14",
		"ref/mention-unresolved project/.amplifier/collections/foundation/context/guide.md:0:39",
	}
	for _, tc := range []struct {
		name, path string
		want       []string
		summary    query.Summary
	}{
		{"all", "", all, query.Summary{Errors: 8, Warnings: 2, Infos: 2, Files: 11}},
		{"a collection", a.path(projectRoot + "/apps"), all[5:11], query.Summary{Errors: 5, Warnings: 1, Files: 5}},
		{"a collection, with a slash", a.path(projectRoot+"/apps") + "/", all[5:11], query.Summary{Errors: 5, Warnings: 1, Files: 5}},
		{"a file", a.path(projectRoot + "/foundation/context/guide.md"), all[11:], query.Summary{Errors: 1, Files: 1}},
		{"a root", a.path(userRoot), all[1:5], query.Summary{Errors: 2, Warnings: 1, Infos: 1, Files: 4}},
		// A prefix that is no directory of the path matches nothing.
		{"a name prefix", a.path(projectRoot + "/app"), nil, query.Summary{}},
		{"a clean file", a.path(projectRoot + "/foundation/profiles/base.md"), nil, query.Summary{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := query.MethodDiagnostics.Answer(a.v, query.DiagnosticsParams{Path: tc.path})
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, d := range got.Diagnostics {
				rel, _ := filepath.Rel(a.dir, d.Path)
				lines = append(lines, d.Code+" "+filepath.ToSlash(rel)+":"+itoa(d.Range.Start.Line)+":"+itoa(d.Range.Start.Character))
			}
			diff(t, "diagnostics", lines, tc.want)
			diff(t, "summary", got.Summary, tc.summary)
			if got.Diagnostics == nil {
				t.Error("no diagnostics is null, not []")
			}
		})
	}
	// One in full.
	got, _ := query.MethodDiagnostics.Answer(a.v, query.DiagnosticsParams{Path: a.path(projectRoot + "/apps/pyproject.toml")})
	want := []diag.Diagnostic{
		{Code: diag.CodeDepUnsatisfied, Severity: diag.SeverityError, Path: a.path(projectRoot + "/apps/pyproject.toml"),
			Range:      diag.Range{Start: diag.Position{Line: 7, Character: 9}, End: diag.Position{Line: 7, Character: 17}},
			Message:    "requires extras ^1.0.0, but extras 0.5.0 is installed at " + a.path(userRoot+"/extras"),
			Collection: "apps"},
		{Code: diag.CodeDepNotInstalled, Severity: diag.SeverityWarning, Path: a.path(projectRoot + "/apps/pyproject.toml"),
			Range: diag.Range{Start: diag.Position{Line: 8, Character: 14}, End: diag.Position{Line: 8, Character: 22}},
			Message: "requires missing-lib ^1.0.0, but no collection missing-lib is installed; references into it are not checked until it is: " +
				"set AMPLIDEX_BUNDLED or [roots] bundled to a directory that holds it, install it in a collections root, or pass check --with DIR",
			Collection: "apps"},
	}
	diff(t, "diagnostics of apps/pyproject.toml", got.Diagnostics, want)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestAnswerDeps(t *testing.T) {
	a := newAnswers(t)
	got, err := query.MethodDeps.Answer(a.v, query.NameParams{Name: "apps"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "deps apps", got, &query.DepsResult{Name: "apps", Version: "1.0.0",
		Requires: []query.DepStatus{
			{Name: "foundation", Constraint: ">=2.0.0", Status: "ok", FoundVersion: "2.0.0", FoundDir: a.path(projectRoot + "/foundation")},
			{Name: "extras", Constraint: "^1.0.0", Status: "unsatisfied", FoundVersion: "0.5.0", FoundDir: a.path(userRoot + "/extras")},
			{Name: "missing-lib", Constraint: "^1.0.0", Status: "missing"},
			{Name: "core", Constraint: "~3.1", Status: "ok", FoundVersion: "3.1.0", FoundDir: a.path(bundledRoot + "/core")},
		},
		RequiredBy: []query.DepUser{}})

	got, err = query.MethodDeps.Answer(a.v, query.NameParams{Name: "foundation"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "deps foundation", got, &query.DepsResult{Name: "foundation", Version: "2.0.0", Requires: []query.DepStatus{},
		RequiredBy: []query.DepUser{
			{Name: "apps", Constraint: ">=2.0.0", Satisfied: true},
			{Name: "extras", Constraint: "<2.0.0", Satisfied: false},
		}})

	for _, name := range []string{"nowhere", "broken"} {
		_, err := query.MethodDeps.Answer(a.v, query.NameParams{Name: name})
		wantCode(t, "deps "+name, err, query.CodeNotFound, `collection "`+name+`" resolves nowhere`)
	}
}

// viewMethods are the methods a View answers.
var viewMethods = []string{"collections", "resolve", "collection", "profiles", "agents", "context", "tools", "modules",
	"profile", "agent", "search", "diagnostics", "deps"}

func TestMethodTable(t *testing.T) {
	seen := map[string]bool{}
	var fromView []string
	for _, m := range query.Methods {
		if m.Name() == "" || m.Summary() == "" {
			t.Errorf("method %q has no name or no summary", m.Name())
		}
		if seen[m.Name()] {
			t.Errorf("method %q is in the table twice", m.Name())
		}
		seen[m.Name()] = true
		if m.FromView() {
			fromView = append(fromView, m.Name())
		}
	}
	if !slices.Equal(fromView, viewMethods) {
		t.Errorf("View methods %q, want %q", fromView, viewMethods)
	}
	for _, name := range []string{"changes", "status", "subscribe", "analyze"} {
		if !seen[name] {
			t.Errorf("no method %q", name)
		}
	}
	// A daemon-only method has no in-process answer.
	_, err := query.MethodStatus.Answer(nil, query.StatusParams{})
	wantCode(t, "status in process", err, query.CodeUnknownMethod, "answered by the daemon only")
}

func TestMethodDecode(t *testing.T) {
	p, err := query.MethodProfile.Decode(json.RawMessage(`{"ref":"a:b","merged":true,"project":"/p","no_sync":true}`))
	if err != nil || p != (query.ProfileParams{Common: query.Common{Project: "/p", NoSync: true}, Ref: "a:b", Merged: true}) {
		t.Errorf("Decode = %+v, %v", p, err)
	}
	if p, err := query.MethodCollections.Decode(nil); err != nil || p != (query.ListParams{}) {
		t.Errorf("Decode of no params = %+v, %v", p, err)
	}
	for _, tc := range []struct {
		params string
		text   string
	}{
		{`{"ref":"a:b","merge":true}`, `profile: decode params: unknown field "merge"`},
		{`{"ref":"a:b","Project":"/p","extra":{}}`, `unknown field "extra"`},
		{`{"ref":1}`, "profile: decode params"},
		{`{"ref":"a"} {}`, "profile: decode params"},
	} {
		_, err := query.MethodProfile.Decode(json.RawMessage(tc.params))
		wantCode(t, tc.params, err, query.CodeInvalidParams, tc.text)
	}
	_, err = query.MethodResolve.Decode(json.RawMessage(`{"nme":"x"}`))
	wantCode(t, "resolve", err, query.CodeInvalidParams, `resolve: decode params: unknown field "nme"`)
}

// TestMethodsOverSocket: Handle and ServeViews serve the table's methods
// on a real socket, and Call gets the same answers as in process, front
// matter's key order and number types included.
func TestMethodsOverSocket(t *testing.T) {
	a := newAnswers(t)
	dir := querytest.PrivateDir(t)
	path := filepath.Join(dir, "q.sock")
	if len(path) > sockos.MaxPath {
		d, err := os.MkdirTemp("", "aq")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		if err := os.Chmod(d, 0o700); err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(d, "q.sock")
	}
	clock := query.Clock{Start: 1700000000000000000, PID: 7, Tick: 3}
	scopes := make(chan query.Common, 100)
	mux := query.NewMux()
	query.ServeViews(mux, func(ctx context.Context, scope query.Common) (*catalog.View, query.Clock, error) {
		scopes <- scope
		return a.v, clock, nil
	}, nil)
	query.Handle(mux, query.MethodStatus, func(ctx context.Context, p query.StatusParams) (*query.Status, error) {
		return &query.Status{PID: 7, Projects: []query.ProjectStatus{{Dir: p.Project}}}, nil
	})
	srv := server.New(mux, func() query.Clock { return clock })
	if err := srv.Listen(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx := querytest.Context(t)
	c, err := query.Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	st, clk, err := query.Call(ctx, c, query.MethodStatus, query.StatusParams{Common: query.Common{Project: "/p"}})
	if err != nil || st.PID != 7 || len(st.Projects) != 1 || st.Projects[0].Dir != "/p" || clk != clock {
		t.Errorf("status = %+v, %v, %v", st, clk, err)
	}

	params := query.ProfileParams{Common: query.Common{Project: a.path("project"), NoSync: true}, Ref: "apps:child", Merged: true}
	got, clk, err := query.Call(ctx, c, query.MethodProfile, params)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := query.MethodProfile.Answer(a.v, params)
	diff(t, "profile over the socket", got, want)
	if scope := <-scopes; clk != clock || scope != params.Common {
		t.Errorf("clock %v, scope %+v", clk, scope)
	}
	if g, _ := json.Marshal(got.Merged); string(g) != childMerged {
		t.Errorf("merged over the socket: %s", g)
	}

	_, _, err = query.Call(ctx, c, query.MethodDeps, query.NameParams{Name: "nowhere"})
	wantCode(t, "deps over the socket", err, query.CodeNotFound, `collection "nowhere" resolves nowhere`)
	_, err = c.Call(ctx, query.MethodResolve.Name(), map[string]any{"name": "x", "bogus": 1}, nil)
	wantCode(t, "unknown params over the socket", err, query.CodeInvalidParams, `unknown field "bogus"`)

	// Every View method answers over the socket as in process.
	inProcess := map[string]func() (any, error){
		"collections": func() (any, error) { return query.MethodCollections.Answer(a.v, query.ListParams{}) },
		"resolve":     func() (any, error) { return query.MethodResolve.Answer(a.v, query.NameParams{Name: "foundation"}) },
		"collection":  func() (any, error) { return query.MethodCollection.Answer(a.v, query.NameParams{Name: "foundation"}) },
		"profiles":    func() (any, error) { return query.MethodProfiles.Answer(a.v, query.ListParams{}) },
		"agents":      func() (any, error) { return query.MethodAgents.Answer(a.v, query.ListParams{}) },
		"context":     func() (any, error) { return query.MethodContext.Answer(a.v, query.ListParams{}) },
		"tools":       func() (any, error) { return query.MethodTools.Answer(a.v, query.ListParams{}) },
		"modules":     func() (any, error) { return query.MethodModules.Answer(a.v, query.ListParams{}) },
		"profile": func() (any, error) {
			return query.MethodProfile.Answer(a.v, query.ProfileParams{Ref: "foundation:dev", Merged: true})
		},
		"agent":       func() (any, error) { return query.MethodAgent.Answer(a.v, query.RefParams{Ref: "helper"}) },
		"search":      func() (any, error) { return query.MethodSearch.Answer(a.v, query.SearchParams{Text: "explor"}) },
		"diagnostics": func() (any, error) { return query.MethodDiagnostics.Answer(a.v, query.DiagnosticsParams{}) },
		"deps":        func() (any, error) { return query.MethodDeps.Answer(a.v, query.NameParams{Name: "foundation"}) },
	}
	wireParams := map[string]any{
		"resolve": map[string]any{"name": "foundation"}, "collection": map[string]any{"name": "foundation"},
		"profile": map[string]any{"ref": "foundation:dev", "merged": true}, "agent": map[string]any{"ref": "helper"},
		"search": map[string]any{"text": "explor"}, "deps": map[string]any{"name": "foundation"},
	}
	for _, name := range viewMethods {
		res, err := inProcess[name]()
		if err != nil {
			t.Fatalf("%s in process: %v", name, err)
		}
		want, _ := json.Marshal(res)
		var got json.RawMessage
		if _, err := c.Call(ctx, name, wireParams[name], &got); err != nil {
			t.Errorf("%s over the socket: %v", name, err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s over the socket:\n got %s\nwant %s", name, got, want)
		}
	}
}
