package analysis_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
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

// at formats a diagnostic as "code@line:char".
func at(d diag.Diagnostic) string {
	return fmt.Sprintf("%s@%d:%d", d.Code, d.Range.Start.Line, d.Range.Start.Character)
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

func TestWorkspaceDiagnose(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	dev := read(t, filepath.Join(dir, devProfile))
	tests := []struct {
		name    string
		file    string
		text    string            // "" for the file as on disk
		overlay map[string]string // other open buffers
		want    []string          // code@line:char, sorted as Sort sorts
	}{
		{name: "clean profile of a working copy", file: devProfile},
		{name: "unknown key and missing parent", file: devProfile,
			text: strings.Replace(strings.Replace(dev, "foundation:base", "foundation:missing", 1), "agents:", "agentz:", 1),
			want: []string{"ref/extends-unresolved@5:11", "schema/unknown-key@6:0"}},
		{name: "unknown agent", file: devProfile, text: strings.Replace(dev, "- helper", "- helpr", 1),
			want: []string{"ref/agent-unknown@7:4"}},
		{name: "agent only in an unsaved buffer", file: devProfile, text: strings.Replace(dev, "- helper", "- planner", 1),
			overlay: map[string]string{"work/mine/agents/planner.md": "---\nname: planner\ndescription: Plans\n---\n"}},
		{name: "parent only in an unsaved buffer", file: devProfile, text: strings.Replace(dev, "foundation:base", "draft", 1),
			overlay: map[string]string{"work/mine/profiles/draft.md": "---\nprofile:\n  name: draft\n  version: 1.0.0\n  description: d\n  extends: foundation:base\n---\n"}},
		{name: "cycle through an unsaved buffer", file: devProfile, text: strings.Replace(dev, "foundation:base", "draft", 1),
			overlay: map[string]string{"work/mine/profiles/draft.md": "---\nprofile:\n  name: draft\n  version: 1.0.0\n  description: d\n  extends: mine:dev\n---\n"},
			want:    []string{"ref/extends-cycle@5:11"}},
		{name: "mentions", file: devProfile,
			text: strings.Replace(strings.Replace(dev, "@mine:context/notes.md", "@mine:context/gone.md", 1), "@foundation:context/shared.md", "@foundation:../x.md", 1),
			want: []string{"ref/mention-escapes@10:4", "ref/mention-unresolved@10:28"}},
		{name: "pyproject requires unmet", file: "work/mine/pyproject.toml",
			text: strings.Replace(read(t, filepath.Join(dir, "work/mine/pyproject.toml")), "^1.0.0", "^2.0.0", 1),
			want: []string{"deps/unsatisfied@6:13"}},
		{name: "pyproject bad version", file: "work/mine/pyproject.toml",
			text: strings.Replace(read(t, filepath.Join(dir, "work/mine/pyproject.toml")), `"0.3.0"`, `"0.3"`, 1),
			want: []string{"metadata/invalid-version@2:10"}},
		{name: "own collection's unsaved pyproject with a bad version still resolves", file: devProfile,
			overlay: map[string]string{"work/mine/pyproject.toml": strings.Replace(read(t, filepath.Join(dir, "work/mine/pyproject.toml")), `"0.3.0"`, `"0.3"`, 1)}},
		{name: "profile in a root", file: "project/.amplifier/collections/foundation/profiles/base.md",
			text: strings.Replace(read(t, filepath.Join(dir, "project/.amplifier/collections/foundation/profiles/base.md")), "tools:", "toolz:", 1),
			want: []string{"schema/unknown-key@10:0"}},
		{name: "agent without description", file: "work/mine/agents/helper.md", text: "---\nmeta:\n  name: helper\n---\n",
			want: []string{"schema/missing-key@1:0"}},
		{name: "suppressed in the unsaved buffer", file: devProfile,
			text: strings.Replace(dev, "agents:", "agentz:  # amplidex: ignore[schema/unknown-key]", 1)},
		{name: "suppression of nothing in the unsaved buffer", file: devProfile,
			text: strings.Replace(dev, "agents:", "agents:  # amplidex: ignore[schema/unknown-key]", 1),
			want: []string{"suppress/unused@6:28"}},
		{name: "an ordinary Python project", file: "work/app/pyproject.toml", text: "[project]\nname = \"App\"\n"},
		{name: "an ordinary Python project on disk", file: "work/pyapp/pyproject.toml"},
		{name: "an ordinary Python library on disk", file: "work/pylib/pyproject.toml"},
		{name: "a collection's pyproject not yet with resources", file: "work/new/pyproject.toml",
			text: "[project]\nname = \"new\"\n[tool.amplifier.collection]\nauthor = \"me\"\n",
			want: []string{"metadata/missing-field@0:0", "metadata/missing-field@0:0"}},
		{name: "README is not checked", file: "work/mine/profiles/README.md", text: "---\nnonsense: [\n"},
		{name: "corrupt lock file", file: "project/.amplifier/collections.lock", text: "{not json",
			want: []string{"lock/corrupt@0:1"}},
		{name: "bundle without default_provider", file: "work/bundle/bundle.md",
			text: "---\nbundle:\n  name: b\n  version: 1.0.0\n  description: d\n---\n",
			want: []string{"bundle/load-failed@0:0"}},
	}
	w := newWorkspace(dir)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			text := tc.text
			if text == "" {
				text = read(t, path)
			}
			overlay := map[string][]byte{}
			for rel, s := range tc.overlay {
				overlay[filepath.Join(dir, rel)] = []byte(s)
			}
			var got []string
			for _, d := range w.Diagnose(context.Background(), path, []byte(text), overlay) {
				if d.Path != path {
					t.Errorf("diagnostic for another file: %v", d)
				}
				got = append(got, at(d))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
				for _, d := range w.Diagnose(context.Background(), path, []byte(text), overlay) {
					t.Log(d)
				}
			}
		})
	}
}

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

func labels(items []query.CompletionItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Label
	}
	return out
}

func TestWorkspaceComplete(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	w := newWorkspace(dir)
	path := filepath.Join(dir, devProfile)
	tests := []struct {
		name      string
		text      string
		marker    string // the cursor goes just after it
		want      []string
		replaceAt int // UTF-16 column where the replaced span starts
	}{
		{"extends", "---\nprofile:\n  extends: foun\n---\n", "extends: foun", []string{"foundation:base"}, 11},
		{"extends, quoted", "---\nprofile:\n  extends: \"\n---\n", "extends: \"", []string{"foundation:base"}, 12},
		{"agents list item", "---\nagents:\n  - \n---\n", "  - ", []string{"explorer", "helper"}, 4},
		{"agents flow list", "---\nagents: [helper, \n---\n", "[helper, ", []string{"explorer", "helper"}, 17},
		{"module id", "---\ntools:\n  - module: \n---\n", "module: ", []string{"context-simple", "loop-basic", "tool-filesystem", "tool-web"}, 12},
		{"mention collections", "---\nprofile: {}\n---\nSee @", "See @", []string{"foundation:", "mine:"}, 5},
		{"mention files", "---\nprofile: {}\n---\nSee @foundation:", "See @foundation:", []string{"foundation:agents/explorer.md", "foundation:context/shared.md", "foundation:profiles/base.md"}, 5},
		{"nothing on a plain key", "---\nprofile:\n  name: \n---\n", "name: ", nil, 0},
		{"no mention in an address", "---\nprofile: {}\n---\nmail a@b", "a@b", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pos := cursor(t, tc.text, tc.marker)
			items := w.Complete(context.Background(), path, []byte(tc.text), nil, pos)
			got := labels(items)
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("got %v, want nothing", got)
				}
				return
			}
			for _, want := range tc.want {
				if !slices.Contains(got, want) {
					t.Errorf("completion lacks %q: got %v", want, got)
				}
			}
			for _, it := range items {
				if it.Replace == nil || it.Replace.Start.Character != tc.replaceAt || it.Replace.End != pos {
					t.Errorf("%s replaces %+v, want from column %d to the cursor %+v", it.Label, it.Replace, tc.replaceAt, pos)
					break
				}
			}
		})
	}
}

func TestWorkspaceDefinitionAndHover(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	w := newWorkspace(dir)
	path := filepath.Join(dir, devProfile)
	text := read(t, path)
	foundation := filepath.Join(dir, "project/.amplifier/collections/foundation")
	tests := []struct {
		name   string
		marker string
		target string   // "" for no definition
		hover  []string // fragments the hover text holds
	}{
		{"extends value", "foundation:ba", filepath.Join(foundation, "profiles/base.md"),
			[]string{"Resolves to `" + filepath.Join(foundation, "profiles/base.md") + "`", "1.2.0 from the project root", "Shadows:", "1.0.0 in the user root", "Inherits: mine:dev → foundation:base"}},
		{"agent of the own collection", "- hel", filepath.Join(dir, "work/mine/agents/helper.md"),
			[]string{"Collection `mine` 0.3.0 from the working copy"}},
		{"agent of another collection", "- explo", filepath.Join(foundation, "agents/explorer.md"),
			[]string{"Collection `foundation`"}},
		{"mention", "@foundation:context/sh", filepath.Join(foundation, "context/shared.md"),
			[]string{"Shadows:"}},
		{"plain text", "Devel", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pos := cursor(t, text, tc.marker)
			locs := w.Definition(context.Background(), path, []byte(text), nil, pos)
			switch {
			case tc.target == "" && len(locs) != 0:
				t.Errorf("definition %v, want none", locs)
			case tc.target != "" && (len(locs) != 1 || locs[0].Path != tc.target):
				t.Errorf("definition %v, want %s", locs, tc.target)
			}
			md, ok := w.Hover(context.Background(), path, []byte(text), nil, pos)
			if ok != (tc.hover != nil) {
				t.Fatalf("hover ok = %v, want %v: %s", ok, tc.hover != nil, md)
			}
			for _, frag := range tc.hover {
				if !strings.Contains(md, frag) {
					t.Errorf("hover lacks %q:\n%s", frag, md)
				}
			}
		})
	}
	t.Run("requires entry", func(t *testing.T) {
		py := filepath.Join(dir, "work/mine/pyproject.toml")
		src := read(t, py)
		locs := w.Definition(context.Background(), py, []byte(src), nil, cursor(t, src, "founda"))
		if len(locs) != 1 || locs[0].Path != filepath.Join(foundation, "pyproject.toml") {
			t.Errorf("definition %v, want foundation's pyproject.toml", locs)
		}
	})
}

func TestWorkspaceSeesSavedFiles(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	w := newWorkspace(dir)
	path := filepath.Join(dir, devProfile)
	text := []byte(strings.Replace(read(t, path), "foundation:base", "foundation:extra", 1))
	if got := w.Diagnose(context.Background(), path, text, nil); len(got) != 1 || got[0].Code != diag.CodeExtendsUnresolved {
		t.Fatalf("before the save: %v", got)
	}
	extra := filepath.Join(dir, "project/.amplifier/collections/foundation/profiles/extra.md")
	if err := os.WriteFile(extra, []byte("---\nprofile:\n  name: extra\n  version: 1.0.0\n  description: e\n  extends: foundation:base\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Invalidate(extra)
	if got := w.Diagnose(context.Background(), path, text, nil); len(got) != 0 {
		t.Fatalf("after the save: %v, want none", got)
	}
}

// TestLinkedWorkingCopy edits a working copy linked into the user root, as
// authors do: the editor names the real path, the root the link.
func TestLinkedWorkingCopy(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	link := filepath.Join(dir, "home/.amplifier/collections/mine")
	if err := os.Symlink(filepath.Join(dir, "work/mine"), link); err != nil {
		t.Skipf("cannot make a symbolic link: %v", err)
	}
	w := newWorkspace(dir)
	path := filepath.Join(dir, devProfile)
	text := strings.Replace(read(t, path), "- helper", "- helpr", 1)
	got := w.Diagnose(context.Background(), path, []byte(text), nil)
	if len(got) != 1 || got[0].Code != diag.CodeAgentUnknown || got[0].Path != path {
		t.Fatalf("got %v, want one %s for %s", got, diag.CodeAgentUnknown, path)
	}
	md, ok := w.Hover(context.Background(), path, []byte(text), nil, cursor(t, text, "- helpr"))
	if !ok || !strings.Contains(md, "Does not resolve") {
		t.Errorf("hover on the unknown agent: %q", md)
	}
	md, _ = w.Hover(context.Background(), path, []byte(text), nil, cursor(t, text, "@mine:cont"))
	if !strings.Contains(md, "from the user root: `"+link+"`") {
		t.Errorf("hover on @mine: does not show the linked collection in the user root:\n%s", md)
	}
}

// countingViews counts the projects Views are asked for.
type countingViews struct {
	analysis.Views
	mu    sync.Mutex // guards fields below
	asked map[string]int
}

func (c *countingViews) View(ctx context.Context, project string) (*catalog.View, error) {
	c.mu.Lock()
	c.asked[project]++
	c.mu.Unlock()
	return c.Views.View(ctx, project)
}

// TestProjectOfTheFile resolves a file against the project it lies in, not
// the one the editor started in, and a file in no project against the
// editor's.
func TestProjectOfTheFile(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	coll := filepath.Join(dir, "project/src/tools")
	path := filepath.Join(coll, "profiles/p.md")
	lone := filepath.Join(dir, "work/lone")
	lonePath := filepath.Join(lone, "profiles/p.md")
	profile := "---\nprofile:\n  name: p\n  version: 1.0.0\n  description: d\n  extends: foundation:base\n---\n"
	for p, s := range map[string]string{
		filepath.Join(coll, "pyproject.toml"): "[project]\nname = \"tools\"\nversion = \"1.0.0\"\ndescription = \"t\"\n",
		path:                                  profile,
		filepath.Join(lone, "pyproject.toml"): "[project]\nname = \"lone\"\nversion = \"1.0.0\"\ndescription = \"t\"\n",
		lonePath:                              profile,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere := t.TempDir()
	views := &countingViews{Views: analysis.NewLocal(analysis.LocalOptions{Home: elsewhere}), asked: map[string]int{}}
	w := analysis.NewWorkspace(views, analysis.WorkspaceOptions{Project: elsewhere})
	src := []byte(read(t, path))
	for range 2 {
		if got := w.Diagnose(context.Background(), path, src, nil); len(got) != 0 {
			t.Fatalf("got %v, want foundation:base to resolve in the file's project", got)
		}
	}
	if want := map[string]int{filepath.Join(dir, "project"): 2}; !maps.Equal(views.asked, want) {
		t.Errorf("projects asked for: %v, want %v", views.asked, want)
	}
	// A file in no project is the editor's project's: elsewhere has no
	// foundation, the fixture's project has one.
	if got := w.Diagnose(context.Background(), lonePath, src, nil); len(got) != 1 || got[0].Code != diag.CodeExtendsUnresolved {
		t.Fatalf("in the editor's project elsewhere: got %v, want the extends unresolved", got)
	}
	w = newWorkspace(dir)
	if got := w.Diagnose(context.Background(), lonePath, src, nil); len(got) != 0 {
		t.Fatalf("in the editor's project: got %v, want foundation:base to resolve", got)
	}
}

// TestRefusedProject: a .amplifier directory of another user makes no
// project; the file resolves against the user and bundled roots, and the
// refusal is logged once.
func TestRefusedProject(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	foreign := filepath.Join(dir, "foreign")
	path := filepath.Join(foreign, "mine/profiles/p.md")
	if err := os.MkdirAll(filepath.Join(foreign, ".amplifier/collections"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(foreign, ".amplifier"), os.Geteuid()+4242, -1); err != nil {
		t.Skipf("cannot give a directory to another user (needs root): %v", err)
	}
	if s := discovery.FindProject(filepath.Dir(path)); s.Refused == "" {
		t.Skipf("the project search does not refuse a directory of another user here: %+v", s)
	}
	var logged strings.Builder
	w := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home")}),
		analysis.WorkspaceOptions{Project: filepath.Join(dir, "project"), Log: slog.New(slog.NewTextHandler(&logged, nil))})
	for range 2 {
		if got := w.ProjectOf(path); got != "" {
			t.Fatalf("ProjectOf = %q, want no project", got)
		}
	}
	if n := strings.Count(logged.String(), "belongs to user"); n != 1 {
		t.Errorf("the refusal was logged %d times, want once:\n%s", n, logged.String())
	}
}
