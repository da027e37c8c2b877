package catalog_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
)

// unpack writes a txtar fixture of testdata into a temp dir and returns
// the dir.
func unpack(t testing.TB, name string) string {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range a.Files {
		write(t, filepath.Join(dir, f.Name), string(f.Data))
	}
	return dir
}

func write(t testing.TB, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// envIn is the Env of a client standing in dir/wd.
func envIn(dir, wd string) compose.Env {
	return compose.Env{WorkDir: filepath.Join(dir, wd), AmplifierHome: filepath.Join(dir, "amp"), Home: dir, NoWellKnown: true}
}

// plan is a composition's mount plan as JSON.
func plan(t testing.TB, c *compose.Composition) string {
	t.Helper()
	b, err := json.Marshal(c.MountPlan)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fresh composes path as the command line would without a catalog.
func fresh(t testing.TB, env compose.Env, path string) string {
	files := &compose.DiskFiles{}
	return plan(t, compose.Compose(compose.Locate(env, files), files, path))
}

// TestSaveRecomposesDependents: a save in a behavior makes again the
// compositions that include it (and its own) and the check of its
// repository, and nothing else; the answers are then those of a fresh
// composition.
func TestSaveRecomposesDependents(t *testing.T) {
	dir := unpack(t, "repo.txtar")
	env := envIn(dir, "repo")
	cat := catalog.New(catalog.Options{})
	v := cat.View(env)
	if got, want := v.Repo(), filepath.Join(dir, "repo"); got != want {
		t.Fatalf("Repo = %q, want %q", got, want)
	}
	root := filepath.Join(dir, "repo", "bundle.md")
	base := filepath.Join(dir, "repo", "behaviors", "base.yaml")
	for _, p := range []string{root, filepath.Join(dir, "other", "bundle.md")} {
		v.Compose(p)
	}
	res := v.Check(filepath.Join(dir, "repo"))
	if res.FilesChecked() != 4 {
		t.Fatalf("checked %d files", res.FilesChecked())
	}
	composed := cat.Composed()

	write(t, base, "bundle: {name: app-base}\ntools:\n  - module: tool-a\n  - module: tool-b\n")
	d := cat.Update([]string{base}, nil)
	// bundle.md includes base.yaml; base.yaml is composed for the check;
	// other.yaml and the other repository read nothing of it.
	if d.Recomposed != 2 || d.Rechecked != 1 || len(d.Relocated) != 0 {
		t.Errorf("a save made again %d compositions and %d checks, relocated %d; want 2, 1, 0", d.Recomposed, d.Rechecked, len(d.Relocated))
	}
	if n := cat.Composed() - composed; n != 2 {
		t.Errorf("%d compositions made for the save, want 2", n)
	}
	v = cat.View(env)
	got := plan(t, v.Compose(root))
	if !strings.Contains(got, "tool-b") || got != fresh(t, env, root) {
		t.Errorf("after the save the plan is %s, want %s", got, fresh(t, env, root))
	}
	if n := cat.Composed() - composed; n != 2 {
		t.Errorf("asking again made %d more compositions", n-2)
	}

	// A save that breaks the include: the check reports it.
	write(t, root, strings.Replace(readFile(t, root), "app:behaviors/base", "app:behaviors/gone", 1))
	cat.Update([]string{root}, nil)
	res = cat.View(env).Check(filepath.Join(dir, "repo"))
	if !hasCode(res, "bundle/include-unresolved") {
		t.Errorf("the check after the save reports %v", res.Diagnostics)
	}
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func hasCode(res *check.Result, code string) bool {
	return slices.ContainsFunc(res.Diagnostics, func(d diag.Diagnostic) bool { return d.Code == code })
}

// TestChangesSeen: a behavior removed with its directory, an agent file
// made, a bundle added to $AMPLIFIER_HOME/bundles: each Update makes the
// answers those of a fresh composition.
func TestChangesSeen(t *testing.T) {
	dir := unpack(t, "repo.txtar")
	env := envIn(dir, "repo")
	cat := catalog.New(catalog.Options{})
	root := filepath.Join(dir, "repo", "bundle.md")
	repo := filepath.Join(dir, "repo")
	cat.View(env).Compose(root)
	cat.View(env).Check(repo)

	// The behaviors directory removed: reported by its own path.
	if err := os.RemoveAll(filepath.Join(repo, "behaviors")); err != nil {
		t.Fatal(err)
	}
	cat.Update([]string{filepath.Join(repo, "behaviors")}, nil)
	v := cat.View(env)
	if got, want := plan(t, v.Compose(root)), fresh(t, env, root); got != want {
		t.Errorf("after the removal: %s, want %s", got, want)
	}
	if n := v.Check(repo).FilesChecked(); n != 2 {
		t.Errorf("after the removal the check reads %d files, want 2", n)
	}

	// The helper agent gone, then made again.
	helper := filepath.Join(repo, "agents", "helper.md")
	text := readFile(t, helper)
	os.Remove(helper)
	cat.Update([]string{helper}, nil)
	if !hasCode(cat.View(env).Check(repo), "bundle/agent-unresolved") {
		t.Error("a removed agent is not reported")
	}
	write(t, helper, text)
	cat.Update([]string{helper}, nil)
	if hasCode(cat.View(env).Check(repo), "bundle/agent-unresolved") {
		t.Error("an agent made again is still reported")
	}

	// A bundle added to $AMPLIFIER_HOME/bundles: the locations read again.
	names := func() []string {
		var out []string
		for _, f := range cat.View(env).Bundles() {
			out = append(out, f.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"app", "mine"}) {
		t.Fatalf("Bundles = %v", got)
	}
	added := filepath.Join(dir, "amp", "bundles", "added.md")
	write(t, added, "---\nbundle: {name: added}\n---\n")
	if d := cat.Update([]string{added}, nil); len(d.Relocated) != 1 {
		t.Errorf("a bundle added to the search path relocated %d Envs", len(d.Relocated))
	}
	if got := names(); !slices.Equal(got, []string{"app", "added", "mine"}) {
		t.Errorf("Bundles = %v after a bundle was added", got)
	}
	if p, err := cat.View(env).Resolve("added"); err != nil || p != added {
		t.Errorf("Resolve(added) = %q, %v", p, err)
	}
}

// TestRefreshSeesLoosePaths: a root bundle made in a directory above the
// working directory (no watch reports it: it is outside every root) is
// seen by Refresh, which reads the locations again.
func TestRefreshSeesLoosePaths(t *testing.T) {
	dir := unpack(t, "repo.txtar")
	env := envIn(dir, "other")
	cat := catalog.New(catalog.Options{})
	v := cat.View(env)
	if v.Repo() != filepath.Join(dir, "other") {
		t.Fatalf("Repo = %q", v.Repo())
	}
	if d := cat.Refresh(env); len(d.Envs) != 0 {
		t.Errorf("Refresh with nothing changed made %v again", d.Envs)
	}
	write(t, filepath.Join(dir, "bundle.md"), "---\nbundle: {name: top}\n---\n")
	d := cat.Refresh(env)
	if len(d.Relocated) != 1 {
		t.Fatalf("Refresh relocated %d Envs", len(d.Relocated))
	}
	v = cat.View(env)
	if v.Repo() != dir || len(v.Locations().Repos) != 2 {
		t.Errorf("after Refresh: Repo %q, %d repositories", v.Repo(), len(v.Locations().Repos))
	}
	if !slices.Contains(v.Roots(), dir) {
		t.Errorf("Roots %v lack the new repository %s", v.Roots(), dir)
	}
}

// TestWatchable: a directory that may not be watched is no root, and is
// not the repository; what is read below it is stated by Refresh.
func TestWatchable(t *testing.T) {
	dir := unpack(t, "repo.txtar")
	env := envIn(dir, "repo")
	repo := filepath.Join(dir, "repo")
	cat := catalog.New(catalog.Options{Watchable: func(d string) bool { return d != repo }})
	v := cat.View(env)
	if v.Repo() != "" || slices.Contains(v.Roots(), repo) {
		t.Fatalf("Repo %q, Roots %v: the repository may not be watched", v.Repo(), v.Roots())
	}
	root := filepath.Join(repo, "bundle.md")
	v.Compose(root)
	base := filepath.Join(repo, "behaviors", "base.yaml")
	write(t, base, "bundle: {name: app-base}\ntools:\n  - module: tool-changed\n")
	if d := cat.Refresh(env); d.Recomposed != 1 {
		t.Errorf("Refresh made again %d compositions, want 1", d.Recomposed)
	}
	if got := plan(t, cat.View(env).Compose(root)); !strings.Contains(got, "tool-changed") {
		t.Errorf("after Refresh: %s", got)
	}
}

// TestScopesBounded: beyond MaxScopes the Env used least recently is
// forgotten, unless it is held.
func TestScopesBounded(t *testing.T) {
	dir := unpack(t, "repo.txtar")
	cat := catalog.New(catalog.Options{MaxScopes: 2})
	a, b, c := envIn(dir, "repo"), envIn(dir, "other"), envIn(dir, "amp")
	release := cat.Hold(a)
	cat.View(a)
	cat.View(b)
	cat.View(c)
	if got := cat.Envs(); len(got) != 2 || !slices.Contains(got, a) || !slices.Contains(got, c) {
		t.Errorf("Envs = %v, want the held one and the newest", got)
	}
	release()
	cat.View(b)
	if got := cat.Envs(); len(got) != 2 || slices.Contains(got, a) {
		t.Errorf("Envs = %v: the released one, used least recently, is kept", got)
	}
}

// TestConcurrentAnswers: questions asked while saves are taken in (under
// -race) get whole answers, and once the saves stop every answer is a
// fresh composition's.
func TestConcurrentAnswers(t *testing.T) {
	dir := unpack(t, "repo.txtar")
	env := envIn(dir, "repo")
	repo := filepath.Join(dir, "repo")
	cat := catalog.New(catalog.Options{})
	paths := []string{filepath.Join(repo, "bundle.md"), filepath.Join(repo, "behaviors", "base.yaml"),
		filepath.Join(repo, "behaviors", "other.yaml"), filepath.Join(dir, "other", "bundle.md")}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				v := cat.View(env)
				if c := v.Compose(paths[(i+n)%len(paths)]); c == nil || c.Path == "" {
					t.Error("no composition")
					return
				}
				if n%5 == 0 {
					v.Check(repo)
					v.Bundles()
				}
			}
		}()
	}
	base := paths[1]
	for i := range 30 {
		write(t, base, fmt.Sprintf("bundle: {name: app-base}\ntools:\n  - module: tool-%d\n", i))
		cat.Update([]string{base}, nil)
	}
	close(stop)
	wg.Wait()
	v := cat.View(env)
	for _, p := range paths {
		if got, want := plan(t, v.Compose(p)), fresh(t, env, p); got != want {
			t.Errorf("%s: %s, want %s", p, got, want)
		}
	}
}

// TestForgottenEnvsFilesDropped: once an Env is forgotten for the bound,
// the file cache keeps only what the Envs kept read; what they read is
// still answered from it and still taken in when it changes.
func TestForgottenEnvsFilesDropped(t *testing.T) {
	dir := unpack(t, "repo.txtar")
	cat := catalog.New(catalog.Options{MaxScopes: 1})
	a, b := envIn(dir, "repo"), envIn(dir, "other")
	cat.View(a).Check(filepath.Join(dir, "repo"))
	withA := cat.Files().Len()
	cat.View(b).Compose(filepath.Join(dir, "other", "bundle.md"))
	if n := cat.Files().Len(); n >= withA {
		t.Errorf("the file cache knows %d paths after the repository's Env was forgotten, %d before", n, withA)
	}
	root := filepath.Join(dir, "other", "bundle.md")
	write(t, root, "---\nbundle: {name: other, version: 2.0.0}\ntools:\n  - module: tool-changed\n---\n")
	cat.Update([]string{root}, nil)
	if got := plan(t, cat.View(b).Compose(root)); !strings.Contains(got, "tool-changed") {
		t.Errorf("after the trim a save is not taken in: %s", got)
	}
}
