package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// bundleRepo writes a bundle repository in e.dir/repo: a root bundle
// that includes one behavior and names one agent. It returns the scope
// of a client standing in it.
func (e *env) bundleRepo() query.BundleScope {
	repo := filepath.Join(e.dir, "repo")
	e.write(filepath.Join(repo, "bundle.md"), "---\nbundle: {name: app, version: 1.0.0}\nincludes:\n  - bundle: app:behaviors/base\n"+
		"agents:\n  include: [app:helper]\n---\nYou are the app.\n")
	e.write(filepath.Join(repo, "behaviors", "base.yaml"), "bundle: {name: app-base}\ntools:\n  - module: tool-0\n")
	e.write(filepath.Join(repo, "agents", "helper.md"), "---\nmeta:\n  name: helper\n  description: Helps.\n---\nHelp.\n")
	return query.BundleScope{WorkDir: repo, AmplifierHome: filepath.Join(e.dir, "amp"), Home: e.home}
}

// composed asks the daemon for the composition of ref in scope.
func composed(t *testing.T, c *query.Client, scope query.BundleScope, ref string) *query.BundleResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, _, err := query.Call(ctx, c, query.MethodBundle, query.BundleParams{Common: query.Common{Bundles: &scope}, Ref: ref, Composed: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func planOf(t *testing.T, r *query.BundleResult) string {
	t.Helper()
	b, err := json.Marshal(r.MountPlan)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBundleReadYourWrites: through the daemon, `bundle app --composed`
// shows a save of the behavior it includes as soon as the save is made,
// save after save; so do a behavior added to its includes and an agent
// file removed.
func TestBundleReadYourWrites(t *testing.T) {
	e := newEnv(t)
	scope := e.bundleRepo()
	e.start()
	c := e.client()
	if got := planOf(t, composed(t, c, scope, "app")); !strings.Contains(got, `"module":"tool-0"`) {
		t.Fatalf("first answer %s", got)
	}
	base := filepath.Join(scope.WorkDir, "behaviors", "base.yaml")
	for i := 1; i <= 25; i++ {
		e.write(base, fmt.Sprintf("bundle: {name: app-base}\ntools:\n  - module: tool-%d\n", i))
		if got := planOf(t, composed(t, c, scope, "app")); !strings.Contains(got, fmt.Sprintf(`"module":"tool-%d"`, i)) {
			t.Fatalf("save %d: %s", i, got)
		}
	}
	e.write(filepath.Join(scope.WorkDir, "behaviors", "more.yaml"), "bundle: {name: app-more}\nhooks:\n  - module: hook-more\n")
	root := filepath.Join(scope.WorkDir, "bundle.md")
	text, _ := os.ReadFile(root)
	e.write(root, strings.Replace(string(text), "  - bundle: app:behaviors/base\n", "  - bundle: app:behaviors/base\n  - bundle: app:behaviors/more\n", 1))
	if got := planOf(t, composed(t, c, scope, "app")); !strings.Contains(got, "hook-more") {
		t.Errorf("a behavior added: %s", got)
	}
	if err := os.Remove(filepath.Join(scope.WorkDir, "agents", "helper.md")); err != nil {
		t.Fatal(err)
	}
	r := composed(t, c, scope, "app")
	if len(r.Agents) != 1 || r.Agents[0].Path != "" || r.Agents[0].Problem == "" {
		t.Errorf("the agent file removed: %+v", r.Agents)
	}
}

// TestBundleSubscription: a subscription whose client stands in a bundle
// repository streams the repository's diagnostics as check makes them:
// first those there are, then each that appears and each that clears.
func TestBundleSubscription(t *testing.T) {
	e := newEnv(t)
	scope := e.bundleRepo()
	helper := filepath.Join(scope.WorkDir, "agents", "helper.md")
	e.write(helper, "---\nname: helper\ndescription: Helps.\n---\nHelp.\n") // no meta:
	e.start()
	c := e.client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ch, err := query.Subscribe(ctx, c, query.MethodSubscribe, query.SubscribeParams{
		Common: query.Common{Project: e.project, Bundles: &scope}, Paths: []string{scope.WorkDir}})
	if err != nil {
		t.Fatal(err)
	}
	next := func(what string) query.Update {
		t.Helper()
		n, ok := <-ch
		if !ok || n.End {
			t.Fatalf("%s: the subscription ended: %+v", what, n)
		}
		var u query.Update
		if err := json.Unmarshal(n.Params, &u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	codes := func(u query.Update, path string) []string {
		var out []string
		for _, f := range u.Files {
			if f.Path == path {
				for _, d := range f.Diagnostics {
					out = append(out, d.Code)
				}
			}
		}
		return out
	}
	u := next("initial")
	if !u.Initial || !slices.Equal(codes(u, helper), []string{"bundle/agent-without-meta"}) {
		t.Fatalf("initial update %+v", u)
	}
	e.write(helper, "---\nmeta:\n  name: helper\n  description: Helps.\n---\nHelp.\n")
	if u = next("fixed"); len(u.Files) != 1 || u.Files[0].Path != helper || len(u.Files[0].Diagnostics) != 0 {
		t.Fatalf("after the fix %+v", u)
	}
	base := filepath.Join(scope.WorkDir, "behaviors", "base.yaml")
	e.write(base, "bundle: {name: app-base}\ntools:\n  - source: ./nowhere\n")
	if u = next("broken"); !slices.Contains(codes(u, base), "bundle/module-without-module") {
		t.Fatalf("after a module without module %+v", u)
	}
}

// TestBundleDiagnostics: `diagnostics` asked from a bundle repository
// lists what check reports there beside the project's collections, below
// a path when given, its suppression comments applied, and a save is in
// the next answer; asked without the place, it lists none of them.
func TestBundleDiagnostics(t *testing.T) {
	e := newEnv(t)
	scope := e.bundleRepo()
	e.start()
	c := e.client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := filepath.Join(scope.WorkDir, "behaviors", "base.yaml")
	ask := func(common query.Common, path string) []string {
		t.Helper()
		r, _, err := query.Call(ctx, c, query.MethodDiagnostics, query.DiagnosticsParams{Common: common, Path: path})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range r.Diagnostics {
			if strings.HasPrefix(d.Path, scope.WorkDir+string(filepath.Separator)) {
				out = append(out, filepath.Base(d.Path)+" "+d.Code)
			}
		}
		if n := r.Summary.Errors + r.Summary.Warnings + r.Summary.Infos; n != len(r.Diagnostics) {
			t.Errorf("the summary counts %d diagnostics, the answer holds %d", n, len(r.Diagnostics))
		}
		return out
	}
	in := query.Common{Bundles: &scope}
	if got := ask(in, ""); len(got) != 0 {
		t.Fatalf("a clean repository: %v", got)
	}
	e.write(base, "bundle: {name: app-base}\ntols:\n  - module: tool-0\n")
	want := []string{"base.yaml bundle/unknown-key"}
	if got := ask(in, ""); !slices.Equal(got, want) {
		t.Errorf("after a misspelt key: %v, want %v", got, want)
	}
	if got := ask(in, filepath.Dir(base)); !slices.Equal(got, want) {
		t.Errorf("below behaviors/: %v, want %v", got, want)
	}
	if got := ask(in, filepath.Join(scope.WorkDir, "agents")); len(got) != 0 {
		t.Errorf("below agents/: %v", got)
	}
	if got := ask(query.Common{}, ""); len(got) != 0 {
		t.Errorf("without the place: %v", got)
	}
	e.write(base, "bundle: {name: app-base}\ntols:  # amplidex: ignore[bundle/unknown-key]\n  - module: tool-0\n")
	if got := ask(in, ""); len(got) != 0 {
		t.Errorf("with a suppression comment: %v", got)
	}
	e.write(base, "bundle: {name: app-base}\ntools:\n  - module: tool-0\n")
	if got := ask(in, ""); len(got) != 0 {
		t.Errorf("once fixed: %v", got)
	}
}

// TestBundleScopeChecked: a place that is not absolute and clean, or a
// working directory that is no directory, is refused as invalid params.
func TestBundleScopeChecked(t *testing.T) {
	e := newEnv(t)
	scope := e.bundleRepo()
	e.start()
	c := e.client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, s := range []query.BundleScope{
		{WorkDir: "repo"},
		{WorkDir: scope.WorkDir + "/../repo"},
		{WorkDir: filepath.Join(scope.WorkDir, "bundle.md")},
		{WorkDir: scope.WorkDir, AmplifierHome: "amp"},
		{WorkDir: scope.WorkDir + "\x00"},
	} {
		_, _, err := query.Call(ctx, c, query.MethodBundles, query.ListParams{Common: query.Common{Bundles: &s}})
		if qe, ok := err.(*query.Error); !ok || qe.Code != query.CodeInvalidParams {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

// TestBundlePlacesRestored: the places whose bundles a daemon served are
// in its index; the next run watches their roots again before anyone
// asks.
func TestBundlePlacesRestored(t *testing.T) {
	e := newEnv(t)
	scope := e.bundleRepo()
	d := e.start()
	composed(t, e.client(), scope, "app")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = e.start()
	var roots []string
	for _, r := range d.Status().BundleRoots {
		roots = append(roots, r.Path)
	}
	if !slices.Contains(roots, scope.WorkDir) || !slices.Contains(roots, filepath.Join(scope.AmplifierHome, "cache")) {
		t.Errorf("bundle roots after a restart: %v", roots)
	}
}

// BenchmarkBundleSave measures, through the daemon, one save in a
// behavior until a question that waits for its writes answers the
// composed bundle that includes it; 10 or 1,000 unrelated bundles
// (repositories of their own in the runtime's cache, each composed once
// before) around it. The time includes the watcher's delivery of the
// save (its debounce: 5 ms here) and the socket.
func BenchmarkBundleSave(b *testing.B) {
	for _, unrelated := range []int{10, 1000} {
		b.Run(fmt.Sprintf("unrelated=%d", unrelated), func(b *testing.B) {
			dir := b.TempDir()
			write := func(p, s string) {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			repo := filepath.Join(dir, "repo")
			write(filepath.Join(repo, "bundle.md"), "---\nbundle: {name: app, version: 1.0.0}\nincludes:\n  - bundle: app:behaviors/base\n---\nThe app.\n")
			behavior := filepath.Join(repo, "behaviors", "base.yaml")
			write(behavior, "bundle: {name: app-base}\ntools:\n  - module: tool-0\n")
			paths, err := query.DefaultPaths(func(k string) string {
				if k == "AMPLIDEX_HOME" {
					return filepath.Join(dir, "state")
				}
				return ""
			})
			if err != nil {
				b.Fatal(err)
			}
			d, err := daemon.Start(context.Background(), daemon.Options{Paths: paths, Home: filepath.Join(dir, "home"), NoSync: true,
				Watch: watcher.Options{Debounce: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond}})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			ctx := context.Background()
			c, err := query.Dial(ctx, paths.Socket)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			scope := query.BundleScope{WorkDir: repo, AmplifierHome: filepath.Join(dir, "amp"), Home: filepath.Join(dir, "home")}
			ask := func(ref string) *query.BundleResult {
				r, _, err := query.Call(ctx, c, query.MethodBundle, query.BundleParams{Common: query.Common{Bundles: &scope}, Ref: ref, Composed: true})
				if err != nil {
					b.Fatal(err)
				}
				return r
			}
			for i := range unrelated {
				p := filepath.Join(scope.AmplifierHome, "cache", fmt.Sprintf("r%d-0123456789abcdef", i), "bundle.md")
				write(p, fmt.Sprintf("---\nbundle: {name: other%d}\nincludes:\n  - bundle: other%d:behaviors/b\n---\nBody.\n", i, i))
				write(filepath.Join(filepath.Dir(p), "behaviors", "b.yaml"), fmt.Sprintf("bundle: {name: other%d-b}\ntools:\n  - module: tool-%d\n", i, i))
				ask(p)
			}
			ask("app")
			i := 0
			for b.Loop() {
				i++
				write(behavior, fmt.Sprintf("bundle: {name: app-base}\ntools:\n  - module: tool-%d\n", i))
				if r := ask("app"); len(r.MountPlan.Tools) != 1 {
					b.Fatalf("save %d: %+v", i, r.MountPlan.Tools)
				}
			}
		})
	}
}
