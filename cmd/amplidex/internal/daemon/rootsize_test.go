package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// maxWatches is what one hostile root may leave the daemon with at most.
const maxWatches = 20_000

// statusOf asks for the daemon's status.
func statusOf(t *testing.T, c *query.Client) query.Status {
	t.Helper()
	var st query.Status
	if err := callWithin(t, c, 30*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// warned reports whether a warning of status holds every one of words.
func warned(st query.Status, words ...string) bool {
	return slices.ContainsFunc(st.Warnings, func(w string) bool {
		for _, word := range words {
			if !strings.Contains(w, word) {
				return false
			}
		}
		return true
	})
}

// TestClientRootHoldingHome: a client's bundled root that is / or holds
// a home directory (AMPLIDEX_BUNDLED=/) is refused with an error naming
// it, said in status, and never watched.
func TestClientRootHoldingHome(t *testing.T) {
	e := newEnv(t)
	d := e.start()
	c := e.client()
	for _, tc := range []struct{ root, why string }{
		{"/", "file system's root"},
		{e.dir, "holds the home directory " + e.home},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, _, err := query.Call(ctx, c, query.MethodCollections, query.ListParams{Common: query.Common{
			Project: e.project, Roots: &query.Roots{Home: e.home, Bundled: []string{tc.root}}}})
		cancel()
		var qe *query.Error
		if !errors.As(err, &qe) || qe.Code != query.CodeInvalidParams || !strings.Contains(qe.Message, tc.root) || !strings.Contains(qe.Message, tc.why) {
			t.Fatalf("bundled root %s: %v; want invalid params naming it and saying %q", tc.root, err, tc.why)
		}
		if st := statusOf(t, c); !warned(st, tc.root, tc.why) {
			t.Errorf("status does not warn of %s: %q", tc.root, st.Warnings)
		}
		if watched(d, tc.root) {
			t.Errorf("%s is watched", tc.root)
		}
	}
	if n := d.Watches(); n > maxWatches {
		t.Errorf("%d watches", n)
	}
}

// TestOwnBundledRootHoldingHome: the daemon's own configuration naming /
// as a bundled root starts all the same, without it, and says so.
func TestOwnBundledRootHoldingHome(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.bundled, "foundation"), "foundation", "1.0.0")
	d := e.startWith(func(o *daemon.Options) { o.Bundled = []string{"/", e.bundled} })
	c := e.client()
	if r := e.resolve(c, "foundation"); r == nil || !r.Found {
		t.Fatalf("the other bundled root's collection does not resolve: %+v", r)
	}
	if st := statusOf(t, c); !warned(st, "bundled root / not watched", "file system's root") {
		t.Errorf("status does not warn of /: %q", st.Warnings)
	}
	if watched(d, "/") || d.Watches() > maxWatches {
		t.Errorf("/ is watched (%d watches)", d.Watches())
	}
}

// TestLinkToFileSystemRoot: a cloned repository whose collections
// directory links a collection to / leaves the daemon with a handful of
// watches; the link is reported where it is, and the rest of the project
// answers.
func TestLinkToFileSystemRoot(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.projectRoot(), "good"), "good", "1.0.0")
	evil := filepath.Join(e.projectRoot(), "evil")
	if err := os.Symlink("/", evil); err != nil {
		t.Fatal(err)
	}
	d := e.start()
	c := e.client()
	if r := e.resolve(c, "good"); r == nil || !r.Found {
		t.Fatalf("good does not resolve: %+v", r)
	}
	if ds := e.diagnostics(c); !slices.ContainsFunc(ds, func(dg diag.Diagnostic) bool {
		return dg.Code == diag.CodeSymlinkLoop && dg.Path == evil && strings.Contains(dg.Message, "holds the collections root")
	}) {
		t.Errorf("the link to / is not reported: %v", ds)
	}
	// The project's own few directories and those above them: nothing
	// of what the link leads to.
	if n := d.Watches(); n > 200 {
		t.Fatalf("%d watches after a link to /", n)
	}
	st := statusOf(t, c)
	i := slices.IndexFunc(st.Roots, func(r query.RootStatus) bool { return r.Path == e.projectRoot() })
	if i < 0 || !slices.ContainsFunc(st.Roots[i].Warnings, func(w string) bool { return strings.Contains(w, "collection link evil → / not followed") }) {
		t.Errorf("the project root's status does not warn of the link: %+v", st.Roots)
	}
}

// TestRootTooLargeRefused: a root beyond the bound of directories is not
// watched: a client naming one gets an error saying so, and status too; the
// daemon's own starts all the same, its state "too large".
func TestRootTooLargeRefused(t *testing.T) {
	e := newEnv(t)
	big := filepath.Join(e.dir, "big")
	for i := range 30 {
		if err := os.MkdirAll(filepath.Join(big, fmt.Sprintf("d%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bigToo := filepath.Join(e.dir, "big-too")
	if err := os.CopyFS(bigToo, os.DirFS(big)); err != nil {
		t.Fatal(err)
	}
	d := e.startWith(func(o *daemon.Options) {
		o.Watch.MaxRootDirs = 20
		o.Bundled = append(o.Bundled, bigToo)
	})
	c := e.client()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, err := query.Call(ctx, c, query.MethodCollections, query.ListParams{Common: query.Common{
		Roots: &query.Roots{Home: e.home, Bundled: []string{big}}}})
	var qe *query.Error
	if !errors.As(err, &qe) || qe.Code != query.CodeInvalidParams || !strings.Contains(qe.Message, big) || !strings.Contains(qe.Message, "more than 20 directories") {
		t.Fatalf("a client's root too large: %v; want an error naming it and the bound", err)
	}
	if watched(d, big) {
		t.Error("the client's root too large is watched")
	}
	st := statusOf(t, c)
	if !warned(st, big, "more than 20 directories") {
		t.Errorf("status does not warn of the client's root: %q", st.Warnings)
	}
	i := slices.IndexFunc(st.Roots, func(r query.RootStatus) bool { return r.Path == bigToo })
	if i < 0 || st.Roots[i].State != string(watcher.StateTooLarge) || st.Roots[i].Watches != 0 {
		t.Errorf("the daemon's own root too large: %+v", st.Roots)
	}
}

// TestStandInChecked: the collection a client stands in must be an
// absolute, clean path of a directory of the user's that holds no home
// directory; one that is watches it as a root of its own, first.
func TestStandInChecked(t *testing.T) {
	e := newEnv(t)
	clone := filepath.Join(e.dir, "src", "spec-kit")
	e.collection(clone, "spec-kit", "2.0.0")
	d := e.start()
	c := e.client()
	ask := func(dir string) (*query.ResolveResult, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, _, err := query.Call(ctx, c, query.MethodResolve, query.NameParams{Name: "spec-kit", Common: query.Common{
			Roots: &query.Roots{Home: e.home, Bundled: []string{e.bundled}, Collection: dir}}})
		return r, err
	}
	for _, tc := range []struct{ dir, says string }{
		{"src/spec-kit", "not an absolute, clean path"},
		{clone + "/", "not an absolute, clean path"},
		{"/", "file system's root"},
		{e.dir, "holds the home directory"},
		{filepath.Join(clone, "pyproject.toml"), "not a directory"},
		{filepath.Join(e.dir, "gone"), "no such file"},
	} {
		_, err := ask(tc.dir)
		var qe *query.Error
		if !errors.As(err, &qe) || qe.Code != query.CodeInvalidParams || !strings.Contains(qe.Message, tc.says) {
			t.Errorf("collection %q: %v; want invalid params saying %q", tc.dir, err, tc.says)
		}
	}
	r, err := ask(clone)
	if err != nil || !r.Found || r.Winner.Dir != clone || r.Winner.Root != discovery.RootArgument {
		t.Fatalf("the clone stood in: %+v, %v", r, err)
	}
	if !watched(d, clone) {
		t.Error("the collection stood in is not watched")
	}
}
