//go:build unix

package daemon_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// TestFIFOLockFreezesNothing: a FIFO at a project's collections.lock, and a
// lock linked to /dev/zero in another, are reported; neither blocks the
// queries of other projects, status, or the daemon's stop.
func TestFIFOLockFreezesNothing(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := newEnv(t)
	e.collection(filepath.Join(e.projectRoot(), "p"), "p", "1.0.0")
	if err := syscall.Mkfifo(filepath.Join(e.project, ".amplifier", "collections.lock"), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	zero := e.otherProject("zero")
	if err := os.Symlink("/dev/zero", filepath.Join(zero, ".amplifier", "collections.lock")); err != nil {
		t.Fatal(err)
	}
	other := e.otherProject("other")
	d := e.start()
	c := e.client()
	for _, p := range []string{e.project, zero} {
		var res query.DiagnosticsResult
		if err := callWithin(t, c, 10*time.Second, "diagnostics", map[string]any{"project": p}, &res); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(p, ".amplifier", "collections.lock")
		if !slices.ContainsFunc(res.Diagnostics, func(dg diag.Diagnostic) bool {
			return dg.Path == lock && dg.Code == diag.CodeNotRegular
		}) {
			t.Errorf("project %s: no %s on its lock: %v", p, diag.CodeNotRegular, res.Diagnostics)
		}
	}
	var r query.ResolveResult
	if err := callWithin(t, c, 10*time.Second, "resolve", map[string]any{"project": other, "name": "other"}, &r); err != nil || !r.Found {
		t.Fatalf("another project's query: %+v, %v", r, err)
	}
	var st query.Status
	if err := callWithin(t, c, 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon did not stop")
	}
}

// TestSlowProjectHoldsNoOtherProject: while a file of one project is being
// read (held here by the test), a question that waits for its writes about
// another project is answered, and so is status.
func TestSlowProjectHoldsNoOtherProject(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := newEnv(t)
	e.collection(filepath.Join(e.projectRoot(), "slow"), "slow", "1.0.0")
	other := e.otherProject("other")
	held := filepath.Join(e.projectRoot(), "slow", "agents", "helper.md")
	var (
		mu      sync.Mutex
		holding bool
	)
	entered, release := make(chan struct{}), make(chan struct{})
	e.startWith(func(o *daemon.Options) {
		o.ReadFile = func(p string) ([]byte, error) {
			mu.Lock()
			h := holding && p == held
			holding = holding && !h
			mu.Unlock()
			if h {
				close(entered)
				<-release
			}
			return os.ReadFile(p)
		}
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	c := e.client()
	for _, p := range []string{e.project, other} {
		if err := callWithin(t, c, 10*time.Second, "collections", map[string]any{"project": p}, nil); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	holding = true
	mu.Unlock()
	e.write(held, agent("helper")+"\nEdited.\n")
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the edited file was never read")
	}
	// The slow project's read is held: the other project must not wait.
	var r query.ResolveResult
	if err := callWithin(t, c, 10*time.Second, "resolve", map[string]any{"project": other, "name": "other"}, &r); err != nil || !r.Found {
		t.Fatalf("another project's query while one is read: %+v, %v", r, err)
	}
	if err := callWithin(t, c, 10*time.Second, "status", nil, nil); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := callWithin(t, c, 10*time.Second, "resolve", map[string]any{"project": e.project, "name": "slow"}, &r); err != nil || !r.Found {
		t.Fatalf("the slow project once read: %+v, %v", r, err)
	}
}

// TestFIFOManifest: a FIFO where a watched manifest should be, present at
// start-up, neither blocks the start nor the socket; status says why the
// bundle is missing.
func TestFIFOManifest(t *testing.T) {
	e := newEnv(t)
	manifest := filepath.Join(e.dir, "bundle", "bundle.md")
	if err := os.MkdirAll(filepath.Dir(manifest), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(manifest, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	cache, err := prepare.New(prepare.Options{Home: filepath.Join(e.dir, "agent-home"), Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	e.startWith(func(o *daemon.Options) { o.Prepare, o.Manifests = cache, []string{manifest} })
	var st query.Status
	if err := callWithin(t, e.client(), 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Bundles) != 1 || st.Bundles[0].State != query.BundleMissing || !strings.Contains(st.Bundles[0].Error, "FIFO") {
		t.Fatalf("bundles %+v, want the manifest missing, naming the FIFO", st.Bundles)
	}
}

// TestProjectParameterChecked: the project a client names must be an
// absolute, clean directory of the user's that holds .amplifier/.
func TestProjectParameterChecked(t *testing.T) {
	e := newEnv(t)
	e.start()
	c := e.client()
	for _, p := range []string{"/", "/etc", "relative/dir", e.project + "/../" + filepath.Base(e.project), e.project + "\x00x",
		filepath.Join(e.dir, "missing")} {
		err := callWithin(t, c, 10*time.Second, "collections", map[string]any{"project": p}, nil)
		var qe *query.Error
		if !errors.As(err, &qe) || qe.Code != query.CodeInvalidParams {
			t.Errorf("project %q: %v, want invalid-params", p, err)
		}
	}
	var st query.Status
	if err := callWithin(t, c, 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Projects) != 0 {
		t.Errorf("registered %v, want none", st.Projects)
	}
}

// TestProjectsAreBounded: beyond the bound, the project asked about least
// recently is forgotten, with its watches.
func TestProjectsAreBounded(t *testing.T) {
	e := newEnv(t)
	e.startWith(func(o *daemon.Options) { o.MaxProjects = 2 })
	c := e.client()
	var projects []string
	for i := range 3 {
		p := e.otherProject(fmt.Sprintf("p%d", i))
		projects = append(projects, p)
		if err := callWithin(t, c, 10*time.Second, "collections", map[string]any{"project": p}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var st query.Status
	if err := callWithin(t, c, 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, p := range st.Projects {
		dirs = append(dirs, p.Dir)
	}
	if !slices.Equal(dirs, projects[1:]) {
		t.Fatalf("projects %v, want %v (the first forgotten)", dirs, projects[1:])
	}
	for _, r := range st.Roots {
		if strings.HasPrefix(r.Path, projects[0]) {
			t.Errorf("the forgotten project's root is still watched: %s", r.Path)
		}
	}
}

// TestEmptiedFileSettles: a document that turns empty (an editor's save
// caught between its truncate and its write) keeps what it said until it
// has stayed empty for a moment; one that stays empty is then reported,
// and a question that waits for its writes sees that.
func TestEmptiedFileSettles(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	helper := filepath.Join(e.userRoot(), "a", "agents", "helper.md")
	d := e.start()
	c := e.client()
	diags := func(noSync bool) []diag.Diagnostic {
		var res query.DiagnosticsResult
		if err := callWithin(t, c, 10*time.Second, "diagnostics", map[string]any{"path": helper, "no_sync": noSync}, &res); err != nil {
			t.Fatal(err)
		}
		return res.Diagnostics
	}
	if ds := diags(false); len(ds) != 0 {
		t.Fatalf("before: %v", ds)
	}
	if err := os.Truncate(helper, 0); err != nil {
		t.Fatal(err)
	}
	// Hand the truncate to the daemon now, as if its watcher had: the
	// emptied file must not be believed yet.
	d.HandleBatch(watcher.Batch{Root: e.userRoot(), Paths: []string{helper}})
	d.WaitApplied()
	if ds := diags(true); len(ds) != 0 {
		t.Fatalf("right after the truncate: %v, want the old (no) diagnostics", ds)
	}
	// A question that waits for its writes waits for the settle too, and
	// then sees the file as it stayed: empty.
	if ds := diags(false); len(ds) != 1 || ds[0].Code != diag.CodeFrontMatterMissing {
		t.Fatalf("once settled: %v, want the empty file reported", ds)
	}
}

// TestRestoredMtimeSeenLive: a rewrite that keeps the size and puts the
// modification time back (cp -p, tar x, touch -r) is seen by the running
// daemon.
func TestRestoredMtimeSeenLive(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	e.start()
	c := e.client()
	helper := filepath.Join(e.userRoot(), "a", "agents", "helper.md")
	count := func() int {
		var res query.DiagnosticsResult
		if err := callWithin(t, c, 10*time.Second, "diagnostics", map[string]any{"path": helper}, &res); err != nil {
			t.Fatal(err)
		}
		return len(res.Diagnostics)
	}
	if n := count(); n != 0 {
		t.Fatalf("before: %d diagnostics", n)
	}
	fi, err := os.Stat(helper)
	if err != nil {
		t.Fatal(err)
	}
	// Same size: "helper" becomes "hepler", a name that differs from the
	// file's (schema/name-mismatch).
	e.write(helper, agent("hepler"))
	if err := os.Chtimes(helper, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("after a same-size rewrite with its mtime put back: %d diagnostics, want 1", n)
	}
}

// TestLargeAnswerThroughTheDaemon: an answer far longer than a request
// may be (100,000 context files) comes through the socket whole.
func TestLargeAnswerThroughTheDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 files")
	}
	e := newEnv(t)
	dir := filepath.Join(e.userRoot(), "big")
	e.write(filepath.Join(dir, "pyproject.toml"), pyproject("big", "1.0.0"))
	const n = 100_000
	for i := range n {
		p := filepath.Join(dir, "context", fmt.Sprintf("d%03d", i/1000), fmt.Sprintf("note-with-a-longer-name-%05d.md", i))
		if i%1000 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.start()
	var res []query.ResourceInfo
	if err := callWithin(t, e.client(), 5*time.Minute, "context", nil, &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != n {
		t.Fatalf("%d context files, want %d", len(res), n)
	}
}

// TestForeignProjectRefused: a project directory, or its .amplifier, that
// belongs to another user is never registered (as git's safe.directory).
func TestForeignProjectRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	e := newEnv(t)
	e.start()
	c := e.client()
	for _, which := range []string{"", ".amplifier"} {
		p := e.otherProject("foreign" + strings.TrimPrefix(which, "."))
		if err := os.Chown(filepath.Join(p, which), 4242, 4242); err != nil {
			t.Fatal(err)
		}
		err := callWithin(t, c, 10*time.Second, "collections", map[string]any{"project": p}, nil)
		var qe *query.Error
		if !errors.As(err, &qe) || qe.Code != query.CodeInvalidParams || !strings.Contains(qe.Message, "another user") {
			t.Errorf("project %s with %q owned by uid 4242: %v, want refused", p, which, err)
		}
	}
	var st query.Status
	if err := callWithin(t, c, 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Projects) != 0 {
		t.Errorf("registered %v, want none", st.Projects)
	}
}
