package daemon_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
)

// TestDescriptorsExhausted makes every listing and read of the daemon's
// loader fail as it does when descriptors run out, while collections are
// created, edited and removed and their root is rescanned: the answers
// keep what was known, status says the root is degraded, and once
// descriptors are back the daemon converges on the tree without being
// told of any further change.
func TestDescriptorsExhausted(t *testing.T) {
	e := newEnv(t)
	for i := range 4 {
		e.collection(filepath.Join(e.projectRoot(), fmt.Sprintf("c%d", i)), fmt.Sprintf("c%d", i), "1.0.0")
	}
	var exhausted atomic.Bool
	emfile := func(op, p string) error { return &fs.PathError{Op: op, Path: p, Err: syscall.EMFILE} }
	d := e.startWith(func(o *daemon.Options) {
		o.ReadDir = func(dir string) ([]os.DirEntry, error) {
			if exhausted.Load() {
				return nil, emfile("open", dir)
			}
			return os.ReadDir(dir)
		}
		o.ReadFile = func(p string) ([]byte, error) {
			if exhausted.Load() {
				return nil, emfile("open", p)
			}
			return os.ReadFile(p)
		}
	})
	c := e.client()
	if e.resolve(c, "c0") == nil {
		t.Fatal("c0 does not resolve before the fault")
	}
	before := e.diagnostics(c)

	exhausted.Store(true)
	e.collection(filepath.Join(e.projectRoot(), "c4"), "c4", "1.0.0")
	e.write(filepath.Join(e.projectRoot(), "c1", "profiles", "base.md"), "---\nprofile:\n  name: base\n---\n")
	if err := os.RemoveAll(filepath.Join(e.projectRoot(), "c2")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"c0", "c1", "c3"} {
		if e.resolve(c, name) == nil {
			t.Fatalf("%s vanished from the answers while descriptors ran out", name)
		}
	}
	// What was known stands; a collection never read completely says
	// why it could not be read.
	var known []diag.Diagnostic
	for _, d := range e.diagnostics(c) {
		if d.Code == diag.CodeUnreadable && strings.Contains(d.Path, "c4") {
			continue
		}
		known = append(known, d)
	}
	if fmt.Sprint(known) != fmt.Sprint(before) {
		t.Fatalf("while descriptors ran out the diagnostics changed:\n%v\nwant the last good ones:\n%v", known, before)
	}
	st := d.Status()
	degraded := false
	for _, r := range st.Roots {
		if r.Path == e.projectRoot() && r.State == query.RootDegraded && len(r.Warnings) > 0 {
			degraded = true
		}
	}
	if !degraded {
		t.Fatalf("status does not say the project root is degraded: %+v", st.Roots)
	}

	exhausted.Store(false)
	want := freshAnswer(t, e)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := daemonAnswer(e, c)
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not converge on the tree once descriptors were back:\n%s\nwant\n%s", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range d.Status().Roots {
		if r.State == query.RootDegraded {
			t.Fatalf("root %s still degraded after it converged: %v", r.Path, r.Warnings)
		}
	}
}

// daemonAnswer renders the daemon's collections and diagnostics for the
// test's project.
func daemonAnswer(e *env, c *query.Client) string {
	var cols []query.CollectionInfo
	if err := e.call(c, "collections", nil, &cols); err != nil {
		e.t.Fatal(err)
	}
	var b strings.Builder
	for _, col := range cols {
		fmt.Fprintf(&b, "col %s %s\n", col.Name, col.Dir)
	}
	for _, d := range e.diagnostics(c) {
		fmt.Fprintln(&b, d)
	}
	return b.String()
}

// freshAnswer renders what a fresh in-process scan of the tree says.
func freshAnswer(t *testing.T, e *env) string {
	t.Helper()
	cat := catalog.New(catalog.Options{Home: e.home, Bundled: []string{e.bundled}, Loader: &discovery.Loader{}})
	st, _ := cat.AddProject(e.project)
	v, _ := st.View(e.project)
	var b strings.Builder
	for _, col := range v.Set.Collections() {
		fmt.Fprintf(&b, "col %s %s\n", col.Name, col.Dir)
	}
	for _, d := range v.Diagnostics() {
		fmt.Fprintln(&b, d)
	}
	return b.String()
}
