package watcher_test

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/watcher"
	"github.com/rogpeppe/go-internal/txtar"
)

// waitLimit bounds every wait in these tests; it is generous because the
// tests also run under the race detector on small machines.
const waitLimit = 20 * time.Second

// recorder keeps every batch a Watcher delivers.
type recorder struct {
	mu      sync.Mutex // guards fields below
	batches []watcher.Batch

	changed chan struct{} // signalled after each batch
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) handle(b watcher.Batch) {
	r.mu.Lock()
	r.batches = append(r.batches, b)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// take returns the batches recorded so far and forgets them.
func (r *recorder) take() []watcher.Batch {
	r.mu.Lock()
	defer r.mu.Unlock()
	bs := r.batches
	r.batches = nil
	return bs
}

// waitFor waits until the batches recorded (and not yet taken) satisfy ok,
// and takes them.
func (r *recorder) waitFor(t *testing.T, what string, ok func([]watcher.Batch) bool) []watcher.Batch {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		bs := slices.Clone(r.batches)
		if ok(bs) {
			r.batches = nil
			r.mu.Unlock()
			return bs
		}
		r.mu.Unlock()
		select {
		case <-r.changed:
		case <-deadline.C:
			t.Fatalf("no batch with %s within %s; got %s", what, waitLimit, summary(bs))
		}
	}
}

// start returns a running Watcher, closed when the test ends, and what it
// delivers.
func start(t testing.TB, opts watcher.Options) (*watcher.Watcher, *recorder) {
	t.Helper()
	rec := newRecorder()
	w, err := watcher.New(opts, rec.handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return w, rec
}

func flush(t testing.TB, w *watcher.Watcher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := w.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

func addRoot(t testing.TB, w *watcher.Watcher, root string) {
	t.Helper()
	if err := w.AddRoot(root); err != nil {
		t.Fatalf("AddRoot(%s): %v", root, err)
	}
}

// changedPaths is the union of the paths of the batches for root.
func changedPaths(bs []watcher.Batch, root string) map[string]bool {
	set := make(map[string]bool)
	for _, b := range bs {
		if b.Root != root {
			continue
		}
		for _, p := range b.Paths {
			set[p] = true
		}
	}
	return set
}

// rescanReasons lists the reasons of the rescans asked for root.
func rescanReasons(bs []watcher.Batch, root string) []watcher.Reason {
	var reasons []watcher.Reason
	for _, b := range bs {
		if b.Root == root && b.Rescan {
			reasons = append(reasons, b.Reasons)
		}
	}
	return reasons
}

func wantPaths(t *testing.T, bs []watcher.Batch, root string, want ...string) {
	t.Helper()
	got := changedPaths(bs, root)
	for _, p := range want {
		if !got[p] {
			t.Errorf("path %s not reported for root %s; got %v", p, root, slices.Sorted(maps.Keys(got)))
		}
	}
}

// wantSeen is wantPaths, except that a rescan of root covers every path.
func wantSeen(t *testing.T, bs []watcher.Batch, root string, want ...string) {
	t.Helper()
	if len(rescanReasons(bs, root)) == 0 {
		wantPaths(t, bs, root, want...)
	}
}

func wantNoPaths(t *testing.T, bs []watcher.Batch, root string, unwanted ...string) {
	t.Helper()
	got := changedPaths(bs, root)
	for _, p := range unwanted {
		if got[p] {
			t.Errorf("path %s reported for root %s, want it not to be", p, root)
		}
	}
}

// rootChanged are the reasons that say the root itself came, went or was
// replaced.
const rootChanged = watcher.ReasonRootAppeared | watcher.ReasonRootVanished | watcher.ReasonRootReplaced

// wantRescan wants a rescan of root whose reasons include any of those in
// reasons.
func wantRescan(t *testing.T, bs []watcher.Batch, root string, reasons watcher.Reason) {
	t.Helper()
	for _, r := range rescanReasons(bs, root) {
		if r&reasons != 0 {
			return
		}
	}
	t.Errorf("no rescan of %s with reason %q; got %s", root, reasons, summary(bs))
}

// summary describes batches briefly, for failure messages.
func summary(bs []watcher.Batch) string {
	var parts []string
	for _, b := range bs {
		switch {
		case b.Rescan:
			parts = append(parts, fmt.Sprintf("{%s rescan: %s}", b.Root, b.Reasons))
		case len(b.Paths) > 5:
			parts = append(parts, fmt.Sprintf("{%s %d paths: %q …}", b.Root, len(b.Paths), b.Paths[:5]))
		default:
			parts = append(parts, fmt.Sprintf("{%s %q}", b.Root, b.Paths))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func statusOf(t testing.TB, w *watcher.Watcher, root string) watcher.RootStatus {
	t.Helper()
	for _, s := range w.Status() {
		if s.Path == root {
			return s
		}
	}
	t.Fatalf("no status for root %s in %v", root, w.Status())
	return watcher.RootStatus{}
}

// waitStatus waits until the status of root satisfies ok.
func waitStatus(t testing.TB, w *watcher.Watcher, root, what string, ok func(watcher.RootStatus) bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		s := statusOf(t, w, root)
		if ok(s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status of %s not %s within %s: %+v", root, what, waitLimit, s)
		}
		<-tick.C
	}
}

// unpack writes the files of a txtar fixture under dir.
func unpack(t testing.TB, fixture, dir string) {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		mkdirAll(t, filepath.Dir(p))
		writeFile(t, p, string(f.Data))
	}
}

// tempRoot returns a fresh directory holding the collections fixture.
func tempRoot(t testing.TB) string {
	t.Helper()
	dir := realTempDir(t)
	unpack(t, "collections.txtar", dir)
	return dir
}

// fastTempDir returns a fresh directory on tmpfs when /dev/shm can hold
// one, else t.TempDir: the tests that make tens of thousands of files
// measure the Watcher, not the disk.
func fastTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "amplidex-watcher-test-")
	if err != nil {
		return realTempDir(t)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// realTempDir is t.TempDir with symlinks resolved, so that paths compare
// equal to what the Watcher reports.
func realTempDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdirAll(t testing.TB, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func rename(t testing.TB, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

func remove(t testing.TB, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

func removeAll(t testing.TB, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// skippedDir mirrors the directories the Watcher never enters.
func skippedDir(name string) bool {
	switch name {
	case ".git", "node_modules", "__pycache__", ".venv":
		return true
	}
	return false
}

// scanTree lists every path under root as the Watcher sees the tree:
// directory symlinks directly in root are followed, deeper ones are not,
// and skipped directories are listed but not entered.
func scanTree(t testing.TB, root string) map[string]bool {
	t.Helper()
	set := make(map[string]bool)
	var walk func(dir string, top bool)
	walk = func(dir string, top bool) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			set[p] = true
			switch {
			case e.IsDir() && !skippedDir(e.Name()):
				walk(p, false)
			case e.Type()&fs.ModeSymlink != 0 && top:
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					walk(p, false)
				}
			}
		}
	}
	walk(root, true)
	return set
}

// model is a consumer that keeps the set of paths under a root up to date
// from batches alone, as an index would.
type model struct {
	t    testing.TB
	root string
	kids map[string]map[string]bool // directory → names known in it
}

func newModel(t testing.TB, root string) *model {
	m := &model{t: t, root: root}
	m.rescan()
	return m
}

func (m *model) rescan() {
	m.kids = make(map[string]map[string]bool)
	for p := range scanTree(m.t, m.root) {
		m.add(p)
	}
}

func (m *model) add(p string) {
	for p != m.root && strings.HasPrefix(p, m.root+"/") {
		dir, name := filepath.Dir(p), filepath.Base(p)
		if m.kids[dir] == nil {
			m.kids[dir] = make(map[string]bool)
		}
		if m.kids[dir][name] {
			return
		}
		m.kids[dir][name] = true
		p = dir
	}
}

func (m *model) drop(p string) {
	for name := range m.kids[p] {
		m.drop(filepath.Join(p, name))
	}
	delete(m.kids, p)
	delete(m.kids[filepath.Dir(p)], filepath.Base(p))
}

// apply updates the model from a batch: each path is lstat'ed; a missing
// one is dropped with everything below it, a directory has the entries it
// no longer holds dropped, anything else has no entries below it.
func (m *model) apply(b watcher.Batch) {
	if b.Root != m.root {
		return
	}
	if b.Rescan {
		m.rescan()
		return
	}
	for _, p := range b.Paths {
		if _, err := os.Lstat(p); err != nil {
			m.drop(p)
			continue
		}
		m.add(p)
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			for name := range m.kids[p] {
				m.drop(filepath.Join(p, name))
			}
		} else {
			entries, err := os.ReadDir(p)
			if err != nil {
				continue
			}
			have := make(map[string]bool, len(entries))
			for _, e := range entries {
				have[e.Name()] = true
			}
			for name := range m.kids[p] {
				if !have[name] {
					m.drop(filepath.Join(p, name))
				}
			}
		}
	}
}

func (m *model) paths() map[string]bool {
	set := make(map[string]bool)
	for dir, names := range m.kids {
		for name := range names {
			set[filepath.Join(dir, name)] = true
		}
	}
	return set
}

// check compares the model with a fresh walk of the tree, file for file.
func (m *model) check() {
	m.t.Helper()
	got, want := m.paths(), scanTree(m.t, m.root)
	var missing, extra []string
	for p := range want {
		if !got[p] {
			missing = append(missing, p)
		}
	}
	for p := range got {
		if !want[p] {
			extra = append(extra, p)
		}
	}
	if len(missing)+len(extra) > 0 {
		slices.Sort(missing)
		slices.Sort(extra)
		m.t.Fatalf("model differs from the tree (%d paths on disk, %d in the model): missing %d %v, extra %d %v",
			len(want), len(got), len(missing), head(missing), len(extra), head(extra))
	}
}

func head(s []string) []string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
