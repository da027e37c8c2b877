package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bundlecat "github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/internal/sockos"
	"github.com/amplidex/amplidex/query/server"
	"github.com/rogpeppe/go-internal/txtar"
)

// bundleWorld unpacks testdata/bundles.txtar and returns its directory
// and the scope of a client standing in its repository.
func bundleWorld(t *testing.T) (string, query.BundleScope) {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("testdata", "bundles.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range a.Files {
		p := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, query.BundleScope{WorkDir: filepath.Join(dir, "repo"), AmplifierHome: filepath.Join(dir, "amp"), Home: dir}
}

// bundleView is the in-process View of scope, without the CLI's
// well-known names (nothing of them is in the fixture's cache).
func bundleView(scope query.BundleScope) *bundlecat.View {
	env := scope.Env()
	env.NoWellKnown = true
	return bundlecat.New(bundlecat.Options{}).View(env)
}

func TestBundleAnswers(t *testing.T) {
	dir, scope := bundleWorld(t)
	v := bundleView(scope)
	list, err := query.MethodBundles.AnswerBundles(v, query.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	want := []query.BundleInfo{
		{Name: "app", Version: "1.2.0", Namespace: "app", Path: filepath.Join(dir, "repo", "bundle.md"), Where: "repository", Key: "repo"},
		{Name: "mine", Version: "0.1.0", Namespace: "mine", Path: filepath.Join(dir, "amp", "bundles", "mine.yaml"), Where: "user", Key: "mine"},
	}
	diff(t, "bundles", list, want)

	root := filepath.Join(dir, "repo", "bundle.md")
	base := filepath.Join(dir, "repo", "behaviors", "base.yaml")
	for _, tc := range []struct{ ref, path, ns string }{
		{"app", root, "app"},
		{"bundle.md", root, "app"},
		{root, root, "app"},
		{"behaviors/base.yaml", base, "app"},
		{"app:behaviors/base", base, "app"},
		{"mine", filepath.Join(dir, "amp", "bundles", "mine.yaml"), "mine"},
	} {
		r, err := query.MethodBundle.AnswerBundles(v, query.BundleParams{Ref: tc.ref})
		if err != nil {
			t.Errorf("bundle %s: %v", tc.ref, err)
			continue
		}
		if r.Path != tc.path || r.Namespace != tc.ns || r.MountPlan != nil || r.Declares == nil {
			t.Errorf("bundle %s: path %s, namespace %s, plan %v", tc.ref, r.Path, r.Namespace, r.MountPlan)
		}
	}
	r, _ := query.MethodBundle.AnswerBundles(v, query.BundleParams{Ref: "app"})
	d := r.Declares
	if len(d.Includes) != 2 || d.Includes[1].Source != "app:behaviors/gone" || d.Includes[1].Line != 8 ||
		strings.Join(d.Tools, ",") != "tool-app" || strings.Join(d.Agents, ",") != "app:helper" || d.Instruction.Bytes != 16 {
		t.Errorf("declares %+v", d)
	}

	for _, ref := range []string{"nowhere", "app:behaviors/none", "none.md"} {
		_, err := query.MethodBundle.AnswerBundles(v, query.BundleParams{Ref: ref})
		var qe *query.Error
		if !errors.As(err, &qe) || qe.Code != query.CodeNotFound {
			t.Errorf("bundle %s: %v, want not-found", ref, err)
		}
	}
	_, err = query.MethodBundle.AnswerBundles(v, query.BundleParams{Ref: "agents/helper.md"})
	wantCode(t, "an agent as a bundle", err, query.CodeInvalidParams, "is not a bundle")
	_, err = query.MethodCollections.AnswerBundles(v, query.ListParams{})
	wantCode(t, "collections from bundles", err, query.CodeUnknownMethod, "not answered from bundles")
}

// TestBundleComposed: --composed answers the composition: the mount plan
// (as compose.Compose makes it), origins, the include tree, context
// sizes, and the diagnostics of the file and of its includes.
func TestBundleComposed(t *testing.T) {
	dir, scope := bundleWorld(t)
	v := bundleView(scope)
	root := filepath.Join(dir, "repo", "bundle.md")
	r, err := query.MethodBundle.AnswerBundles(v, query.BundleParams{Ref: "app", Composed: true})
	if err != nil {
		t.Fatal(err)
	}
	env := scope.Env()
	env.NoWellKnown = true
	files := &compose.DiskFiles{}
	c := compose.Compose(compose.Locate(env, files), files, root)
	got, _ := json.Marshal(r.MountPlan)
	want, _ := json.Marshal(c.MountPlan)
	if string(got) != string(want) {
		t.Errorf("mount plan %s, want %s", got, want)
	}
	for _, s := range []string{`"tools":[{"module":"tool-a"`, `"config":{"extra":1}`, `"agents":{"app:helper":`, `"ratio":1.5`} {
		if !strings.Contains(string(got), s) {
			t.Errorf("mount plan %s lacks %s", got, s)
		}
	}
	// The include that resolves to nothing makes the runtime refuse the
	// bundle; the rest is composed.
	if r.Declares != nil || r.Includes == nil || len(r.Includes.Includes) != 1 || r.Includes.Includes[0].Status != compose.StatusLoaded ||
		!strings.Contains(r.Refused, "app:behaviors/gone") {
		t.Errorf("includes %+v, refused %q", r.Includes, r.Refused)
	}
	if len(r.Context) != 1 || !r.Context[0].Exists || r.Context[0].Bytes != 26 || r.Sizes.Total.Bytes != 26+16 {
		t.Errorf("context %+v, sizes %+v", r.Context, r.Sizes)
	}
	if o := r.Origins.Tools; len(o) != 2 || o[0].Origin.Path != filepath.Join(dir, "repo", "behaviors", "base.yaml") || o[0].Origin.Line != 3 {
		t.Errorf("tool origins %+v", o)
	}
	if len(r.Diagnostics) != 1 || r.Diagnostics[0].Code != "bundle/include-unresolved" || r.Diagnostics[0].Range.Start.Line != 7 {
		t.Errorf("diagnostics %+v", r.Diagnostics)
	}
}

// TestBundlesOverSocket: ServeBundles serves the bundle methods on a
// real socket; what a client decodes prints as the answer made in
// process, byte for byte (key order and number types of the mount plan
// included). A question without a bundle scope is refused.
func TestBundlesOverSocket(t *testing.T) {
	_, scope := bundleWorld(t)
	v := bundleView(scope)
	path := filepath.Join(querytest.PrivateDir(t), "b.sock")
	if len(path) > sockos.MaxPath {
		d, err := os.MkdirTemp("", "bq")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		if err := os.Chmod(d, 0o700); err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(d, "b.sock")
	}
	clock := query.Clock{Start: 1700000000000000000, PID: 7, Tick: 3}
	mux := query.NewMux()
	scopes := make(chan query.Common, 10)
	query.ServeBundles(mux, func(_ context.Context, c query.Common) (*bundlecat.View, query.Clock, error) {
		scopes <- c
		return v, clock, nil
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

	common := query.Common{Bundles: &scope}
	for _, p := range []query.BundleParams{{Common: common, Ref: "app"}, {Common: common, Ref: "app", Composed: true}} {
		got, clk, err := query.Call(ctx, c, query.MethodBundle, p)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := query.MethodBundle.AnswerBundles(v, p)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) || clk != clock {
			t.Errorf("bundle over the socket:\n got %s\nwant %s", g, w)
		}
		if s := <-scopes; s.Bundles == nil || *s.Bundles != scope {
			t.Errorf("scope %+v", s)
		}
	}
	list, _, err := query.Call(ctx, c, query.MethodBundles, query.ListParams{Common: common})
	if want, _ := query.MethodBundles.AnswerBundles(v, query.ListParams{}); err != nil || len(list) != len(want) {
		t.Errorf("bundles over the socket: %v, %v", list, err)
	}
	<-scopes
	_, _, err = query.Call(ctx, c, query.MethodBundle, query.BundleParams{Ref: "app"})
	wantCode(t, "no scope", err, query.CodeInvalidParams, "where the client looks for bundles is missing")
	_, _, err = query.Call(ctx, c, query.MethodBundle, query.BundleParams{Common: common, Ref: "nowhere"})
	wantCode(t, "not found over the socket", err, query.CodeNotFound, "nowhere")
}

// TestBundlePrint: the text of bundles, bundle and bundle --composed: the
// composed one shows the include tree, agents, context sizes and the
// mount plan as YAML with where each part comes from.
func TestBundlePrint(t *testing.T) {
	dir, scope := bundleWorld(t)
	v := bundleView(scope)
	o := query.PrintOptions{Header: true, Diagnostics: query.DiagnosticPrinter{WorkDir: dir}}
	var b strings.Builder
	list, _ := query.MethodBundles.AnswerBundles(v, query.ListParams{})
	if err := query.MethodBundles.Print(&b, list, o); err != nil {
		t.Fatal(err)
	}
	r, _ := query.MethodBundle.AnswerBundles(v, query.BundleParams{Ref: "app"})
	if err := query.MethodBundle.Print(&b, r, o); err != nil {
		t.Fatal(err)
	}
	r, _ = query.MethodBundle.AnswerBundles(v, query.BundleParams{Ref: "app", Composed: true})
	if err := query.MethodBundle.Print(&b, r, o); err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(b.String(), dir, "$DIR")
	want := readGolden(t, "bundles.golden")
	if got != want {
		if os.Getenv("UPDATE_GOLDEN") != "" {
			os.WriteFile(filepath.Join("testdata", "bundles.golden"), []byte(got), 0o644)
		}
		t.Errorf("printed:\n%s\nwant:\n%s", got, want)
	}
}

func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
