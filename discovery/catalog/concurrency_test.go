package catalog_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
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

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/check"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// hangAfter is how long a test waits for something that never takes
// longer than a few milliseconds before it calls it a hang.
const hangAfter = 30 * time.Second

// finish runs fn and fails the test, with the stack of every goroutine,
// when it has not returned within hangAfter: the sign of a deadlock.
func finish(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(hangAfter):
		buf := make([]byte, 16<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%s did not return: deadlock; every goroutine:\n%s", what, buf)
	}
}

// newProject makes a project directory with one collection.
func newProject(t *testing.T, tr *tree, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	tr.write(filepath.Join(dir, ".amplifier", "collections", "one", "pyproject.toml"),
		"[project]\nname = \"one\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
	return dir
}

// TestRemoveWhileAddingNeverDeadlocks registers and forgets one project
// from many goroutines at once while others change its root and the
// user's: no call may stop, and every later change must go through.
func TestRemoveWhileAddingNeverDeadlocks(t *testing.T) {
	deadline(t, 2*time.Minute)
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(1, 1)), home: filepath.Join(base, "home")}
	tr.collection(filepath.Join(tr.root(1), "u"))
	proj := newProject(t, tr, "p")
	root := filepath.Join(proj, ".amplifier", "collections")
	cat := catalog.New(catalog.Options{Home: tr.home})
	cat.AddProject("")
	finish(t, "concurrent AddProject, RemoveProject and Update", func() {
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 40 {
					switch g % 3 {
					case 0:
						cat.AddProject(proj)
					case 1:
						cat.RemoveProject(proj)
					default:
						cat.Update(catalog.Change{Root: root, Dir: filepath.Join(root, "one")}, catalog.Change{Root: tr.root(1)})
					}
				}
			}()
		}
		wg.Wait()
	})
	finish(t, "AddProject after the storm", func() { cat.AddProject(proj) })
	st, _ := cat.Update(catalog.Change{Root: root})
	v, ok := st.View(proj)
	if !ok || v.Set.Lookup("one") == nil {
		t.Fatalf("after the storm the project's View is missing or lacks its collection: %v", ok)
	}
}

// TestPublishedViewIsNeverChanged keeps a View and its version, makes
// changes that leave it as it is, and checks it was not written to.
func TestPublishedViewIsNeverChanged(t *testing.T) {
	deadline(t, 2*time.Minute)
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(2, 2)), home: filepath.Join(base, "home")}
	tr.collection(filepath.Join(tr.root(1), "u"))
	proj := newProject(t, tr, "p")
	other := newProject(t, tr, "q")
	cat := catalog.New(catalog.Options{Home: tr.home})
	st, _ := cat.AddProject(proj)
	v, _ := st.View(proj)
	version := v.Version
	if version == 0 || version != st.Version {
		t.Fatalf("a new View has version %d, its State %d", version, st.Version)
	}
	otherRoot := filepath.Join(other, ".amplifier", "collections")
	cat.AddProject(other)
	st2, _ := cat.Update(catalog.Change{Root: otherRoot})
	v2, _ := st2.View(proj)
	if v2 != v {
		t.Fatal("a change to another project's root made this project a new View")
	}
	if v.Version != version {
		t.Fatalf("a published View was written to: its version went from %d to %d", version, v.Version)
	}
}

// TestUnlistableRootKeepsItsCollections makes the listing of a root fail
// (as it does when descriptors run out) and checks that its collections
// stay, that the root is said to be failing and named for a retry, and
// that a later listing that works brings what changed meanwhile.
func TestUnlistableRootKeepsItsCollections(t *testing.T) {
	deadline(t, 2*time.Minute)
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.EACCES, syscall.EIO} {
		t.Run(errno.Error(), func(t *testing.T) {
			base := t.TempDir()
			tr := &tree{t: t, r: rand.New(rand.NewPCG(3, 3)), home: filepath.Join(base, "home")}
			root := tr.root(1)
			for i := range 3 {
				tr.write(filepath.Join(root, fmt.Sprintf("c%d", i), "pyproject.toml"),
					fmt.Sprintf("[project]\nname = \"c%d\"\nversion = \"1.0.0\"\ndescription = \"d\"\n", i))
			}
			var failing atomic.Pointer[string]
			loader := &discovery.Loader{ReadDir: func(dir string) ([]os.DirEntry, error) {
				if p := failing.Load(); p != nil && (dir == *p || strings.HasPrefix(dir, *p+string(filepath.Separator))) {
					return nil, &fs.PathError{Op: "open", Path: dir, Err: errno}
				}
				return os.ReadDir(dir)
			}}
			cat := catalog.New(catalog.Options{Home: tr.home, Loader: loader})
			cat.AddProject("")
			failing.Store(&root)
			tr.write(filepath.Join(root, "c3", "pyproject.toml"), "[project]\nname = \"c3\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
			st, d := cat.Update(catalog.Change{Root: root})
			v, _ := st.View("")
			if n := v.Set.Len(); n != 3 {
				t.Fatalf("after a failed listing the root holds %d collections, want the 3 it held", n)
			}
			if len(d.Gone) != 0 {
				t.Fatalf("a failed listing dropped files: %v", d.Gone)
			}
			if !hasChange(d.Retry, catalog.Change{Root: root}) {
				t.Fatalf("the root is not named for a retry: %v", d.Retry)
			}
			if ri := rootInfo(st, root); ri.Failed == "" || ri.Healthy() {
				t.Fatalf("the root is not said to be failing: %+v", ri)
			}
			// A collection directory that cannot be listed keeps its load.
			dir := filepath.Join(root, "c1")
			failing.Store(&dir)
			st, d = cat.Update(catalog.Change{Root: root, Dir: dir})
			v, _ = st.View("")
			if c := v.Set.Lookup("c1"); c == nil || c.Degraded != "" {
				t.Fatalf("after a failed listing c1 is %+v, want its last complete load", c)
			}
			if !hasChange(d.Retry, catalog.Change{Root: root, Dir: dir}) {
				t.Fatalf("c1 is not named for a retry: %v", d.Retry)
			}
			if ri := rootInfo(st, root); len(ri.Degraded) != 1 || ri.Degraded[0].Dir != dir {
				t.Fatalf("c1 is not said to be degraded: %+v", ri)
			}
			failing.Store(nil)
			st, d = cat.Update(catalog.Change{Root: root})
			v, _ = st.View("")
			if n := v.Set.Len(); n != 4 || len(d.Retry) != 0 {
				t.Fatalf("once the root lists, it holds %d collections (want 4), retry %v", n, d.Retry)
			}
			if ri := rootInfo(st, root); !ri.Healthy() {
				t.Fatalf("the root is still said to be failing: %+v", ri)
			}
		})
	}
}

// TestUnreadableFileKeepsTheCollection makes a file's read fail for want
// of descriptors: the collection keeps its last complete load, and a new
// collection read so is held as read (with its warning) until a retry.
func TestUnreadableFileKeepsTheCollection(t *testing.T) {
	deadline(t, 2*time.Minute)
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(4, 4)), home: filepath.Join(base, "home")}
	root := tr.root(1)
	prof := filepath.Join(root, "c", "profiles", "p.md")
	tr.write(filepath.Join(root, "c", "pyproject.toml"), "[project]\nname = \"c\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
	tr.write(prof, "---\nprofile:\n  name: p\n  version: 1.0.0\n  description: x\nsession:\n  orchestrator:\n    module: loop\n  context:\n    module: ctx\n---\n")
	var failing atomic.Bool
	loader := &discovery.Loader{ReadFile: func(p string) ([]byte, error) {
		if failing.Load() && p == prof {
			return nil, &fs.PathError{Op: "open", Path: p, Err: syscall.EMFILE}
		}
		return os.ReadFile(p)
	}}
	cat := catalog.New(catalog.Options{Home: tr.home, Loader: loader})
	cat.AddProject("")
	failing.Store(true)
	tr.write(prof, "---\nprofile:\n  name: p2\n---\n")
	st, d := cat.Update(catalog.Change{Root: root, Dir: filepath.Join(root, "c")})
	v, _ := st.View("")
	if ds := v.DiagnosticsUnder(prof); len(ds) != 0 {
		t.Fatalf("a file that could not be read for want of descriptors lost its last good state: %v", ds)
	}
	if len(d.Retry) != 1 {
		t.Fatalf("retry = %v, want the collection", d.Retry)
	}
	failing.Store(false)
	st, _ = cat.Update(d.Retry...)
	v, _ = st.View("")
	if ds := v.DiagnosticsUnder(prof); len(ds) == 0 {
		t.Fatal("once readable, the file's new problems are not reported")
	}
}

// TestBuildHoldsBackNoOtherProject holds the check of one project's first
// View (a mention lookup that does not return) and checks that another
// project's registration, a change to its root, WithArguments and Roots
// all go through meanwhile.
func TestBuildHoldsBackNoOtherProject(t *testing.T) {
	deadline(t, 2*time.Minute)
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(5, 5)), home: filepath.Join(base, "home")}
	slow := newProject(t, tr, "slow")
	ctx := filepath.Join(slow, ".amplifier", "collections", "one", "context", "m.md")
	tr.write(ctx, "see @one:context/m.md\n")
	fast := newProject(t, tr, "fast")
	fastRoot := filepath.Join(fast, ".amplifier", "collections")
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	loader := &discovery.Loader{}
	loader.Details = func(string) *discovery.Facts { return nil }
	loader.Mentions = func(p string) ([]syntax.Mention, bool) {
		if p == ctx {
			once.Do(func() { close(held) })
			<-release
		}
		return nil, false
	}
	cat := catalog.New(catalog.Options{Home: tr.home, Loader: loader})
	cat.AddProject("")
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		cat.AddProject(slow)
	}()
	<-held
	finish(t, "another project's work while one View is being checked", func() {
		st, _ := cat.AddProject(fast)
		if _, ok := st.View(fast); !ok {
			t.Error("the other project has no View")
		}
		cat.Update(catalog.Change{Root: fastRoot, Dir: filepath.Join(fastRoot, "one")})
		if _, ok := cat.WithArguments(fast, nil); !ok {
			t.Error("WithArguments found no View")
		}
		_ = cat.Roots()
	})
	close(release)
	<-slowDone
	if _, ok := cat.State().View(slow); !ok {
		t.Fatal("the held project never got its View")
	}
}

// TestWithArgumentsMatchesFreshView checks a working copy laid over a
// project's View against a View built from scratch with the working copy
// in a root of its own ahead of the others, on random trees.
func TestWithArgumentsMatchesFreshView(t *testing.T) {
	deadline(t, 2*time.Minute)
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			base := t.TempDir()
			tr := &tree{t: t, r: rand.New(rand.NewPCG(6, seed)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
			for kind := range 2 {
				for i := range 4 {
					tr.collection(filepath.Join(tr.root(kind), fmt.Sprintf("d%d", i)))
				}
			}
			// The working copy: one of the user root's collections
			// changed but not installed, or one elsewhere.
			wcDir := filepath.Join(base, "work", "d1")
			if seed%2 == 0 {
				wcDir = filepath.Join(tr.root(1), "d1")
			}
			tr.collection(wcDir)
			if _, err := os.Stat(filepath.Join(wcDir, "pyproject.toml")); errors.Is(err, fs.ErrNotExist) {
				tr.write(filepath.Join(wcDir, "pyproject.toml"), "[project]\nname = \"c2\"\nversion = \"1.2.0\"\ndescription = \"d\"\n")
			}
			cat := catalog.New(catalog.Options{Home: tr.home})
			st, _ := cat.AddProject(tr.proj)
			before, _ := st.View(tr.proj)
			beforeText := render(before)
			wc := (&discovery.Loader{}).Load(discovery.Root{Kind: discovery.RootArgument, Path: filepath.Dir(wcDir)}, wcDir)
			got, ok := cat.WithArguments(tr.proj, []*discovery.Collection{wc})
			if !ok {
				t.Fatal("no View")
			}
			// From scratch: a catalog whose bundled root is empty, and
			// the View made with every collection listed again.
			roots := append([]discovery.Root{wc.Root}, before.Set.Roots...)
			cols := make([][]*discovery.Collection, len(roots))
			cols[0] = []*discovery.Collection{wc}
			for i := range before.Set.Roots {
				for _, c := range before.Set.InRoot(i) {
					if c.Dir != wc.Dir && c.RealDir != wc.RealDir {
						cols[i+1] = append(cols[i+1], c)
					}
				}
			}
			want := resolve.NewSet(roots, cols)
			var wb strings.Builder
			for _, c := range want.Collections() {
				fmt.Fprintf(&wb, "col %s %s %v\n", c.Dir, c.Name, c.Valid)
			}
			for _, c := range want.Winners() {
				fmt.Fprintf(&wb, "win %s %s\n", c.Name, c.Dir)
			}
			var gotCross, wantCross strings.Builder
			for _, c := range want.Collections() {
				fmt.Fprintln(&wantCross, check.Collection(want, c))
				fmt.Fprintln(&gotCross, got.CollectionDiagnostics(c)[len(c.OwnDiagnostics()):])
			}
			var gb strings.Builder
			for _, c := range got.Set.Collections() {
				fmt.Fprintf(&gb, "col %s %s %v\n", c.Dir, c.Name, c.Valid)
			}
			for _, c := range got.Set.Winners() {
				fmt.Fprintf(&gb, "win %s %s\n", c.Name, c.Dir)
			}
			if gb.String() != wb.String() {
				t.Fatalf("WithArguments resolves\n%s\nfrom scratch\n%s", gb.String(), wb.String())
			}
			for _, c := range want.Collections() {
				gotDs := fmt.Sprint(crossOf(got, c))
				wantDs := fmt.Sprint(sorted(append(check.Collection(want, c), check.Shadowed(want, c)...)))
				if gotDs != wantDs {
					t.Fatalf("collection %s: WithArguments checks\n%s\nfrom scratch\n%s", c.Dir, gotDs, wantDs)
				}
			}
			if render(before) != beforeText {
				t.Fatal("WithArguments changed the project's View")
			}
		})
	}
}

// crossOf returns the cross-reference and shadowing diagnostics a View
// has for c: its CollectionDiagnostics without c's own.
func crossOf(v *catalog.View, c *discovery.Collection) []diag.Diagnostic {
	own := map[string]int{}
	for _, d := range c.OwnDiagnostics() {
		own[d.String()]++
	}
	var out []diag.Diagnostic
	for _, d := range v.CollectionDiagnostics(c) {
		if own[d.String()] > 0 {
			own[d.String()]--
			continue
		}
		out = append(out, d)
	}
	return out
}

func sorted(ds []diag.Diagnostic) []diag.Diagnostic {
	diag.Sort(ds)
	return ds
}

func hasChange(cs []catalog.Change, want catalog.Change) bool {
	for _, c := range cs {
		if c == want {
			return true
		}
	}
	return false
}

func rootInfo(st *catalog.State, root string) catalog.RootInfo {
	for _, ri := range st.Roots() {
		if ri.Root.Path == root {
			return ri
		}
	}
	return catalog.RootInfo{}
}

// TestRootsHoldsRootsBeingRead checks that a root a registration is
// reading is among Roots before the registration's View is published:
// whoever must find the root of a file (a file found empty, to be read
// again once its save is done) finds it.
func TestRootsHoldsRootsBeingRead(t *testing.T) {
	deadline(t, 2*time.Minute)
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(15, 15)), home: filepath.Join(base, "home")}
	proj := newProject(t, tr, "p")
	root := filepath.Join(proj, ".amplifier", "collections")
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	loader := &discovery.Loader{ReadFile: func(p string) ([]byte, error) {
		if strings.HasPrefix(p, root) {
			once.Do(func() { close(held) })
			<-release
		}
		return os.ReadFile(p)
	}}
	cat := catalog.New(catalog.Options{Home: tr.home, Loader: loader})
	cat.AddProject("")
	done := make(chan struct{})
	go func() {
		defer close(done)
		cat.AddProject(proj)
	}()
	<-held
	found := slices.ContainsFunc(cat.Roots(), func(r discovery.Root) bool { return r.Path == root })
	close(release)
	<-done
	if !found {
		t.Fatal("a root being read for a registration is not among Roots")
	}
}
