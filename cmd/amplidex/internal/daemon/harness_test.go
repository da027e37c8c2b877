package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	xref "github.com/amplidex/amplidex/discovery/check" // check is stress_test.go's helper
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/watcher"
)

// The harness drives one daemon with random operations from several
// goroutines at once: projects registered, asked about and forgotten;
// questions over a client's own roots, new sets of them among more than
// the daemon keeps (so that sets are forgotten and expire); clients that
// hang up at once, or after they stopped sending;
// collections (flat and nested, some in a directory named as a
// collection is) and files created, edited (in place and by atomic save),
// renamed and deleted; lock files rewritten; the configuration reloaded;
// editor buffers analyzed; listings made to fail (EMFILE, EACCES, EIO),
// stats too (EIO, ENOMEM: the layout of a collection, a file before it
// is read) and roots rescanned; the daemon restarted, cleanly and as if
// killed.
//
// Its oracle has four parts:
//   - at every quiet point, every project's answers (collections, each
//     name resolved, diagnostics, profiles merged, a buffer analyzed)
//     equal those of a fresh in-process scan of the same tree;
//   - at every quiet point, each name resolves as the harness's own model
//     of the precedence rules says (see model), which shares no code
//     with discovery: a fresh scan runs the code under test, and a bug in
//     it would be in both answers;
//   - at every quiet point, once the answers agree, a write is made and
//     the very next answers (which wait for the writes made before them)
//     must already agree with a fresh scan and the model: read-your-writes,
//     not only convergence;
//   - during the run, every call is answered within callDeadline, no
//     answer names a collection no state of the tree had, and the
//     collections no operation touches are in every answer;
//   - when it ends, no goroutine of the daemon and no descriptor is left.
//
// It runs for a few seconds in `go test`; AMPLIDEX_SOAK=10m makes it run
// that long, and AMPLIDEX_DRILL_SEED replays a seed it printed.

// callDeadline bounds every call of the harness: a call not answered in
// that time is a hang.
const callDeadline = 45 * time.Second

// converge bounds how long the daemon may take, once the faults stop, to
// answer as a fresh scan does: more than the longest retry wait.
const converge = 60 * time.Second

// TestHarness runs the harness.
func TestHarness(t *testing.T) {
	budget := 4 * time.Second
	if s := os.Getenv("AMPLIDEX_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("AMPLIDEX_SOAK=%q: %v", s, err)
		}
		budget = d
	}
	// Past the budget: the last round, its quiet point (at most converge)
	// and the end of the run.
	deadline(t, budget+converge+5*time.Minute)
	seed := drillSeed(t)
	goroutines := runtime.NumGoroutine()
	fds := openFDs()
	h := newHarness(t, seed)
	h.run(budget)
	h.stop()
	t.Logf("seed %d: %d operations in %d rounds (%d restarts, %d as if killed, %d clients hung up), %d quiet points checked (in %v), %d of them for read-your-writes",
		seed, h.ops.Load(), h.rounds, h.restarts, h.crashes, h.hangups.Load(), h.checks, h.quietTime.Round(time.Millisecond), h.rywChecks)
	h.leaks(goroutines, fds)
}

// harness is one run: a tree of roots, a daemon, and what the run did.
type harness struct {
	t        *testing.T
	e        *env
	seed     uint64
	r        *rand.Rand // the main goroutine's
	projects []string
	bundled  [2]string
	faults   faults
	ops      atomic.Int64
	failed   atomic.Bool
	log      logBuffer

	rounds, restarts, crashes, checks, rywChecks int
	quietTime                                    time.Duration
	hangups                                      atomic.Int64
	// extra are bundled roots that sets of a client's roots name, more
	// of them than the daemon keeps sets (maxSets).
	extra []string

	mu sync.Mutex // guards fields below
	// names holds, by collection directory, every name a collection
	// there was ever given (and the directory's own name).
	names map[string]map[string]bool
	// config is which bundled roots the configuration holds: bit 0 the
	// first, bit 1 the second.
	config int

	// dmu is held for reading by every operation and for writing by a
	// restart; reload serialises reloads, so that config is the
	// daemon's.
	dmu    sync.RWMutex
	d      *daemon.Daemon
	reload sync.Mutex
	// journal is the last operations of the run, for a failure to show.
	journal journal
	// fsmu is held for reading by the operations that write a collection
	// in place and for writing by a rename, so that the names a renamed
	// directory had are all known when it moves.
	fsmu sync.RWMutex
}

// anchor is the directory name of the collection of each root that no
// operation touches.
const anchor = "anchor"

func newHarness(t *testing.T, seed uint64) *harness {
	e := newEnv(t)
	h := &harness{t: t, e: e, seed: seed, r: rand.New(rand.NewPCG(seed, 0)),
		bundled: [2]string{e.bundled, filepath.Join(e.dir, "bundled2")},
		names:   map[string]map[string]bool{}, config: 1}
	h.projects = []string{e.project}
	for i := 1; i < 3; i++ {
		p := filepath.Join(e.dir, fmt.Sprintf("proj%d", i))
		if err := os.MkdirAll(filepath.Join(p, ".amplifier"), 0o755); err != nil {
			t.Fatal(err)
		}
		h.projects = append(h.projects, p)
	}
	for _, root := range h.allRoots() {
		h.writeAnchor(root)
		for i := range 3 {
			h.writeCollection(h.r, filepath.Join(root, fmt.Sprintf("d%d", i)))
		}
	}
	for i := range 2 * maxSets {
		root := filepath.Join(e.dir, fmt.Sprintf("extra%d", i))
		h.extra = append(h.extra, root)
		h.writeAnchor(root)
		h.writeCollection(h.r, filepath.Join(root, "d0"))
	}
	h.start()
	return h
}

// maxSets is the daemon's bound of sets of a client's roots in the
// harness, and expireSets how soon one nobody uses is forgotten: small,
// so that both happen during a run.
const (
	maxSets    = 3
	expireSets = 300 * time.Millisecond
)

// allRoots returns every root the harness writes in: the projects', the
// user's and both bundled ones.
func (h *harness) allRoots() []string {
	var out []string
	for _, p := range h.projects {
		out = append(out, filepath.Join(p, ".amplifier", "collections"))
	}
	return append(out, h.e.userRoot(), h.bundled[0], h.bundled[1])
}

// bundledNow returns the bundled roots of the configuration.
func (h *harness) bundledNow() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.bundledOf(h.config)
}

func (h *harness) bundledOf(config int) []string {
	var out []string
	for i, b := range h.bundled {
		if config&(1<<i) != 0 {
			out = append(out, b)
		}
	}
	return out
}

// options are the daemon's options with config's bundled roots.
func (h *harness) options(config int) daemon.Options {
	return daemon.Options{Paths: h.e.paths, Home: h.e.home, Bundled: h.bundledOf(config), NoSync: true,
		MaxRootSets: maxSets, ForgetRootSetsAfter: expireSets,
		Logger:   slog.New(slog.NewTextHandler(&h.log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Watch:    watcher.Options{Debounce: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond},
		ReadDir:  h.faults.readDir,
		ReadFile: h.faults.readFile,
		Stat:     h.faults.stat,
	}
}

// start starts the daemon. h.dmu is held for writing, or nothing runs.
func (h *harness) start() {
	h.mu.Lock()
	config := h.config
	h.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		d, err := daemon.Start(context.Background(), h.options(config))
		h.d = d
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			h.t.Fatalf("seed %d: start the daemon: %v", h.seed, err)
		}
	case <-time.After(callDeadline):
		h.t.Fatalf("seed %d: the daemon did not start within %v", h.seed, callDeadline)
	}
}

// stop closes the daemon.
func (h *harness) stop() {
	if err := h.d.Close(); err != nil {
		h.t.Errorf("seed %d: close: %v", h.seed, err)
	}
}

// run runs rounds of concurrent operations, each ended by a quiet point
// checked against a fresh scan, until the budget is spent.
func (h *harness) run(budget time.Duration) {
	end := time.Now().Add(budget)
	for h.rounds < 2 || time.Now().Before(end) {
		if h.failed.Load() || h.t.Failed() {
			return
		}
		h.rounds++
		h.round(time.Duration(200+h.r.IntN(400)) * time.Millisecond)
		h.faults.clear()
		h.quiet("after round " + fmt.Sprint(h.rounds))
		switch h.r.IntN(6) {
		case 0:
			h.restart(false)
			h.quiet("after a restart")
		case 1:
			h.restart(true)
			h.quiet("after a restart as if killed")
		}
	}
}

// restart stops the daemon, cleanly or as a kill would, and starts it
// again.
func (h *harness) restart(killed bool) {
	h.dmu.Lock()
	defer h.dmu.Unlock()
	h.journal.add("restart (killed: %v)", killed)
	if killed {
		h.crashes++
		h.d.Crash()
	} else {
		h.restarts++
		if err := h.d.Close(); err != nil {
			h.t.Fatalf("seed %d: close: %v", h.seed, err)
		}
	}
	h.start()
}

// round runs operations on four goroutines for d.
func (h *harness) round(d time.Duration) {
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		r := rand.New(rand.NewPCG(h.seed, uint64(h.rounds*16+w+1)))
		go func() {
			defer wg.Done()
			c := h.dial()
			defer c.Close()
			for time.Now().Before(stop) && !h.failed.Load() {
				h.op(r, c)
				h.ops.Add(1)
			}
		}()
	}
	wg.Wait()
}

// dial connects to the daemon.
func (h *harness) dial() *query.Client {
	ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
	defer cancel()
	c, err := query.Dial(ctx, h.e.paths.Socket)
	if err != nil {
		h.fail("dial: %v", err)
	}
	return c
}

// fail reports a failure from any goroutine, with the seed, and ends the
// run.
func (h *harness) fail(format string, args ...any) {
	if !h.failed.Swap(true) {
		log := h.log.String()
		if len(log) > 8<<10 {
			log = "…" + log[len(log)-8<<10:]
		}
		h.t.Logf("the daemon's log (warnings and errors):\n%s", log)
	}
	h.t.Errorf("seed %d: "+format, append([]any{h.seed}, args...)...)
}

// op runs one random operation.
func (h *harness) op(r *rand.Rand, c *query.Client) {
	h.dmu.RLock()
	defer h.dmu.RUnlock()
	if r.IntN(16) == 0 {
		h.hangUp(r)
		return
	}
	roots := h.allRoots()
	root := roots[r.IntN(len(roots))]
	dir := filepath.Join(root, dirName(r))
	rel := h.rel(dir)
	switch n := r.IntN(100); {
	case n < 22:
		h.fsmu.RLock()
		h.journal.add("write %s", rel)
		h.writeCollection(r, dir)
		h.journal.add("wrote %s", rel)
		h.fsmu.RUnlock()
	case n < 37:
		h.fsmu.RLock()
		h.journal.add("edit a file of %s", rel)
		h.editFile(r, dir)
		h.fsmu.RUnlock()
	case n < 42:
		h.fsmu.Lock()
		to := filepath.Join(root, dirName(r))
		h.journal.add("rename %s to %s", rel, h.rel(to))
		h.rename(dir, to)
		h.fsmu.Unlock()
	case n < 46:
		h.journal.add("remove %s", rel)
		os.RemoveAll(dir)
	case n < 50:
		h.journal.add("remove a file of %s", rel)
		h.removeFile(r, dir)
	case n < 54:
		h.writeLock(r)
	case n < 76:
		h.query(r, c)
	case n < 79:
		h.forget(r, c)
	case n < 81:
		h.reloadConfig(r)
	case n < 88:
		h.analyze(r, c)
	case n < 93:
		at := h.faults.set(r, root, dir)
		h.journal.add("fault %s; rescan %s", at, h.rel(root))
		h.d.HandleBatch(watcher.Batch{Root: root, Rescan: true})
	default:
		h.journal.add("rescan %s", h.rel(root))
		h.d.HandleBatch(watcher.Batch{Root: root, Rescan: true})
	}
}

// rel is p relative to the run's directory, for the journal.
func (h *harness) rel(p string) string {
	if r, err := filepath.Rel(h.e.dir, p); err == nil {
		return r
	}
	return p
}

// journal keeps the last operations of a run.
type journal struct {
	mu      sync.Mutex // guards fields below
	entries []string
	start   time.Time
}

const journalSize = 4000

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.start.IsZero() {
		j.start = time.Now()
	}
	j.entries = append(j.entries, fmt.Sprintf("%8.3fs ", time.Since(j.start).Seconds())+fmt.Sprintf(format, args...))
	if len(j.entries) > journalSize {
		j.entries = slices.Delete(j.entries, 0, len(j.entries)-journalSize)
	}
}

// about returns the entries that mention one of words, or that every
// reader needs (restarts, reloads, forgets, quiet points).
func (j *journal) about(words ...string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var b strings.Builder
	for _, e := range j.entries {
		keep := strings.Contains(e, "restart") || strings.Contains(e, "reload") || strings.Contains(e, "forget") || strings.Contains(e, "quiet")
		for _, w := range words {
			keep = keep || strings.Contains(e, w)
		}
		if keep {
			b.WriteString(e + "\n")
		}
	}
	return b.String()
}

// remember records that the collection at dir may be called name.
func (h *harness) remember(dir, name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.names[dir] == nil {
		h.names[dir] = map[string]bool{filepath.Base(dir): true}
	}
	h.names[dir][name] = true
}

// mayBe reports whether a collection at dir called name is one some state
// of the tree had.
func (h *harness) mayBe(dir, name string) bool {
	if name == filepath.Base(dir) {
		return true // a directory without metadata goes by its name
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.names[dir][name]
}

func write(path, content string) {
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(content), 0o644)
}

// save writes path as an editor's atomic save does: a temporary file
// renamed over it.
func save(path, content string) {
	os.MkdirAll(filepath.Dir(path), 0o755)
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if os.WriteFile(tmp, []byte(content), 0o644) == nil {
		os.Rename(tmp, path)
	}
}

// writeAnchor writes the collection no operation touches.
func (h *harness) writeAnchor(root string) {
	dir := filepath.Join(root, anchor)
	name := anchorName(root)
	h.remember(dir, name)
	write(filepath.Join(dir, "pyproject.toml"), fmt.Sprintf("[project]\nname = %q\nversion = \"1.0.0\"\ndescription = \"d\"\n", name))
	write(filepath.Join(dir, "agents", "a0.md"), "---\nmeta:\n  name: a0\n  description: agent\n---\nBody\n")
}

// anchorName is the name of a root's anchor collection.
func anchorName(root string) string {
	owner := filepath.Base(root)
	if owner == "collections" {
		owner = filepath.Base(filepath.Dir(filepath.Dir(root)))
	}
	return "anchor-" + strings.ToLower(strings.TrimPrefix(owner, "."))
}

// writeCollection writes (or rewrites) a random collection whose names
// and references come from a small pool, so that they shadow and refer
// to each other.
func (h *harness) writeCollection(r *rand.Rand, dir string) {
	name := fmt.Sprintf("c%d", r.IntN(6))
	h.remember(dir, name)
	os.RemoveAll(dir)
	py := fmt.Sprintf("[project]\nname = %q\nversion = \"1.%d.0\"\ndescription = \"d\"\n", name, r.IntN(3))
	switch r.IntN(8) {
	case 0:
		py = fmt.Sprintf("[project]\nname = %q\n", name) // invalid
	case 1:
		py += fmt.Sprintf("\n[tool.amplifier.collection.requires]\nc%d = \">=1.1.0\"\n", r.IntN(6))
	}
	if r.IntN(12) != 0 {
		write(filepath.Join(dir, "pyproject.toml"), py)
	}
	base := dir
	if r.IntN(4) == 0 {
		// Nested, as pip installs a collection: its resources in the
		// package named after it.
		base = filepath.Join(dir, name)
		write(filepath.Join(base, "__init__.py"), "")
	}
	for i := range r.IntN(3) {
		write(filepath.Join(base, "profiles", fmt.Sprintf("p%d.md", i)), profileText(r, i))
	}
	for i := range r.IntN(3) {
		write(filepath.Join(base, "agents", fmt.Sprintf("a%d.md", i)), agentText(r, i))
	}
	for i := range r.IntN(2) {
		write(filepath.Join(base, "context", fmt.Sprintf("k%d.md", i)), fmt.Sprintf("@c%d:context/k0.md\n", r.IntN(6)))
	}
}

// dirName picks the directory of a root an operation writes in: d0 to
// d3, or c1, named as a collection may be (a directory without usable
// metadata answers to its own name).
func dirName(r *rand.Rand) string {
	if r.IntN(5) == 0 {
		return "c1"
	}
	return fmt.Sprintf("d%d", r.IntN(4))
}

func profileText(r *rand.Rand, i int) string {
	ext := ""
	switch r.IntN(4) {
	case 0:
		ext = fmt.Sprintf("  extends: c%d:p%d\n", r.IntN(6), r.IntN(3))
	case 1:
		ext = fmt.Sprintf("  extends: p%d\n", r.IntN(3))
	}
	agents := ""
	if r.IntN(2) == 0 {
		agents = fmt.Sprintf("agents:\n  - a%d\n  - c%d:a%d\n", r.IntN(4), r.IntN(6), r.IntN(3))
	}
	session := "session:\n  orchestrator:\n    module: loop\n  context:\n    module: ctx\n"
	if ext != "" && r.IntN(2) == 0 {
		session = ""
	}
	switch r.IntN(10) {
	case 0:
		session += "  bogus: 1\n" // a schema error
	case 1:
		session += "  bogus: 1  # amplidex: ignore[schema/unknown-key]\n" // suppressed
	case 2:
		session += "# amplidex: ignore-file[ref/]\n" // suppresses what references it holds, or nothing
	}
	return fmt.Sprintf("---\nprofile:\n  name: p%d\n  version: 1.0.0\n  description: x\n%s%s%s---\nSee @c%d:context/k%d.md\n",
		i, ext, session, agents, r.IntN(6), r.IntN(2))
}

func agentText(r *rand.Rand, i int) string {
	return fmt.Sprintf("---\nmeta:\n  name: a%d\n  description: agent\n---\nUses @c%d:agents/a%d.md\n", i, r.IntN(6), r.IntN(3))
}

// editFile rewrites one file of a collection, in place or as an editor's
// atomic save.
func (h *harness) editFile(r *rand.Rand, dir string) {
	var path, text string
	switch r.IntN(4) {
	case 0:
		i := r.IntN(3)
		path, text = filepath.Join(dir, "agents", fmt.Sprintf("a%d.md", i)), agentText(r, i)
	case 1:
		name := fmt.Sprintf("c%d", r.IntN(6))
		h.remember(dir, name)
		path, text = filepath.Join(dir, "pyproject.toml"), fmt.Sprintf("[project]\nname = %q\nversion = \"1.%d.0\"\ndescription = \"d\"\n", name, r.IntN(3))
	default:
		i := r.IntN(3)
		path, text = filepath.Join(dir, "profiles", fmt.Sprintf("p%d.md", i)), profileText(r, i)
	}
	if r.IntN(2) == 0 {
		save(path, text)
	} else {
		write(path, text)
	}
}

// rename moves a collection directory to another name in its root; the
// names it had go with it.
func (h *harness) rename(from, to string) {
	if from == to {
		return
	}
	h.mu.Lock()
	if h.names[to] == nil {
		h.names[to] = map[string]bool{filepath.Base(to): true}
	}
	for n := range h.names[from] {
		h.names[to][n] = true
	}
	h.mu.Unlock()
	os.RemoveAll(to)
	os.Rename(from, to)
}

// removeFile deletes one file of a collection.
func (h *harness) removeFile(r *rand.Rand, dir string) {
	files := []string{"pyproject.toml", "profiles/p0.md", "profiles/p1.md", "agents/a0.md", "context/k0.md"}
	os.Remove(filepath.Join(dir, filepath.FromSlash(files[r.IntN(len(files))])))
}

// writeLock rewrites a project's or the user's lock file, now and then
// with bytes that are not a lock file.
func (h *harness) writeLock(r *rand.Rand) {
	dirs := append(slices.Clone(h.projects), h.e.home)
	lock := filepath.Join(dirs[r.IntN(len(dirs))], ".amplifier", "collections.lock")
	text := fmt.Sprintf(`{"version": "1.1", "collections": {"c%d": {"name": "c%d", "version": "1.0.0", "source": "git+https://x/y@main", "path": "collections/d%d", "modules": {}}}}`,
		r.IntN(6), r.IntN(6), r.IntN(5))
	if r.IntN(6) == 0 {
		text = "{not json"
	}
	save(lock, text)
}

// project picks a project ("" is none).
func (h *harness) project(r *rand.Rand) string {
	if r.IntN(5) == 0 {
		return ""
	}
	return h.projects[r.IntN(len(h.projects))]
}

// callErr makes a call within the deadline; an error the daemon may
// rightly give in a race (a project forgotten while it was asked about)
// is no failure.
func (h *harness) callErr(c *query.Client, what string, call func(ctx context.Context) error) bool {
	ok, _ := h.callDegraded(c, what, call)
	return ok
}

// callDegraded is callErr that also reports whether the daemon said a
// root could not be listed yet: no failure, what faults cause until a
// retry succeeds.
func (h *harness) callDegraded(c *query.Client, what string, call func(ctx context.Context) error) (ok, degraded bool) {
	ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
	defer cancel()
	err := call(ctx)
	var qe *query.Error
	switch {
	case err == nil:
		return true, false
	case errors.Is(err, context.DeadlineExceeded):
		h.fail("%s was not answered within %v: a hang", what, callDeadline)
	case errors.As(err, &qe) && qe.Code == query.CodeDegraded:
		return false, true
	case errors.As(err, &qe) && qe.Code == query.CodeNotFound:
	default:
		h.fail("%s: %v", what, err)
	}
	return false, false
}

// query asks a random question and checks the answer against what the
// tree ever held.
func (h *harness) query(r *rand.Rand, c *query.Client) {
	p := h.project(r)
	common := query.Common{Project: p, NoSync: r.IntN(4) == 0, Roots: h.clientRoots(r)}
	switch r.IntN(4) {
	case 0:
		var out *query.ResolveResult
		if h.callErr(c, "resolve", func(ctx context.Context) (err error) {
			out, _, err = query.Call(ctx, c, query.MethodResolve, query.NameParams{Common: common, Name: fmt.Sprintf("c%d", r.IntN(6))})
			return err
		}) && out.Winner != nil && !h.mayBe(out.Winner.Dir, out.Winner.Name) {
			h.fail("project %q: %s resolves to %s, which never held it", p, out.Name, out.Winner.Dir)
		}
	case 1:
		h.callErr(c, "diagnostics", func(ctx context.Context) error {
			_, _, err := query.Call(ctx, c, query.MethodDiagnostics, query.DiagnosticsParams{Common: common})
			return err
		})
	case 2:
		h.callErr(c, "status", func(ctx context.Context) error {
			_, _, err := query.Call(ctx, c, query.MethodStatus, query.StatusParams{})
			return err
		})
	default:
		var cols []query.CollectionInfo
		if !h.callErr(c, "collections", func(ctx context.Context) (err error) {
			cols, _, err = query.Call(ctx, c, query.MethodCollections, query.ListParams{Common: common})
			return err
		}) {
			return
		}
		h.checkCollections(p, cols)
	}
}

// otherRoots are the roots of a client whose configuration differs from
// the daemon's: the second bundled root alone.
func (h *harness) otherRoots() *query.Roots {
	return &query.Roots{Home: h.e.home, Bundled: []string{h.bundled[1]}}
}

// clientRoots picks the roots a question is sent with: none (the daemon's
// own), another client's, or a set among more than the daemon keeps.
func (h *harness) clientRoots(r *rand.Rand) *query.Roots {
	switch r.IntN(8) {
	case 0, 1:
		return h.otherRoots()
	case 2:
		return h.extraRoots(r)
	}
	return nil
}

// extraRoots are the roots of a client whose bundled root is one of the
// extra ones.
func (h *harness) extraRoots(r *rand.Rand) *query.Roots {
	return &query.Roots{Home: h.e.home, Bundled: []string{h.extra[r.IntN(len(h.extra))]}}
}

// hangUp is a client that sends one question and hangs up: at once, or
// after it stopped sending and read the answer's first line (which may be
// an overloaded refusal). Nothing of it may stay in the daemon: the leak
// check at the end of the run counts goroutines and descriptors.
func (h *harness) hangUp(r *rand.Rand) {
	nc, err := net.Dial("unix", h.e.paths.Socket)
	if err != nil {
		return // the queue is full: the daemon is busy
	}
	defer nc.Close()
	h.hangups.Add(1)
	common := query.Common{Project: h.project(r), NoSync: r.IntN(2) == 0, Roots: h.clientRoots(r)}
	var params any = query.ListParams{Common: common}
	method := []string{"collections", "resolve", "diagnostics", "subscribe"}[r.IntN(4)]
	switch method {
	case "resolve":
		params = query.NameParams{Common: common, Name: fmt.Sprintf("c%d", r.IntN(6))}
	case "subscribe":
		params = query.SubscribeParams{Common: common}
	}
	line, err := json.Marshal(map[string]any{"id": 1, "method": method, "params": params})
	if err != nil {
		h.fail("encode a request: %v", err)
		return
	}
	h.journal.add("a client asks %s and hangs up", method)
	if _, err := nc.Write(append(line, '\n')); err != nil || r.IntN(2) == 0 {
		return
	}
	nc.(*net.UnixConn).CloseWrite()
	nc.SetReadDeadline(time.Now().Add(callDeadline))
	if _, err := bufio.NewReader(nc).ReadString('\n'); err != nil {
		h.fail("a client that stopped sending got no answer to %s: %v", method, err)
	}
}

// checkCollections checks an answer given during the run: every
// collection in it is one some state of the tree had, and the anchors of
// the project's and the user's roots are there.
func (h *harness) checkCollections(project string, cols []query.CollectionInfo) {
	found := map[string]bool{}
	for _, col := range cols {
		found[col.Dir] = true
		if !h.mayBe(col.Dir, col.Name) {
			h.fail("project %q: the answer shows collection %q at %s, which no state of the tree had", project, col.Name, col.Dir)
		}
	}
	want := []string{filepath.Join(h.e.userRoot(), anchor)}
	if project != "" {
		want = append(want, filepath.Join(project, ".amplifier", "collections", anchor))
	}
	for _, a := range want {
		if !found[a] {
			var roots []string
			for _, ri := range h.d.Catalog().State().Roots() {
				roots = append(roots, fmt.Sprintf("%s: %d collections, failed %q, unlisted %v, degraded %v", ri.Root.Path, ri.Collections, ri.Failed, ri.Unlisted, ri.Degraded))
			}
			h.fail("project %q: the answer lacks %s, which no operation touches (%d collections in the answer); the roots now:\n%s",
				project, a, len(cols), strings.Join(roots, "\n"))
		}
	}
}

// forget drops a random project.
func (h *harness) forget(r *rand.Rand, c *query.Client) {
	p := h.projects[r.IntN(len(h.projects))]
	h.journal.add("forget %s", h.rel(p))
	h.callErr(c, "forget", func(ctx context.Context) error {
		_, _, err := query.Call(ctx, c, query.MethodForget, query.ForgetParams{Dir: p})
		return err
	})
}

// reloadConfig reloads the daemon with another set of bundled roots, as
// a SIGHUP after an edit of the configuration does.
func (h *harness) reloadConfig(r *rand.Rand) {
	h.reload.Lock()
	defer h.reload.Unlock()
	config := 1 + r.IntN(3)
	h.journal.add("reload with bundled %v", h.bundledOf(config))
	if err := h.d.Reload(h.options(config)); err != nil {
		h.fail("reload: %v", err)
		return
	}
	h.mu.Lock()
	h.config = config
	h.mu.Unlock()
}

// analyze asks about an editor's unsaved buffer of a random profile.
func (h *harness) analyze(r *rand.Rand, c *query.Client) {
	p := h.projects[r.IntN(len(h.projects))]
	path := filepath.Join(p, ".amplifier", "collections", fmt.Sprintf("d%d", r.IntN(5)), "profiles", fmt.Sprintf("p%d.md", r.IntN(3)))
	ops := []query.AnalyzeOp{query.OpDiagnose, query.OpComplete, query.OpHover, query.OpDefinition}
	params := query.AnalyzeParams{Common: query.Common{Project: p}, Op: ops[r.IntN(len(ops))], Path: path,
		Text: profileText(r, r.IntN(3)), Position: diag.Position{Line: r.IntN(8), Character: r.IntN(12)}}
	h.callErr(c, "analyze", func(ctx context.Context) error {
		_, _, err := query.Call(ctx, c, query.MethodAnalyze, params)
		return err
	})
}

// quiet waits, with the faults off and nothing else running, until every
// project's answers equal a fresh scan's and the model's, and fails when
// they do not within converge; then it checks read-your-writes.
func (h *harness) quiet(when string) {
	if h.failed.Load() {
		return
	}
	h.checks++
	h.journal.add("quiet point (%s)", when)
	c := h.dial()
	defer c.Close()
	deadline := time.Now().Add(converge)
	began := time.Now()
	defer func() { h.quietTime += time.Since(began) }()
	for {
		diff := h.compare(c)
		if diff == "" {
			h.readYourWrites(c, when)
			return
		}
		if h.failed.Load() {
			return
		}
		if time.Now().After(deadline) {
			h.fail("%s: the daemon's answers differ from a fresh scan's or the model's:\n%s", when, diff)
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// readYourWrites makes one write, with the answers agreeing, and checks
// that the very next answers agree with a fresh scan and the model: each
// waits for the changes made before it was sent (PRODUCT.md: "a query
// answers only after every file change made before it was sent has been
// indexed"), so none may show the tree as it was before the write. The
// first questions, about a project whose View holds the root written
// in, are sent at once, before the fresh scan reads the tree.
func (h *harness) readYourWrites(c *query.Client, when string) {
	r := h.r
	type held struct {
		root, project string
	}
	var choices []held
	for _, p := range h.projects {
		choices = append(choices, held{filepath.Join(p, ".amplifier", "collections"), p})
	}
	for _, root := range append([]string{h.e.userRoot()}, h.bundledNow()...) {
		choices = append(choices, held{root, ""})
	}
	in := choices[r.IntN(len(choices))]
	dir := filepath.Join(in.root, dirName(r))
	var what string
	switch r.IntN(5) {
	case 0, 1:
		what = "write " + h.rel(dir)
		h.writeCollection(r, dir)
	case 2:
		what = "edit a file of " + h.rel(dir)
		h.editFile(r, dir)
	case 3:
		what = "remove a file of " + h.rel(dir)
		h.removeFile(r, dir)
	default:
		to := filepath.Join(in.root, dirName(r))
		what = "rename " + h.rel(dir) + " to " + h.rel(to)
		h.rename(dir, to)
	}
	h.rywChecks++
	h.journal.add("read-your-writes (%s): %s", when, what)
	common := query.Common{Project: in.project}
	var cols []query.CollectionInfo
	var diags *query.DiagnosticsResult
	for _, call := range []func(ctx context.Context) error{
		func(ctx context.Context) (err error) {
			cols, _, err = query.Call(ctx, c, query.MethodCollections, query.ListParams{Common: common})
			return err
		},
		func(ctx context.Context) (err error) {
			diags, _, err = query.Call(ctx, c, query.MethodDiagnostics, query.DiagnosticsParams{Common: common})
			return err
		},
	} {
		if ok, degraded := h.callDegraded(c, "a question after a write", call); !ok {
			h.fail("%s: read-your-writes: after %s, no answer (degraded: %v)", when, what, degraded)
			return
		}
	}
	cat := catalog.New(catalog.Options{Home: h.e.home, Bundled: h.bundledNow(), Loader: &discovery.Loader{}})
	st, _ := cat.AddProject(in.project)
	v, _ := st.View(cat.ProjectKey(in.project))
	wantCols, err := query.MethodCollections.Answer(v, query.ListParams{Common: common})
	if g, w := canonical(cols, nil), canonical(wantCols, err); g != w {
		h.fail("%s: read-your-writes: after %s, the collections of project %q (-) are not the tree's (+):\n%s", when, what, in.project, lineDiff(g, w))
		return
	}
	wantDiags, err := query.MethodDiagnostics.Answer(v, query.DiagnosticsParams{Common: common})
	if g, w := canonical(diags, nil), canonical(wantDiags, err); g != w {
		h.fail("%s: read-your-writes: after %s, the diagnostics of project %q (-) are not the tree's (+):\n%s", when, what, in.project, lineDiff(g, w))
		return
	}
	if diff := h.compare(c); diff != "" {
		h.fail("%s: read-your-writes: after %s, the next answers differ from the tree's:\n%s", when, what, diff)
	}
}

// compare returns how the daemon's answers for every project differ from
// a fresh in-process scan's ("" when they agree).
func (h *harness) compare(c *query.Client) string {
	for _, roots := range []*query.Roots{nil, h.otherRoots(), h.extraRoots(h.r)} {
		if diff := h.compareWith(c, roots); diff != "" {
			return diff
		}
	}
	return ""
}

// compareWith is compare for the questions sent with roots (nil: the
// daemon's own).
func (h *harness) compareWith(c *query.Client, roots *query.Roots) string {
	bundled := h.bundledNow()
	if roots != nil {
		bundled = roots.Bundled
	}
	for _, p := range append([]string{""}, h.projects...) {
		cat := catalog.New(catalog.Options{Home: h.e.home, Bundled: bundled, Loader: &discovery.Loader{}})
		st, _ := cat.AddProject(p)
		v, _ := st.View(cat.ProjectKey(p))
		common := query.Common{Project: p, Roots: roots}
		cases := []struct {
			name string
			ask  func(ctx context.Context) (any, error)
			want func() (any, error)
		}{
			{"collections", func(ctx context.Context) (any, error) {
				r, _, err := query.Call(ctx, c, query.MethodCollections, query.ListParams{Common: common})
				return r, err
			}, func() (any, error) { return query.MethodCollections.Answer(v, query.ListParams{Common: common}) }},
			{"diagnostics", func(ctx context.Context) (any, error) {
				r, _, err := query.Call(ctx, c, query.MethodDiagnostics, query.DiagnosticsParams{Common: common})
				return r, err
			}, func() (any, error) { return query.MethodDiagnostics.Answer(v, query.DiagnosticsParams{Common: common}) }},
			{"agents", func(ctx context.Context) (any, error) {
				r, _, err := query.Call(ctx, c, query.MethodAgents, query.ListParams{Common: common})
				return r, err
			}, func() (any, error) { return query.MethodAgents.Answer(v, query.ListParams{Common: common}) }},
		}
		for i := range 6 {
			params := query.NameParams{Common: common, Name: fmt.Sprintf("c%d", i)}
			cases = append(cases, struct {
				name string
				ask  func(ctx context.Context) (any, error)
				want func() (any, error)
			}{"resolve " + params.Name, func(ctx context.Context) (any, error) {
				r, _, err := query.Call(ctx, c, query.MethodResolve, params)
				return r, err
			}, func() (any, error) { return query.MethodResolve.Answer(v, params) }})
		}
		for _, w := range v.Set.Winners() {
			for _, res := range w.Resources {
				if res.Kind != discovery.KindProfile {
					continue
				}
				params := query.ProfileParams{Common: common, Ref: w.Name + ":" + res.Name, Merged: true}
				cases = append(cases, struct {
					name string
					ask  func(ctx context.Context) (any, error)
					want func() (any, error)
				}{"profile --merged " + params.Ref, func(ctx context.Context) (any, error) {
					r, _, err := query.Call(ctx, c, query.MethodProfile, params)
					return r, err
				}, func() (any, error) { return query.MethodProfile.Answer(v, params) }})
				if p != "" && strings.HasPrefix(res.Path, p) {
					text, err := os.ReadFile(res.Path)
					if err != nil {
						continue
					}
					ap := query.AnalyzeParams{Common: common, Op: query.OpDiagnose, Path: res.Path, Text: string(text)}
					cases = append(cases, struct {
						name string
						ask  func(ctx context.Context) (any, error)
						want func() (any, error)
					}{"analyze " + res.Path, func(ctx context.Context) (any, error) {
						r, _, err := query.Call(ctx, c, query.MethodAnalyze, ap)
						return r, err
					}, func() (any, error) {
						ws := analysis.NewWorkspace(freshViews{cat}, analysis.WorkspaceOptions{})
						return ws.Analyze(context.Background(), v, ap)
					}})
				}
			}
		}
		for _, tc := range cases {
			var got any
			ok, degraded := h.callDegraded(c, tc.name, func(ctx context.Context) (err error) {
				got, err = tc.ask(ctx)
				return err
			})
			if !ok {
				return fmt.Sprintf("project %q: %s: no answer (degraded: %v)", p, tc.name, degraded)
			}
			want, err := tc.want()
			g, w := canonical(got, nil), canonical(want, err)
			if g != w {
				return fmt.Sprintf("project %q (roots %v): %s: the daemon's answer (-) and a fresh scan's (+) differ:\n%s%s", p, roots, tc.name, lineDiff(g, w), h.explain(p, v))
			}
		}
		var modelRoots []string
		if p != "" {
			modelRoots = append(modelRoots, filepath.Join(p, ".amplifier", "collections"))
		}
		modelRoots = append(append(modelRoots, h.e.userRoot()), bundled...)
		if diff := h.compareModel(c, common, modelRoots); diff != "" {
			return diff
		}
	}
	return ""
}

// explain says, for the first collection whose cross-reference
// diagnostics differ between the daemon and a fresh scan, where the
// difference comes from: the daemon's kept diagnostics against a check of
// its own Set now, and that against the fresh scan's.
func (h *harness) explain(project string, fresh *catalog.View) string {
	v, ok := h.d.Catalog().State().View(project)
	if !ok {
		return "\n(the daemon has no View of the project)"
	}
	for _, dc := range v.Set.Collections() {
		if fresh.Set.At(dc.Dir) == nil {
			_, err := os.Stat(dc.Dir)
			return fmt.Sprintf("\n(the daemon's View has %s (%s), which the fresh one lacks; on disk: %v)\nwatched: %v\n%s", dc.Dir, dc.Name, err,
				h.d.WatchedRoots(), h.journal.about(h.rel(dc.Dir), h.rel(filepath.Dir(dc.Dir))))
		}
	}
	rels := func(c *discovery.Collection) []string {
		var out []string
		for _, r := range c.Resources {
			out = append(out, r.Rel)
		}
		return out
	}
	for _, fc := range fresh.Set.Collections() {
		dc := v.Set.At(fc.Dir)
		if dc == nil {
			return fmt.Sprintf("\n(the daemon's View lacks %s)", fc.Dir)
		}
		if a, b := rels(dc), rels(fc); !slices.Equal(a, b) || dc.Name != fc.Name {
			return fmt.Sprintf("\n%s: the daemon holds %s with %v (degraded %q), a fresh scan %s with %v", fc.Dir, dc.Name, a, dc.Degraded, fc.Name, b)
		}
	}
	// A file whose own diagnostics differ: the daemon holds stale Facts.
	for _, fc := range fresh.Set.Collections() {
		dc := v.Set.At(fc.Dir)
		own := func(c *discovery.Collection) map[string]string {
			out := map[string]string{}
			for _, d := range c.OwnDiagnostics() {
				out[d.Path] += d.String() + "\n"
			}
			return out
		}
		a, b := own(dc), own(fc)
		for _, p := range fc.Files() {
			if a[p] == b[p] {
				continue
			}
			text, err := os.ReadFile(p)
			f := dc.Facts[p]
			return fmt.Sprintf("\n%s: the daemon's own diagnostics\n%s\na fresh scan's\n%s\nthe daemon's Facts: %+v\non disk (%v):\n%s\n%s", p, a[p], b[p], f, err, text,
				h.journal.about(h.rel(fc.Dir), h.rel(p)))
		}
	}
	for _, fc := range fresh.Set.Collections() {
		dc := v.Set.At(fc.Dir)
		kept := fmt.Sprint(v.CollectionDiagnostics(dc))
		now := append(dc.OwnDiagnostics(), xref.Collection(v.Set, dc)...)
		now = append(now, xref.Shadowed(v.Set, dc)...)
		now = dc.Suppress(now)
		diag.Sort(now)
		want := fmt.Sprint(fresh.CollectionDiagnostics(fc))
		switch {
		case kept != fmt.Sprint(now):
			return fmt.Sprintf("\n%s: the daemon kept\n%s\nbut checking its own Set now gives\n%v\ndeps %v\n%s", fc.Dir, kept, now, xref.RefNames(v.Set, dc),
				h.journal.about(h.rel(fc.Dir)))
		case kept != want:
			var files []string
			for _, p := range dc.Files() {
				f := dc.Facts[p]
				files = append(files, fmt.Sprintf("%s brief=%v mentions=%v", p, f.IsBrief(), f.HasMentions()))
			}
			return fmt.Sprintf("\n%s: the daemon's Set checks to\n%s\na fresh one to\n%s\nits files: %v", fc.Dir, kept, want, files)
		}
	}
	return ""
}

// canonical renders an answer as JSON, as the wire carries it.
func canonical(v any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	b, merr := json.MarshalIndent(v, "", " ")
	if merr != nil {
		return "unrenderable: " + merr.Error()
	}
	var round any
	if json.Unmarshal(b, &round) == nil {
		b, _ = json.MarshalIndent(round, "", " ")
	}
	return string(b)
}

// lineDiff shows the lines of a not in b (-) and of b not in a (+), with
// a few lines around each.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	// The longest common subsequence, by dynamic programming: answers are
	// a few hundred lines at most.
	lcs := make([][]int, len(al)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(bl)+1)
	}
	for i := len(al) - 1; i >= 0; i-- {
		for j := len(bl) - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(al) || j < len(bl) {
		switch {
		case i < len(al) && j < len(bl) && al[i] == bl[j]:
			out = append(out, "  "+al[i])
			i, j = i+1, j+1
		case j < len(bl) && (i == len(al) || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, "+ "+bl[j])
			j++
		default:
			out = append(out, "- "+al[i])
			i++
		}
	}
	var b2 strings.Builder
	for k, line := range out {
		near := false
		for d := max(0, k-3); d < min(len(out), k+4); d++ {
			if !strings.HasPrefix(out[d], "  ") {
				near = true
			}
		}
		if near {
			b2.WriteString(line + "\n")
		}
	}
	return b2.String()
}

// freshViews is the analysis.Views of an in-process catalog.
type freshViews struct{ cat *catalog.Catalog }

func (f freshViews) View(_ context.Context, project string) (*catalog.View, error) {
	if v, ok := f.cat.State().View(f.cat.ProjectKey(project)); ok {
		return v, nil
	}
	return nil, analysis.ErrNoView
}

func (f freshViews) WithArguments(_ context.Context, project string, cols []*discovery.Collection) (*catalog.View, error) {
	if v, ok := f.cat.WithArguments(project, cols); ok {
		return v, nil
	}
	return nil, analysis.ErrNoView
}

func (freshViews) Changed(string) {}

// leaks fails when goroutines or descriptors of the run are left once
// the daemon is closed.
func (h *harness) leaks(goroutines, fds int) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, f := runtime.NumGoroutine(), openFDs()
		if g <= goroutines && (fds < 0 || f <= fds) {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			h.t.Fatalf("seed %d: left behind: %d goroutines (had %d), %d descriptors (had %d)\n%s", h.seed, g, goroutines, f, fds, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openFDs counts this process's open descriptors; -1 where that cannot
// be told.
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// faults makes the daemon's listings (and, for EMFILE, reads), or its
// stats, fail under chosen paths.
type faults struct {
	mu sync.Mutex // guards fields below
	// under maps a path to the error listings at or below it fail with;
	// stats to the error stats at or below it fail with.
	under, stats map[string]syscall.Errno
}

// set makes the listings at or below root (or one collection directory)
// fail until clear, with EMFILE, EACCES or EIO; or, one time in three,
// the stats there (or below one entry of the collection directory), with
// EIO or ENOMEM: errors that say nothing of the
// path, after which a stat is tried again (a stat that says a path is
// not there, or not reachable, is an answer, which a change the watcher
// sees would correct).
func (f *faults) set(r *rand.Rand, root, dir string) string {
	at := root
	if r.IntN(2) == 0 {
		at = dir
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.under == nil {
		f.under, f.stats = map[string]syscall.Errno{}, map[string]syscall.Errno{}
	}
	if r.IntN(3) == 0 {
		if entries, _ := os.ReadDir(dir); len(entries) > 0 && r.IntN(2) == 0 {
			// One entry of the collection: its package directory, say,
			// whose stats tell its layout, while its metadata reads.
			at = filepath.Join(dir, entries[r.IntN(len(entries))].Name())
		}
		errno := []syscall.Errno{syscall.EIO, syscall.ENOMEM}[r.IntN(2)]
		f.stats[at] = errno
		return "stats at " + at + " (" + errno.Error() + ")"
	}
	errno := []syscall.Errno{syscall.EMFILE, syscall.EACCES, syscall.EIO}[r.IntN(3)]
	f.under[at] = errno
	return at + " (" + errno.Error() + ")"
}

func (f *faults) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.under, f.stats = nil, nil
}

// failing returns the error of the faults in m for path, or 0.
func (f *faults) failing(m func(*faults) map[string]syscall.Errno, path string) syscall.Errno {
	f.mu.Lock()
	defer f.mu.Unlock()
	for at, errno := range m(f) {
		if path == at || strings.HasPrefix(path, at+string(filepath.Separator)) {
			return errno
		}
	}
	return 0
}

func listings(f *faults) map[string]syscall.Errno { return f.under }
func stats(f *faults) map[string]syscall.Errno    { return f.stats }

func (f *faults) readDir(dir string) ([]os.DirEntry, error) {
	if errno := f.failing(listings, dir); errno != 0 {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: errno}
	}
	return os.ReadDir(dir)
}

func (f *faults) readFile(path string) ([]byte, error) {
	if errno := f.failing(listings, path); errno == syscall.EMFILE {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errno}
	}
	return syntax.ReadFile(path, 0)
}

func (f *faults) stat(path string) (fs.FileInfo, error) {
	if errno := f.failing(stats, path); errno != 0 {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: errno}
	}
	return os.Stat(path)
}
