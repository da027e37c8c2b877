package compose_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/rogpeppe/go-internal/txtar"
)

// fixture is a txtar archive of files under /w, the file to compose
// (section compose), its mount plan (want) and its diagnostics
// (diagnostics: path:line:code, paths relative to /w).
type fixture struct {
	files       map[string][]byte
	target      string
	want        string
	diagnostics []string
}

func readFixture(t *testing.T, name string) fixture {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	fx := fixture{files: map[string][]byte{}}
	for _, f := range a.Files {
		switch f.Name {
		case "compose":
			fx.target = "/w/" + strings.TrimSpace(string(f.Data))
		case "want":
			fx.want = strings.TrimSpace(string(f.Data))
		case "diagnostics":
			fx.diagnostics = strings.Fields(string(f.Data))
		default:
			fx.files["/w/"+f.Name] = f.Data
		}
	}
	return fx
}

// env is where a fixture's composition stands: in the target's
// repository, with $AMPLIFIER_HOME at /w/home.
func (fx fixture) env() compose.Env {
	return compose.Env{WorkDir: filepath.Dir(fx.target), AmplifierHome: "/w/home", Home: "/w", ProjectDir: "/w/repo"}
}

func (fx fixture) compose(t *testing.T) (*compose.Composition, compose.Files) {
	files := compose.NewOverlay(nil, fx.files)
	loc := compose.Locate(fx.env(), files)
	return compose.Compose(loc, files, fx.target), files
}

func diagList(c *compose.Composition) []string {
	var out []string
	for _, d := range c.Diagnostics {
		out = append(out, fmt.Sprintf("%s:%d:%s", strings.TrimPrefix(d.Path, "/w/"), d.Range.Start.Line+1, d.Code))
	}
	sort.Strings(out)
	return out
}

// TestComposeFixtures composes each fixture of testdata and compares the
// mount plan, as JSON, and the diagnostics. The fixtures' plans were
// checked against the reference where no ruling departs from it.
func TestComposeFixtures(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if len(names) == 0 {
		t.Fatal("no fixtures")
	}
	for _, p := range names {
		name := filepath.Base(p)
		t.Run(strings.TrimSuffix(name, ".txtar"), func(t *testing.T) {
			fx := readFixture(t, name)
			c, _ := fx.compose(t)
			got, err := json.Marshal(c.MountPlan)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != fx.want {
				t.Errorf("mount plan:\n got %s\nwant %s", got, fx.want)
			}
			want := append([]string(nil), fx.diagnostics...)
			sort.Strings(want)
			if g := diagList(c); strings.Join(g, " ") != strings.Join(want, " ") {
				t.Errorf("diagnostics:\n got %v\nwant %v", g, want)
				for _, d := range c.Diagnostics {
					t.Log(d.String())
				}
			}
		})
	}
}

// TestComposeOrigins checks where the parts of the plan come from, the
// include tree, the context and agents resolved, and the sizes.
func TestComposeOrigins(t *testing.T) {
	fx := readFixture(t, "merge.txtar")
	c, _ := fx.compose(t)
	toolA := c.Origins.Tools[0]
	if toolA.ID != "tool-a" || toolA.Origin != (compose.Origin{Path: "/w/repo/behaviors/base.yaml", Line: 7}) ||
		len(toolA.Merged) != 1 || toolA.Merged[0] != (compose.Origin{Path: "/w/repo/bundle.md", Line: 14}) {
		t.Errorf("tool-a origin: %+v", toolA)
	}
	if o := c.Origins.Session["context.config.max"]; o != (compose.Origin{Path: "/w/repo/bundle.md", Line: 12}) {
		t.Errorf("session context.config.max from %+v", o)
	}
	if o := c.Origins.Session["context.config.keep"]; o.Path != "/w/repo/behaviors/base.yaml" {
		t.Errorf("session context.config.keep from %+v", o)
	}
	if o := c.Origins.Agents["app:other"]; o != (compose.Origin{Path: "/w/repo/behaviors/base.yaml", Line: 13}) {
		t.Errorf("agent app:other from %+v", o)
	}
	if len(c.Includes.Includes) != 2 || c.Includes.Includes[0].Path != "/w/repo/behaviors/base.yaml" || c.Includes.Includes[0].Status != compose.StatusLoaded {
		t.Errorf("include tree: %+v", c.Includes)
	}
	for _, a := range c.Agents {
		if a.Path != "/w/repo/agents/"+strings.TrimPrefix(a.Name, "app:")+".md" {
			t.Errorf("agent %s resolves to %q (%s)", a.Name, a.Path, a.Problem)
		}
	}
	if len(c.Context) != 1 || c.Context[0].Key != "app:context/base.md" || !c.Context[0].Exists || c.Context[0].Bytes != len("Base context.\n") {
		t.Errorf("context: %+v", c.Context)
	}
	if c.Sizes.Instruction.Bytes != len("The app.") || c.Sizes.Total.Bytes != len("The app.")+len("Base context.\n") || c.Sizes.Total.Tokens != 2+3 {
		t.Errorf("sizes: %+v", c.Sizes)
	}
	if c.Instruction != "/w/repo/bundle.md" {
		t.Errorf("instruction from %q", c.Instruction)
	}
}

// TestComposeReads checks that a composition records what it read, that
// a Graph finds it from a behavior it includes and not from another
// file, and that composing again over the edited files sees the edit.
func TestComposeReads(t *testing.T) {
	fx := readFixture(t, "merge.txtar")
	c, _ := fx.compose(t)
	var g compose.Graph
	g.Set(c.Path, c.Reads)
	g.Set("/w/other/bundle.md", []string{"/w/other/bundle.md"})
	if d := g.Dependents("/w/repo/behaviors/extra.yaml"); len(d) != 1 || d[0] != "/w/repo/bundle.md" {
		t.Errorf("dependents of extra.yaml: %v", d)
	}
	if d := g.Dependents("/w/other/bundle.md"); len(d) != 1 || d[0] != "/w/other/bundle.md" {
		t.Errorf("dependents of other: %v", d)
	}
	if d := g.Dependents("/w/repo/behaviors/unrelated.yaml"); len(d) != 0 {
		t.Errorf("dependents of an unrelated file: %v", d)
	}
	fx.files["/w/repo/behaviors/extra.yaml"] = []byte("bundle: {name: app-extra}\nhooks:\n  - module: hook-y\n")
	c2, _ := fx.compose(t)
	if len(c2.MountPlan.Hooks) != 1 || c2.MountPlan.Hooks[0].Value("module") != "hook-y" {
		t.Errorf("after the edit, hooks are %v", c2.MountPlan.Hooks)
	}
	g.Set(c2.Path, c2.Reads)
	g.Remove("/w/other/bundle.md")
	if d := g.Dependents("/w/other/bundle.md"); len(d) != 0 {
		t.Errorf("a removed composition is still a dependent: %v", d)
	}
}

// TestCacheDir checks the runtime's cache naming against values computed
// with Python's hashlib.
func TestCacheDir(t *testing.T) {
	for uri, want := range map[string]string{
		"git+https://github.com/microsoft/amplifier-foundation@main":                                   "amplifier-foundation-c909465861f9d6ce",
		"git+https://github.com/microsoft/amplifier-foundation":                                        "amplifier-foundation-c909465861f9d6ce",
		"git+https://github.com/microsoft/amplifier-foundation@main#subdirectory=bundles/minimal.yaml": "amplifier-foundation-c909465861f9d6ce",
		"git+https://github.com/o/tools-repo@main":                                                     "tools-repo-a4524e18e8392ebd",
	} {
		if got := compose.ParseURI(uri).CacheDir(); got != want {
			t.Errorf("%s: %s, want %s", uri, got, want)
		}
	}
}

// TestParseURI checks URIs as the runtime's parse_uri reads them.
func TestParseURI(t *testing.T) {
	for in, want := range map[string]compose.URI{
		"git+https://github.com/o/r@feat/x#subdirectory=a/b.yaml": {Scheme: "git+https", Host: "github.com", Path: "/o/r", Ref: "feat/x", Subpath: "a/b.yaml"},
		"git+ssh://git@github.com/o/r":                            {Scheme: "git+ssh", Host: "git@github.com", Path: "/o/r", Ref: "main"},
		"file:///x/y#subdirectory=z":                              {Scheme: "file", Path: "/x/y", Subpath: "z"},
		"./rel.yaml":                                              {Scheme: "file", Path: "./rel.yaml"},
		"foundation":                                              {Path: "foundation"},
		"foundation/providers/x":                                  {Path: "foundation", Subpath: "providers/x"},
		"https://example.com/b.md#subdirectory=q&x=1":             {Scheme: "https", Host: "example.com", Path: "/b.md", Subpath: "q"},
	} {
		if got := compose.ParseURI(in); got != want {
			t.Errorf("%s: %+v, want %+v", in, got, want)
		}
	}
}

// TestLocate checks where bundles are found: the repository around the
// working directory, .amplifier/bundles, $AMPLIFIER_HOME/bundles, the
// settings files, registry.json and the well-known names.
func TestLocate(t *testing.T) {
	files := compose.NewOverlay(nil, map[string][]byte{
		"/w/repo/bundle.md":                        []byte("---\nbundle: {name: app, version: 2.0.0}\n---\n"),
		"/w/repo/sub/dir/x.txt":                    []byte("x"),
		"/w/repo/.amplifier/bundles/local.yaml":    []byte("bundle: {name: local}\n"),
		"/w/repo/.amplifier/bundles/dir/bundle.md": []byte("---\nbundle: {name: dirb}\n---\n"),
		"/w/repo/.amplifier/settings.yaml":         []byte("bundle:\n  added:\n    mine: git+https://github.com/me/mine@main\nsources:\n  bundles:\n    mine: /w/mine\n"),
		"/w/repo/.amplifier/settings.local.yaml":   []byte("bundle:\n  added: [not, a, mapping]\n"),
		"/w/home/bundles/user.md":                  []byte("---\nbundle: {name: user}\n---\n"),
		"/w/home/registry.json":                    []byte(`{"version": 1, "bundles": {"old": {"uri": "file:///w/old", "local_path": "/w/gone", "is_root": true}}}`),
		"/w/home/settings.yaml":                    []byte("bundle:\n  added:\n    foundation: /w/fork\n"),
	})
	loc := compose.Locate(compose.Env{WorkDir: "/w/repo/sub/dir", AmplifierHome: "/w/home", Home: "/w", ProjectDir: "/w/repo"}, files)
	if len(loc.Repos) != 1 || loc.Repos[0].Name != "app" || loc.Repos[0].Version != "2.0.0" {
		t.Errorf("repos: %+v", loc.Repos)
	}
	if len(loc.Project) != 2 || loc.Project[0].Key != "dir" || loc.Project[0].Name != "dirb" || loc.Project[1].Key != "local" {
		t.Errorf("project: %+v", loc.Project)
	}
	if len(loc.User) != 1 || loc.User[0].Name != "user" {
		t.Errorf("user: %+v", loc.User)
	}
	var regs []string
	for _, r := range loc.Registrations {
		regs = append(regs, r.Name+"="+r.URI+"@"+r.LocalPath)
	}
	all := strings.Join(regs, " ")
	for _, want := range []string{"old=file:///w/old@ ", "foundation=git+https://github.com/microsoft/amplifier-foundation@main@", "foundation=/w/fork@", "mine=git+https://github.com/me/mine@main@"} {
		if !strings.Contains(all+" ", want) {
			t.Errorf("registrations lack %s: %s", want, all)
		}
	}
	if strings.Index(all, "foundation=git+") > strings.Index(all, "foundation=/w/fork") {
		t.Errorf("settings must come after the well-known names: %s", all)
	}
	if len(loc.Overrides) != 1 || loc.Overrides[0].Key != "mine" {
		t.Errorf("overrides: %+v", loc.Overrides)
	}
	if len(loc.Diagnostics) != 1 || loc.Diagnostics[0].Path != "/w/repo/.amplifier/settings.local.yaml" {
		t.Errorf("settings diagnostics: %v", loc.Diagnostics)
	}
}

// TestResolveRef checks what a reference (a path, a name, ns:path, a URI)
// resolves to, and the bundles listed with their namespace.
func TestResolveRef(t *testing.T) {
	files := compose.NewOverlay(nil, map[string][]byte{
		"/w/repo/bundle.md":                        []byte("---\nbundle: {name: app, version: 2.0.0}\n---\n"),
		"/w/repo/behaviors/b.yaml":                 []byte("bundle: {name: app-b}\n"),
		"/w/repo/.amplifier/bundles/local.yaml":    []byte("bundle: {name: local}\n"),
		"/w/home/bundles/user/bundle.yaml":         []byte("bundle: {name: user}\n"),
		"/w/home/settings.yaml":                    []byte("bundle:\n  added:\n    far: git+https://github.com/o/far@main\n    near: file:///w/near\n"),
		"/w/near/bundle.md":                        []byte("---\nbundle: {name: near, version: 0.1.0}\n---\n"),
		"/w/home/cache/far-0123456789abcdef/x.txt": []byte("not this one"),
	})
	loc := compose.Locate(compose.Env{WorkDir: "/w/repo/behaviors", AmplifierHome: "/w/home", Home: "/w", ProjectDir: "/w/repo", NoWellKnown: true}, files)
	for ref, want := range map[string]string{
		"b.yaml":                     "/w/repo/behaviors/b.yaml",
		"/w/repo":                    "/w/repo/bundle.md",
		"app":                        "/w/repo/bundle.md",
		"app:behaviors/b":            "/w/repo/behaviors/b.yaml",
		"local":                      "/w/repo/.amplifier/bundles/local.yaml",
		"user":                       "/w/home/bundles/user/bundle.yaml",
		"near":                       "/w/near/bundle.md",
		"far":                        "error",
		"app:behaviors/none":         "error",
		"git+https://github.com/o/x": "error",
	} {
		got, err := loc.Resolve(files, ref)
		if err != nil {
			if want != "error" || !errors.Is(err, compose.ErrNotFound) {
				t.Errorf("%s: %v", ref, err)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: %s, want %s", ref, got, want)
		}
	}
	var listed []string
	for _, f := range loc.Bundles(files) {
		listed = append(listed, f.Key+"="+f.Name+"/"+f.Namespace+"@"+f.Version)
	}
	if got := strings.Join(listed, " "); got != "repo=app/app@2.0.0 local=local/app@1.0.0 user=user/user@1.0.0 far=/@ near=near/near@0.1.0" {
		t.Errorf("bundles: %s", got)
	}
}

// TestComposeConcurrent composes one bundle from many goroutines over one
// DiskFiles and one Overlay: the same answer each time (run with -race).
func TestComposeConcurrent(t *testing.T) {
	fx := readFixture(t, "merge.txtar")
	dir := t.TempDir()
	disk := map[string][]byte{}
	for p, b := range fx.files {
		q := filepath.Join(dir, strings.TrimPrefix(p, "/w/"))
		if err := os.MkdirAll(filepath.Dir(q), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(q, b, 0o644); err != nil {
			t.Fatal(err)
		}
		disk[q] = b
	}
	target := filepath.Join(dir, "repo", "bundle.md")
	env := compose.Env{WorkDir: filepath.Dir(target), AmplifierHome: filepath.Join(dir, "home"), Home: dir}
	for _, files := range []compose.Files{&compose.DiskFiles{}, compose.NewOverlay(nil, disk)} {
		loc := compose.Locate(env, files)
		want, _ := json.Marshal(compose.Compose(loc, files, target).MountPlan)
		var wg sync.WaitGroup
		errs := make(chan string, 16)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, _ := json.Marshal(compose.Compose(loc, files, target).MountPlan)
				if string(got) != string(want) {
					errs <- string(got)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("a concurrent composition differs: %s", e)
		}
	}
}

// TestRootWhereverTheRepositoryIs: a behavior composed alone has its
// repository's root namespace whether the repository's path sorts before
// the home directory or after it, inside it or outside it (ruling 10 of
// docs/bundles.md; the runtime finds no root for /a/repo with home /w).
func TestRootWhereverTheRepositoryIs(t *testing.T) {
	for _, dir := range []string{"/a/repo", "/z/repo", "/w/repo"} {
		files := compose.NewOverlay(nil, map[string][]byte{
			dir + "/bundle.md":              []byte("---\nbundle: {name: app}\n---\n"),
			dir + "/behaviors/b.yaml":       []byte("bundle: {name: app-b}\nagents:\n  include:\n    - app:helper\n"),
			dir + "/agents/helper.md":       []byte("---\nmeta: {name: helper, description: Helps.}\n---\n"),
			"/w/home/settings.yaml":         []byte("{}\n"),
			"/w/.amplifier/cache/.keep.txt": nil,
		})
		loc := compose.Locate(compose.Env{WorkDir: dir, AmplifierHome: "/w/home", Home: "/w", NoWellKnown: true}, files)
		c := compose.Compose(loc, files, dir+"/behaviors/b.yaml")
		var names []string
		for _, ns := range c.Namespaces {
			names = append(names, ns.Name+"="+ns.Dir)
		}
		if !slices.Contains(names, "app="+dir) {
			t.Errorf("%s: namespaces %v, want app=%s", dir, names, dir)
		}
		for _, d := range c.Diagnostics {
			t.Errorf("%s: %s", dir, d)
		}
	}
}
