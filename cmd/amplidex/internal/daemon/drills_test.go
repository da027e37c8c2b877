package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// The fault drills: each one breaks something on purpose (a SIGKILL, a
// flooded kernel queue, a full disk, a read-only root, a crowd of
// clients) and fails when the daemon then loses or corrupts data, leaks,
// or hangs. Drills that need mounts skip themselves, saying why, where the
// process may not mount.

// TestDrillKill9UnderChurn kills a daemon running in a child process with
// SIGKILL at a random moment of a churn (files and whole collections
// created, edited, renamed, moved and deleted from several goroutines),
// twenty times over. After each kill the daemon restarts in process: its
// index equals a fresh scan, and it read again exactly the files whose
// records the killed daemon had not committed as they are now.
func TestDrillKill9UnderChurn(t *testing.T) {
	deadline(t, 5*time.Minute)
	const rounds, churners, steps = 20, 4, 40
	seed := drillSeed(t)
	e := newEnv(t)
	roots := []string{e.userRoot(), e.projectRoot(), e.bundled}
	for i, r := range roots {
		name := fmt.Sprintf("steady-%d", i)
		e.collection(filepath.Join(r, name), name, "1.0.0")
	}
	// A first life registers the project, so every child watches it too.
	d := e.start()
	c := e.client()
	e.resolve(c, "steady-0")
	check(t, c.Close())
	check(t, d.Close())

	cs := make([]*churner, churners)
	for i := range cs {
		cs[i] = newChurner(fmt.Sprintf("g%d", i), roots, seed, uint64(i))
	}
	kills := rand.New(rand.NewPCG(seed, churners))
	for round := range rounds {
		child := e.startChild()
		killAt := 1 + kills.IntN(churners*steps)
		var ops atomic.Int64
		killNow := make(chan struct{})
		churned := make(chan struct{})
		errs := make(chan error, churners)
		var wg sync.WaitGroup
		for _, ch := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Every few changes the churner waits for the child to
				// index them (its query fails once the child is dead), so
				// that kills land among commits, not only before them.
				qc, _ := dialClient(e.paths.Socket)
				for i := range steps {
					if err := ch.step(); err != nil {
						errs <- err
						return
					}
					if ops.Add(1) == int64(killAt) {
						close(killNow)
					}
					if qc != nil && i%8 == 7 {
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						_, _ = qc.Call(ctx, "collections", map[string]any{"project": e.project}, nil)
						cancel()
					}
				}
				if qc != nil {
					qc.Close()
				}
			}()
		}
		go func() {
			wg.Wait()
			close(churned)
		}()
		select {
		case <-killNow:
		case <-churned:
		}
		child.kill()
		<-churned
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: churn: %v", round, err)
		}

		files, _ := e.fresh()
		unchanged, records := e.unchangedSince(files)
		e.reads.Store(0)
		d := e.start()
		if got, want := int(e.reads.Load()), len(files)-unchanged; got != want {
			t.Errorf("round %d: restart read %d files, want %d (%d on disk, %d indexed unchanged before the kill)",
				round, got, want, len(files), unchanged)
		}
		c := e.client()
		e.assertIndexEqualsScan(c)
		t.Logf("round %d: killed after change %d of %d; the index held %d records, %d of %d files unchanged",
			round, killAt, churners*steps, records, unchanged, len(files))
		check(t, c.Close())
		check(t, d.Close())
		if t.Failed() {
			t.FailNow()
		}
	}
}

// TestDrillOverflowStorm floods the kernel's inotify queue while nobody
// queries, then queries: the index equals a fresh scan, and a reported
// overflow shows as a warning in status.
func TestDrillOverflowStorm(t *testing.T) {
	deadline(t, 5*time.Minute)
	// In process, the writers race the daemon's drain goroutine for the
	// CPU: the queue may or may not overflow.
	t.Run("in process", func(t *testing.T) {
		e := newEnv(t)
		// On a tmpfs, files are created several times faster than on
		// most disks, which makes an overflow likelier. On a disk, the
		// storm is smaller, and skipped in -short mode.
		writers, bursts, perBurst := 8, 4, 1000
		if err := tryTmpfs(t, e.dir, "256m"); err != nil {
			if testing.Short() {
				t.Skipf("no tmpfs (%v); a storm on disk is skipped in -short mode", err)
			}
			t.Logf("the storm runs on the test's temp dir: no tmpfs (%v)", err)
			bursts, perBurst = 2, 500
		}
		cols := stormCollections(e)
		makeStormDirs(t, cols, writers, bursts)
		var log logBuffer
		d := e.startLogged(&log, true)
		c := e.client()
		e.resolve(c, "storm-0") // registers the project
		storm(t, cols, writers, bursts, perBurst)
		e.assertIndexEqualsScan(c)
		var st query.Status
		check(t, e.call(c, "status", nil, &st))
		overflowed := strings.Contains(log.String(), "overflowed")
		for _, r := range d.Status().Roots {
			if strings.Contains(strings.Join(r.Warnings, "\n"), "overflowed") {
				overflowed = true
			}
		}
		t.Logf("kernel queue overflowed: %v", overflowed)
		if overflowed && !strings.Contains(strings.Join(st.Warnings, "\n"), "overflowed") {
			t.Errorf("the watcher reported an overflow, status warnings do not: %q", st.Warnings)
		}
	})

	// A stopped daemon reads no events: the queue must overflow.
	t.Run("daemon stopped", func(t *testing.T) {
		e := newEnv(t)
		if err := tryTmpfs(t, e.dir, "256m"); err != nil {
			t.Logf("the storm runs on the test's temp dir: no tmpfs (%v)", err)
		}
		cols := stormCollections(e)
		makeStormDirs(t, cols, 4, 1)
		child := e.startChild()
		c := e.client()
		e.resolve(c, "storm-0") // registers the project
		child.signal(t, sigStop)
		limit := maxQueuedEvents()
		storm(t, cols, 4, 1, limit/4+limit/8)
		child.signal(t, sigCont)
		e.assertIndexEqualsScan(c)
		var st query.Status
		check(t, e.call(c, "status", nil, &st))
		if !strings.Contains(strings.Join(st.Warnings, "\n"), "overflowed") {
			t.Errorf("status warnings do not report the overflow: %q", st.Warnings)
		}
		for _, r := range st.Roots {
			if watcher.State(r.State) != watcher.StateMissing && !strings.Contains(strings.Join(r.Warnings, "\n"), "overflowed") {
				t.Errorf("root %s does not report the overflow: %q", r.Path, r.Warnings)
			}
		}
		child.kill()
		// What the daemon committed after the overflow is exact too.
		e.start()
		e.assertIndexEqualsScan(e.client())
	})
}

// stormCollections makes two collections in each root and returns their
// directories.
func stormCollections(e *env) []string {
	var cols []string
	for i, r := range []string{e.userRoot(), e.projectRoot(), e.bundled, e.userRoot(), e.projectRoot(), e.bundled} {
		name := fmt.Sprintf("storm-%d", i)
		dir := filepath.Join(r, name)
		e.collection(dir, name, "1.0.0")
		cols = append(cols, dir)
	}
	return cols
}

// stormDir is the directory writer w writes its burst b to.
func stormDir(cols []string, w, b int) string {
	return filepath.Join(cols[(w+b)%len(cols)], "context", fmt.Sprintf("w%d", w))
}

// makeStormDirs makes the directories storm writes to, before the daemon
// starts: files created in a directory the daemon watches make one event
// each, where a directory that appears in the storm is walked instead.
func makeStormDirs(t *testing.T, cols []string, writers, bursts int) {
	t.Helper()
	for w := range writers {
		for b := range bursts {
			check(t, os.MkdirAll(stormDir(cols, w, b), 0o755))
		}
	}
}

// storm runs writers goroutines, each spread over the collections, that
// create perBurst context files per burst and delete every other one.
func storm(t *testing.T, cols []string, writers, bursts, perBurst int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range bursts {
				dir := stormDir(cols, w, b)
				for i := range perBurst {
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("b%d-%d.md", b, i)), []byte("# Storm\n"), 0o644); err != nil {
						errs <- err
						return
					}
				}
				for i := 0; i < perBurst; i += 2 {
					if err := os.Remove(filepath.Join(dir, fmt.Sprintf("b%d-%d.md", b, i))); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// maxQueuedEvents is the kernel's inotify queue length.
func maxQueuedEvents() int {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			return n
		}
	}
	return 16384
}

// TestDrillDiskFull puts the daemon's state directory on a small tmpfs and
// fills it while collections change: index writes fail and are logged and
// reported in status, queries still answer from memory, `changes` does not
// pretend the index is complete, and nothing committed before is lost.
// Twice: a daemon closed while the disk is full restarts, once space is
// freed, reading only what it could not save; a daemon that sees space
// freed saves everything itself, and its restart reads nothing.
func TestDrillDiskFull(t *testing.T) {
	deadline(t, 5*time.Minute)
	e := newEnv(t)
	mountTmpfs(t, e.paths.StateDir, "4m")
	for i := range 10 {
		name := fmt.Sprintf("before-%d", i)
		e.collection(filepath.Join(e.userRoot(), name), name, "1.0.0")
	}
	var log logBuffer
	d := e.startLogged(&log, false)
	c := e.client()
	e.assertIndexEqualsScan(c)

	// Closed while the disk is full.
	filler := e.changeOnFullDisk(c, &log, "first")
	check(t, c.Close())
	check(t, d.Close())
	// A start on the full disk fails with a clear error, or works.
	if d, err := daemon.Start(context.Background(), daemon.Options{Paths: e.paths, Home: e.home, Bundled: []string{e.bundled}}); err != nil {
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("start on a full disk: %v, want an error saying there is no space", err)
		}
		t.Logf("start on a full disk: %v", err)
	} else {
		e.assertIndexEqualsScan(e.client())
		check(t, d.Close())
	}
	check(t, os.Remove(filler))
	if kept, _ := filepath.Glob(e.paths.Index + ".*"); len(kept) > 0 {
		t.Errorf("the index was moved aside: %v", kept)
	}
	files, _ := e.fresh()
	unchanged, _ := e.unchangedSince(files)
	// Of the 40 files committed before the disk filled, one was edited and
	// four deleted since; the other 35 must still be indexed.
	if unchanged < 35 {
		t.Errorf("only %d files are indexed unchanged; the 35 left unchanged since before the disk filled must be", unchanged)
	}
	e.reads.Store(0)
	d = e.startLogged(&log, false)
	if got, want := int(e.reads.Load()), len(files)-unchanged; got != want {
		t.Errorf("restart read %d files, want %d (%d on disk, %d indexed unchanged)", got, want, len(files), unchanged)
	}
	for _, w := range d.Status().Warnings {
		t.Errorf("warning after the restart: %s", w)
	}
	c = e.client()
	e.assertIndexEqualsScan(c)

	// Space freed while the daemon runs: it saves what it kept.
	filler = e.changeOnFullDisk(c, &log, "second")
	saved := strings.Count(log.String(), "index writes succeed again")
	check(t, os.Remove(filler))
	if !waitUntil(30*time.Second, func() bool { return strings.Count(log.String(), "index writes succeed again") > saved }) {
		t.Fatal("space was freed, but the daemon did not say its index writes succeed again within 30s")
	}
	check(t, c.Close())
	check(t, d.Close())
	files, _ = e.fresh()
	if unchanged, _ := e.unchangedSince(files); unchanged != len(files) {
		t.Errorf("after space was freed, the index holds %d of %d files as they are", unchanged, len(files))
	}
	e.reads.Store(0)
	d = e.startLogged(&log, false)
	if n := e.reads.Load(); n != 0 {
		t.Errorf("restart read %d files, want 0", n)
	}
	for _, w := range d.Status().Warnings {
		t.Errorf("warning after the restart: %s", w)
	}
	e.assertIndexEqualsScan(e.client())
}

// changeOnFullDisk fills the state directory and changes collections
// (an edit, a deletion, new collections with files large enough to need
// new index pages) until an index write fails; it checks the answers on
// the way and returns the filler file.
func (e *env) changeOnFullDisk(c *query.Client, log *logBuffer, name string) string {
	t := e.t
	t.Helper()
	var before query.ChangesResult
	check(t, e.call(c, "changes", map[string]any{"since": "c:1:1:0"}, &before))
	failures := strings.Count(log.String(), "index write failed")
	filler := fill(t, e.paths.StateDir)

	edited := filepath.Join(e.userRoot(), "before-0", "agents", "helper.md")
	e.write(edited, agent("helper")+"edited while the disk is full ("+name+")\n")
	gone := fmt.Sprintf("before-%d", 1+strings.Count(name, "second"))
	check(t, os.RemoveAll(filepath.Join(e.userRoot(), gone)))
	body := strings.Repeat("A paragraph of context that makes the facts larger. ", 40)
	var added []string
	for i := 0; strings.Count(log.String(), "index write failed") == failures; i++ {
		if i == 50 {
			t.Fatal("the index took 50 collections on a full disk; the drill filled nothing")
		}
		col := fmt.Sprintf("%s-%d", name, i)
		dir := filepath.Join(e.userRoot(), col)
		e.collection(dir, col, "1.0.0")
		for j := range 20 {
			e.write(filepath.Join(dir, "context", fmt.Sprintf("c%d.md", j)), "# Context\n"+body)
		}
		added = append(added, col)
		if r := e.resolve(c, col); r == nil || r.Winner.Version != "1.0.0" {
			t.Fatalf("a collection created on a full disk does not resolve: %+v", r)
		}
	}
	t.Logf("%s fill: an index write failed after %d new collections", name, len(added))
	if e.resolve(c, gone) != nil {
		t.Errorf("%s deleted on a full disk still resolves", gone)
	}
	e.assertIndexEqualsScan(c)
	var st query.Status
	check(t, e.call(c, "status", nil, &st))
	if !strings.Contains(strings.Join(st.Warnings, "\n"), "index write failed") {
		t.Errorf("status warnings do not report the failed index write: %q", st.Warnings)
	}
	var during query.ChangesResult
	check(t, e.call(c, "changes", map[string]any{"since": before.Clock.String()}, &during))
	if !during.IsFreshInstance && !hasChange(during.Files, filepath.Join(e.userRoot(), added[len(added)-1], "pyproject.toml")) {
		t.Errorf("changes since %s, asked on a full disk, miss the collections created since: %d files, fresh=%v",
			before.Clock, len(during.Files), during.IsFreshInstance)
	}
	return filler
}

// hasChange reports whether changes name path.
func hasChange(changes []query.Change, path string) bool {
	for _, c := range changes {
		if c.Path == path {
			return true
		}
	}
	return false
}

// TestDrillReadOnlyRoot serves a user root and a bundled root that are
// read-only mounts of directories changed through their writable paths:
// the daemon starts, indexes them, answers with read-your-writes, reports
// healthy roots, and restarts without reading anything again.
func TestDrillReadOnlyRoot(t *testing.T) {
	deadline(t, 5*time.Minute)
	e := newEnv(t)
	userSrc, bundledSrc := filepath.Join(e.dir, "user-src"), filepath.Join(e.dir, "bundled-src")
	e.collection(filepath.Join(userSrc, "mine"), "mine", "1.0.0")
	e.collection(filepath.Join(bundledSrc, "foundation"), "foundation", "1.0.0")
	e.collection(filepath.Join(e.projectRoot(), "local"), "local", "1.0.0")
	mounted := true
	for _, m := range [][2]string{{userSrc, e.userRoot()}, {bundledSrc, e.bundled}} {
		if err := bindReadOnly(t, m[0], m[1]); err != nil {
			if os.Geteuid() == 0 {
				t.Skipf("cannot make a read-only root: %v", err)
			}
			mounted = false
		}
	}
	if !mounted {
		// Without mounts: the same trees, made read-only by their modes.
		for _, m := range [][2]string{{userSrc, e.userRoot()}, {bundledSrc, e.bundled}} {
			check(t, os.Remove(m[1]))
			check(t, os.Rename(m[0], m[1]))
			readOnlyTree(t, m[1])
		}
		t.Log("not root: the roots are read-only by mode, and nothing changes them")
	} else {
		t.Log("the user and bundled roots are read-only bind mounts")
	}

	d := e.start()
	c := e.client()
	e.assertIndexEqualsScan(c)
	for _, name := range []string{"mine", "foundation", "local"} {
		if r := e.resolve(c, name); r == nil {
			t.Errorf("%s does not resolve from a read-only root", name)
		}
	}
	healthy := func() {
		t.Helper()
		var st query.Status
		check(t, e.call(c, "status", nil, &st))
		for _, r := range st.Roots {
			if (r.Path == e.userRoot() || r.Path == e.bundled) && (watcher.State(r.State) != watcher.StateWatching || len(r.Warnings) > 0) {
				t.Errorf("read-only root %s: state %s, warnings %q", r.Path, r.State, r.Warnings)
			}
		}
		if len(st.Warnings) > 0 {
			t.Errorf("status warnings: %q", st.Warnings)
		}
	}
	healthy()

	if mounted {
		// Changes made through the writable paths show through the
		// read-only mounts, and queries wait for them.
		e.collection(filepath.Join(userSrc, "added"), "added", "1.0.0")
		if r := e.resolve(c, "added"); r == nil || r.Winner.Dir != filepath.Join(e.userRoot(), "added") {
			t.Fatalf("a collection added through the writable path: %+v", r)
		}
		e.write(filepath.Join(bundledSrc, "foundation", "pyproject.toml"), pyproject("foundation", "2.0.0"))
		if r := e.resolve(c, "foundation"); r == nil || r.Winner.Version != "2.0.0" {
			t.Fatalf("an edit through the writable path is not seen: %+v", r)
		}
		check(t, os.RemoveAll(filepath.Join(userSrc, "mine")))
		if r := e.resolve(c, "mine"); r != nil {
			t.Fatalf("a collection deleted through the writable path still resolves: %+v", r)
		}
		e.assertIndexEqualsScan(c)
		healthy()
	}

	check(t, c.Close())
	check(t, d.Close())
	e.reads.Store(0)
	e.start()
	if n := e.reads.Load(); n != 0 {
		t.Errorf("a restart over read-only roots read %d files, want 0", n)
	}
	c = e.client()
	e.assertIndexEqualsScan(c)
	healthy()
}

// readOnlyTree takes the write permission off every directory and file
// below dir, and gives it back in the test's cleanup.
func readOnlyTree(t *testing.T, dir string) {
	t.Helper()
	var dirs []string
	check(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		return os.Chmod(p, 0o444)
	}))
	for i := len(dirs) - 1; i >= 0; i-- {
		check(t, os.Chmod(dirs[i], 0o555))
	}
	t.Cleanup(func() {
		for _, d := range dirs {
			os.Chmod(d, 0o755)
		}
	})
}

// TestDrillManyClients runs 200 socket clients, each with its own
// connection, calling a mix of methods in loops for 30 seconds (5 in
// -short) while another client changes a collection and checks it reads
// its own writes. No call may fail or answer wrongly; afterwards the index
// equals a fresh scan, and once every client has closed, the process's
// goroutines and open files are back to what they were before.
func TestDrillManyClients(t *testing.T) {
	deadline(t, 5*time.Minute)
	const clients, steadyCols = 200, 5
	run := 30 * time.Second
	if testing.Short() {
		run = 5 * time.Second
	}
	e := newEnv(t)
	for i := range steadyCols {
		name := fmt.Sprintf("steady-%d", i)
		e.collection(filepath.Join(e.userRoot(), name), name, "1.0.0")
	}
	moving := filepath.Join(e.projectRoot(), "moving")
	e.collection(moving, "moving", "1.0.0")
	// The clients stand for as many processes: this one may hold them all,
	// with room for connections closed but not yet given back on a busy
	// machine (the bounds are TestHangUpFlood's, not this drill's).
	e.startWith(func(o *daemon.Options) {
		o.MaxConns, o.MaxPeerConns = 2*clients+16, 2*clients+16
		o.MaxRequests, o.MaxPeerRequests = 2*clients+16, 2*clients+16
	})
	warm := dialDrill(t, e)
	e.resolve(warm, "moving") // registers the project
	check(t, warm.Close())

	// The baseline: the daemon alone, every connection of the warm-up
	// closed on both ends.
	baseGoroutines, baseFiles := settle(t)

	var calls, failures atomic.Int64
	fails := make(chan error, 20)
	fail := func(err error) {
		failures.Add(1)
		select {
		case fails <- err:
		default:
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	cs := make([]*query.Client, 0, clients)
	for i := range clients {
		c, err := dialClient(e.paths.Socket)
		if err != nil {
			fail(fmt.Errorf("client %d: %w", i, err))
			continue
		}
		cs = append(cs, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.drillClient(c, i, steadyCols, stop, &calls, fail)
		}()
	}
	changer, err := dialClient(e.paths.Socket)
	check(t, err)
	var changes atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.changeAndCheck(changer, moving, stop, &changes, fail)
	}()
	timer := time.NewTimer(run)
	<-timer.C
	close(stop)
	wg.Wait()
	for _, c := range cs {
		check(t, c.Close())
	}
	check(t, changer.Close())
	close(fails)
	for err := range fails {
		t.Error(err)
	}
	if n := failures.Load(); n > 0 {
		t.Errorf("%d calls failed", n)
	}
	t.Logf("%d clients made %d calls in %v; %d changes were made and read back", len(cs), calls.Load(), run, changes.Load())

	c := dialDrill(t, e)
	e.assertIndexEqualsScan(c)
	check(t, c.Close())

	// No slack: goroutines that come and go (a delayed snapshot publish,
	// a connection's goroutines finishing after its close) are outwaited.
	var goroutines, files int
	if !waitUntil(30*time.Second, func() bool {
		goroutines, files = runtime.NumGoroutine(), openFiles(t)
		return goroutines <= baseGoroutines && files <= baseFiles
	}) {
		var stacks strings.Builder
		pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Errorf("after every client closed: %d goroutines (baseline %d), %d open files (baseline %d)\n%s",
			goroutines, baseGoroutines, files, baseFiles, stacks.String())
	}
	t.Logf("goroutines %d (baseline %d), open files %d (baseline %d)", goroutines, baseGoroutines, files, baseFiles)
}

// settle waits until the goroutine and open file counts have held still
// for a quarter of a second, and returns them.
func settle(t *testing.T) (goroutines, files int) {
	t.Helper()
	var last [2]int
	var since time.Time
	if !waitUntil(30*time.Second, func() bool {
		now := [2]int{runtime.NumGoroutine(), openFiles(t)}
		if now != last {
			last, since = now, time.Now()
		}
		return time.Since(since) >= 250*time.Millisecond
	}) {
		t.Fatalf("goroutines and open files never settled: %v", last)
	}
	return last[0], last[1]
}

// dialClient dials the daemon on socket, giving up after ten seconds.
func dialClient(socket string) (*query.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return query.Dial(ctx, socket)
}

// dialDrill dials the env's daemon; unlike env.client, the caller closes
// the client.
func dialDrill(t *testing.T, e *env) *query.Client {
	t.Helper()
	c, err := dialClient(e.paths.Socket)
	check(t, err)
	return c
}

// drillClient calls one method after another, each checked, until stop.
func (e *env) drillClient(c *query.Client, id, steadyCols int, stop <-chan struct{}, calls *atomic.Int64, fail func(error)) {
	since := "c:1:1:0"
	methods := []string{"resolve", "collections", "diagnostics", "profile", "status", "changes"}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		steady := fmt.Sprintf("steady-%d", (id+i)%steadyCols)
		method := methods[(id+i)%len(methods)]
		params := map[string]any{"project": e.project}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var err error
		switch method {
		case "resolve":
			var r query.ResolveResult
			params["name"] = steady
			if _, err = c.Call(ctx, method, params, &r); err == nil && (r.Winner == nil || r.Winner.Version != "1.0.0") {
				err = fmt.Errorf("%s resolves to %+v", steady, r.Winner)
			}
		case "collections":
			var cols []query.CollectionInfo
			if _, err = c.Call(ctx, method, params, &cols); err == nil && len(cols) < steadyCols+1 {
				err = fmt.Errorf("%d collections, want at least %d", len(cols), steadyCols+1)
			}
		case "diagnostics":
			var r query.DiagnosticsResult
			if _, err = c.Call(ctx, method, params, &r); err == nil {
				for _, d := range r.Diagnostics {
					if strings.Contains(d.Path, "steady-") {
						err = fmt.Errorf("diagnostic on a steady collection: %+v", d)
					}
				}
			}
		case "profile":
			var r query.ProfileResult
			params["ref"] = steady + ":base"
			if _, err = c.Call(ctx, method, params, &r); err == nil && r.Collection != steady {
				err = fmt.Errorf("%s:base is a profile of %q", steady, r.Collection)
			}
		case "status":
			var r query.Status
			if _, err = c.Call(ctx, method, params, &r); err == nil && r.PID != os.Getpid() {
				err = fmt.Errorf("status names pid %d", r.PID)
			}
		case "changes":
			var r query.ChangesResult
			params["since"] = since
			if _, err = c.Call(ctx, method, params, &r); err == nil {
				since = r.Clock.String()
			}
		}
		cancel()
		calls.Add(1)
		if err != nil {
			fail(fmt.Errorf("client %d, call %d (%s): %w", id, i, method, err))
			return
		}
	}
}

// changeAndCheck changes the collection in dir (a version bump, a context
// file added, one removed) and checks, after each change, that a query
// sees it, until stop.
func (e *env) changeAndCheck(c *query.Client, dir string, stop <-chan struct{}, changes *atomic.Int64, fail func(error)) {
	for i := 1; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		version := fmt.Sprintf("1.%d.0", i)
		var err error
		switch i % 3 {
		case 0:
			err = writeFile(filepath.Join(dir, "pyproject.toml"), pyproject("moving", version))
		case 1:
			err = writeFile(filepath.Join(dir, "context", fmt.Sprintf("n%d.md", i)), "# New\n")
		default:
			err = os.Remove(filepath.Join(dir, "context", fmt.Sprintf("n%d.md", i-4)))
			if errors.Is(err, os.ErrNotExist) {
				err = nil
			}
		}
		if err != nil {
			fail(fmt.Errorf("change %d: %w", i, err))
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var d query.CollectionDetail
		_, err = c.Call(ctx, "collection", map[string]any{"project": e.project, "name": "moving"}, &d)
		cancel()
		if err == nil {
			err = checkMoving(&d, i)
		}
		if err != nil {
			fail(fmt.Errorf("change %d read back: %w", i, err))
			return
		}
		changes.Add(1)
	}
}

// checkMoving checks the collection changeAndCheck changes, after its
// change i.
func checkMoving(d *query.CollectionDetail, i int) error {
	if want := fmt.Sprintf("1.%d.0", i-i%3); d.Version != want {
		return fmt.Errorf("version %s, want %s", d.Version, want)
	}
	has := map[string]bool{}
	for _, r := range d.Resources {
		has[r.Rel] = true
	}
	for j := 1; j <= i; j += 3 {
		want := j > i-4 // change j adds file j, change j+4 removes it
		if has[fmt.Sprintf("context/n%d.md", j)] != want {
			return fmt.Errorf("context/n%d.md present: %v, want %v", j, !want, want)
		}
	}
	return nil
}
