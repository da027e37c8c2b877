package daemon_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// reloadEnv is the tree of the reload tests: a bundled collection with an
// agent whose unknown key the schema options grade, a second bundled root
// a reload may add, and two manifests in directories of their own.
type reloadEnv struct {
	*env
	odd    string // the agent with an unknown key
	extra  string // the bundled root a reload may add; it holds "more"
	m1, m2 string
	cache  *prepare.Cache
}

func newReloadEnv(t *testing.T) *reloadEnv {
	e := &reloadEnv{env: newEnv(t)}
	e.collection(filepath.Join(e.bundled, "foundation"), "foundation", "1.0.0")
	e.odd = filepath.Join(e.bundled, "foundation", "agents", "odd.md")
	e.write(e.odd, "---\nmeta:\n  name: odd\n  description: Odd\nodd_key: 1\n---\n")
	e.extra = filepath.Join(e.dir, "extra")
	e.collection(filepath.Join(e.extra, "more"), "more", "1.0.0")
	for i, m := range []*string{&e.m1, &e.m2} {
		dir := filepath.Join(e.dir, fmt.Sprintf("bundle%d", i+1))
		*m = filepath.Join(dir, "bundle.md")
		e.write(*m, testManifest)
		e.write(filepath.Join(dir, "modules", "loop-basic", "__init__.py"), "")
		e.write(filepath.Join(dir, "modules", "context-simple", "__init__.py"), "")
	}
	var err error
	e.cache, err = prepare.New(prepare.Options{Home: filepath.Join(e.dir, "agent-home"), Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// options are the daemon's options with the extra bundled root or not,
// unknown keys as warnings or errors, and the manifests given.
func (e *reloadEnv) options(extra, warn bool, manifests ...string) daemon.Options {
	o := daemon.Options{Paths: e.paths, Home: e.home, Bundled: []string{e.bundled}, NoSync: true,
		Watch:   watcher.Options{Debounce: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond},
		Prepare: e.cache, Manifests: manifests}
	if extra {
		o.Bundled = append(o.Bundled, e.extra)
	}
	if warn {
		o.Schema.UnknownKeySeverity = diag.SeverityWarning
	}
	return o
}

// inForce checks that the configuration in force is the one of want: its
// bundled roots answer, its schema options grade the odd agent, and its
// manifests, and no others, are kept warm and watched.
func (e *reloadEnv) inForce(d *daemon.Daemon, c *query.Client, want daemon.Options) {
	e.t.Helper()
	var r query.ResolveResult
	err := callWithin(e.t, c, time.Minute, query.MethodResolve.Name(),
		query.NameParams{Common: query.Common{Project: e.project, NoSync: true}, Name: "more"}, &r)
	if err != nil {
		e.t.Fatal(err)
	}
	if has := slices.Contains(want.Bundled, e.extra); r.Found != has {
		e.t.Errorf("the extra bundled root answers: %v; want %v", r.Found, has)
	}
	var ds query.DiagnosticsResult
	err = callWithin(e.t, c, time.Minute, query.MethodDiagnostics.Name(),
		query.DiagnosticsParams{Common: query.Common{Project: e.project, NoSync: true}, Path: e.odd}, &ds)
	if err != nil {
		e.t.Fatal(err)
	}
	sev := diag.SeverityError
	if want.Schema.UnknownKeySeverity != "" {
		sev = want.Schema.UnknownKeySeverity
	}
	if len(ds.Diagnostics) != 1 || ds.Diagnostics[0].Code != diag.CodeUnknownKey || ds.Diagnostics[0].Severity != sev {
		e.t.Errorf("the odd agent's diagnostics: %+v; want one %s of severity %v", ds.Diagnostics, diag.CodeUnknownKey, sev)
	}
	var kept []string
	for _, b := range d.Status().Bundles {
		kept = append(kept, b.Manifest)
	}
	if !slices.Equal(kept, want.Manifests) {
		e.t.Errorf("kept warm: %v; want %v", kept, want.Manifests)
	}
	for _, m := range []string{e.m1, e.m2} {
		if got, want := d.IsWatchedDir(filepath.Dir(m)), slices.Contains(want.Manifests, m); got != want {
			e.t.Errorf("the directory of %s is watched for its manifest: %v; want %v", m, got, want)
		}
	}
}

// TestReloadWhileServing: reloads that change the bundled roots, the schema
// options and the manifests kept warm run while status is asked over the
// socket and in process, files are saved in a root and beside a manifest
// (batches the watcher delivers and batches handed in), and the daemon
// asks which directories its manifests need. Under -race nothing races;
// every reload succeeds, and the last one is the configuration in force.
func TestReloadWhileServing(t *testing.T) {
	e := newReloadEnv(t)
	configs := []daemon.Options{
		e.options(false, false, e.m1),
		e.options(true, true, e.m1, e.m2),
		e.options(false, true, e.m2),
		e.options(true, false),
		e.options(false, false, e.m1),
		e.options(true, true, e.m2),
	}
	d := e.startWith(func(o *daemon.Options) { *o = configs[0] })
	c := e.client()
	e.inForce(d, c, configs[0])

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var rounds atomic.Int64
	loop := func(fn func(i int)) {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				fn(i)
				rounds.Add(1)
			}
		})
	}
	sc := e.client()
	loop(func(int) {
		var st query.Status
		if err := callWithin(t, sc, time.Minute, query.MethodStatus.Name(), query.StatusParams{}, &st); err != nil {
			t.Error(err)
		}
		d.Status()
	})
	notes := filepath.Join(e.bundled, "foundation", "context", "notes.md")
	save := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Error(err)
		}
	}
	loop(func(i int) {
		for _, m := range []string{e.m1, e.m2} {
			beside := filepath.Join(filepath.Dir(m), "notes.txt")
			save(beside, fmt.Sprintf("save %d\n", i))
			d.HandleBatch(watcher.Batch{Root: filepath.Dir(m), Paths: []string{beside}})
		}
		save(notes, fmt.Sprintf("# Notes %d\n", i))
		d.HandleBatch(watcher.Batch{Root: e.bundled, Paths: []string{notes}})
	})
	loop(func(int) {
		d.IsWatchedDir(filepath.Dir(e.m1))
		d.IsWatchedDir(filepath.Dir(e.m2))
	})

	const reloads = 24
	last := configs[0]
	for i := 1; i <= reloads; i++ {
		last = configs[i%len(configs)]
		if err := d.Reload(last); err != nil {
			t.Errorf("reload %d: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d reloads; %d rounds of status, saves and isWatchedDir meanwhile", reloads, rounds.Load())
	e.inForce(d, c, last)
}

// TestReloadFailsWhole: a reload that fails (here, the watch of a new
// manifest's directory cannot be added, after the new bundled root's was)
// changes nothing: the roots, the schema options, the manifests kept warm
// and the watches stay as they were, and a later reload still applies.
func TestReloadFailsWhole(t *testing.T) {
	e := newReloadEnv(t)
	before := e.options(false, false, e.m1)
	d := e.startWith(func(o *daemon.Options) { *o = before })
	c := e.client()
	e.inForce(d, c, before)
	analyzed := d.Analyzed()

	injected := errors.New("injected failure")
	d.FailWatch(filepath.Dir(e.m2), injected)
	after := e.options(true, true, e.m2)
	if err := d.Reload(after); !errors.Is(err, injected) {
		t.Fatalf("reload: %v; want the injected failure", err)
	}
	e.inForce(d, c, before)
	if ws := d.Status().Warnings; len(ws) == 0 || !strings.Contains(ws[len(ws)-1], "not reloaded") {
		t.Errorf("status does not warn of the failed reload: %q", ws)
	}
	for _, w := range d.WatchedRoots() {
		if w == e.extra || w == filepath.Dir(e.m2) {
			t.Errorf("the failed reload left %s watched", w)
		}
	}
	// The records are still those of the schema options in force: a
	// rescan analyzes nothing again.
	d.HandleBatch(watcher.Batch{Root: e.bundled, Rescan: true})
	d.WaitApplied()
	if n := d.Analyzed(); n != analyzed {
		t.Errorf("a rescan after the failed reload analyzed %d files again", n-analyzed)
	}

	d.FailWatch("", nil)
	if err := d.Reload(after); err != nil {
		t.Fatal(err)
	}
	e.inForce(d, c, after)
}

// TestReloadRejectsRelativePaths: a bundled root or a manifest that is not
// an absolute path fails the reload before anything changes.
func TestReloadRejectsRelativePaths(t *testing.T) {
	e := newReloadEnv(t)
	before := e.options(false, false, e.m1)
	d := e.startWith(func(o *daemon.Options) { *o = before })
	c := e.client()
	for _, edit := range []func(*daemon.Options){
		func(o *daemon.Options) { o.Bundled = append(o.Bundled, "relative/root") },
		func(o *daemon.Options) { o.Manifests = append(o.Manifests, "relative/bundle.md") },
	} {
		o := e.options(true, true, e.m2)
		edit(&o)
		if err := d.Reload(o); err == nil {
			t.Errorf("reload with bundled %v and manifests %v succeeded", o.Bundled, o.Manifests)
		}
		e.inForce(d, c, before)
	}
}

// TestReloadAfterClose: a reload once the daemon closed fails and starts
// nothing.
func TestReloadAfterClose(t *testing.T) {
	e := newReloadEnv(t)
	d := e.startWith(func(o *daemon.Options) { *o = e.options(false, false, e.m1) })
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Reload(e.options(true, true, e.m2)); !errors.Is(err, daemon.ErrClosed) {
		t.Errorf("reload after close: %v; want ErrClosed", err)
	}
}
