package catalog_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
)

// TestProjectsRootsAndViews registers and removes projects and checks
// what Projects, Roots, ProjectKey and State.Views say at each step.
func TestProjectsRootsAndViews(t *testing.T) {
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(8, 8)), home: filepath.Join(base, "home")}
	tr.collection(filepath.Join(tr.root(1), "u"))
	p1, p2 := newProject(t, tr, "p1"), newProject(t, tr, "p2")
	cat := catalog.New(catalog.Options{Home: tr.home})
	if key := cat.ProjectKey(tr.home); key != "" {
		t.Fatalf("the home directory is registered as project %q, want none", key)
	}
	if key := cat.ProjectKey(p1 + "/"); key != p1 {
		t.Fatalf("ProjectKey(%q) = %q, want the cleaned directory", p1+"/", key)
	}
	cat.AddProject("")
	cat.AddProject(p1)
	st, d := cat.AddProject(p2)
	if d == nil || d.Version != st.Version {
		t.Fatalf("AddProject's Delta %+v does not carry its State's version %d", d, st.Version)
	}
	if got := cat.Projects(); !slices.Equal(got, []string{"", p1, p2}) {
		t.Fatalf("Projects() = %q", got)
	}
	if n := len(cat.State().Views()); n != 3 {
		t.Fatalf("%d Views, want 3", n)
	}
	root1 := filepath.Join(p1, ".amplifier", "collections")
	if !slices.ContainsFunc(cat.Roots(), func(r discovery.Root) bool { return r.Path == root1 }) {
		t.Fatalf("Roots() lacks %s: %v", root1, cat.Roots())
	}
	if _, d := cat.AddProject(p1); d != nil {
		t.Fatal("registering a registered project again made a change")
	}
	st, d = cat.RemoveProject(p1)
	if _, ok := st.View(p1); ok {
		t.Fatal("a removed project still has a View")
	}
	if !slices.Contains(d.Gone, filepath.Join(root1, "one", "pyproject.toml")) {
		t.Fatalf("removing the only project of a root does not name its files gone: %v", d.Gone)
	}
	if slices.ContainsFunc(cat.Roots(), func(r discovery.Root) bool { return r.Path == root1 }) {
		t.Fatal("a root no project uses is still held")
	}
	if _, d := cat.RemoveProject(p1); len(d.Gone) != 0 {
		t.Fatalf("removing an unknown project dropped files: %v", d.Gone)
	}
	if got := cat.Projects(); !slices.Equal(got, []string{"", p2}) {
		t.Fatalf("Projects() = %q after a removal", got)
	}
}

// TestLockFiles checks the lock files of a View and their diagnostics,
// as a lock file is rewritten.
func TestLockFiles(t *testing.T) {
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(9, 9)), home: filepath.Join(base, "home")}
	tr.collection(filepath.Join(tr.root(1), "u"))
	lock := filepath.Join(tr.home, ".amplifier", "collections.lock")
	tr.write(lock, `{"version": "1.1", "collections": {"gone": {"name": "gone", "version": "1.0.0", "source": "git+https://x/y@main", "path": "collections/nowhere", "modules": {}}}}`)
	cat := catalog.New(catalog.Options{Home: tr.home})
	st, _ := cat.AddProject("")
	v, _ := st.View("")
	if got := v.LockFiles(); !slices.Equal(got, []string{lock}) {
		t.Fatalf("LockFiles() = %v, want the user's", got)
	}
	before, ok := v.LockDiagnostics(lock)
	if !ok || len(before) == 0 {
		t.Fatalf("the lock file's missing entry is not reported: %v %v", before, ok)
	}
	if _, ok := v.LockDiagnostics(filepath.Join(base, "other.lock")); ok {
		t.Fatal("a file that is no lock file of the View has lock diagnostics")
	}
	tr.write(lock, "{broken")
	st, d := cat.Update(catalog.Change{Lock: lock})
	v, _ = st.View("")
	got, _ := v.LockDiagnostics(lock)
	if len(got) != 1 || got[0].Code != diag.CodeLockCorrupt {
		t.Fatalf("the corrupt lock file is reported as %v", got)
	}
	if vd := d.Views[""]; !slices.Equal(vd.Locks, []string{lock}) {
		t.Fatalf("the Delta does not name the lock file: %+v", vd)
	}
}

// TestReconfigure adds and removes a bundled root and changes the loader,
// and compares the Views with fresh catalogs each time.
func TestReconfigure(t *testing.T) {
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(10, 10)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
	bundled := filepath.Join(base, "bundled")
	for i := range 3 {
		tr.collection(filepath.Join(tr.root(0), fmt.Sprintf("d%d", i)))
		tr.collection(filepath.Join(tr.root(1), fmt.Sprintf("d%d", i)))
		tr.collection(filepath.Join(bundled, fmt.Sprintf("b%d", i)))
	}
	cat := catalog.New(catalog.Options{Home: tr.home})
	cat.AddProject("")
	cat.AddProject(tr.proj)
	check := func(step string, bundled []string, loader *discovery.Loader) {
		t.Helper()
		for _, p := range []string{"", tr.proj} {
			got, _ := cat.State().View(p)
			fresh := catalog.New(catalog.Options{Home: tr.home, Bundled: bundled, Loader: loader})
			st, _ := fresh.AddProject(p)
			want, _ := st.View(p)
			if g, w := render(got), render(want); g != w {
				t.Fatalf("%s, project %q:\n%s\nfresh:\n%s", step, p, g, w)
			}
		}
	}
	st, d := cat.Reconfigure([]string{bundled}, nil)
	check("bundled root added", []string{bundled}, &discovery.Loader{})
	if vd := d.Views[tr.proj]; len(vd.Dirs) == 0 {
		t.Fatal("a rebuild names no directory in the Delta")
	}
	if !slices.ContainsFunc(st.Roots(), func(ri catalog.RootInfo) bool { return ri.Root.Path == bundled }) {
		t.Fatal("the bundled root is not held")
	}
	strict := &discovery.Loader{Schema: schema.Options{UnknownKeySeverity: diag.SeverityWarning}}
	cat.Reconfigure([]string{bundled}, strict)
	check("loader changed", []string{bundled}, strict)
	_, d = cat.Reconfigure(nil, nil)
	check("bundled root removed", nil, strict)
	if !slices.ContainsFunc(d.Gone, func(p string) bool { return strings.HasPrefix(p, bundled) }) {
		t.Fatalf("removing the bundled root names none of its files gone: %v", d.Gone)
	}
}

// TestConcurrentChangesMatchFreshCatalog changes random collections of
// several roots, registers, removes and reconfigures, and lays working
// copies over Views, all from several goroutines at once; once they are
// done, every project's View must equal a fresh catalog's.
func TestConcurrentChangesMatchFreshCatalog(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { concurrentMatchesFresh(t, seed) })
	}
}

func concurrentMatchesFresh(t *testing.T, seed uint64) {
	deadline(t, 2*time.Minute)
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(11, seed)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
	other := filepath.Join(base, "other")
	bundled := filepath.Join(base, "bundled")
	roots := []string{tr.root(0), tr.root(1), filepath.Join(other, ".amplifier", "collections"), bundled}
	for _, r := range roots {
		for i := range 4 {
			tr.collection(filepath.Join(r, fmt.Sprintf("d%d", i)))
		}
	}
	cat := catalog.New(catalog.Options{Home: tr.home})
	cat.AddProject("")
	var (
		fsMu    sync.Mutex // one writer of the tree at a time: tree's rand is not safe
		cfgMu   sync.Mutex // guards config
		config  []string
		wg      sync.WaitGroup
		workers = 4
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for range 60 {
				switch n := r.IntN(20); {
				case n < 10:
					root := roots[r.IntN(len(roots))]
					dir := filepath.Join(root, fmt.Sprintf("d%d", r.IntN(5)))
					fsMu.Lock()
					if r.IntN(4) == 0 {
						os.RemoveAll(dir)
					} else {
						tr.collection(dir)
					}
					fsMu.Unlock()
					if r.IntN(5) == 0 {
						cat.Update(catalog.Change{Root: root})
					} else {
						cat.Update(catalog.Change{Root: root, Dir: dir})
					}
				case n < 13:
					cat.AddProject([]string{tr.proj, other}[r.IntN(2)])
				case n < 15:
					cat.RemoveProject([]string{tr.proj, other}[r.IntN(2)])
				case n < 17:
					cfgMu.Lock()
					config = nil
					if r.IntN(2) == 0 {
						config = []string{bundled}
					}
					cat.Reconfigure(config, nil)
					cfgMu.Unlock()
				default:
					fsMu.Lock()
					wc := (&discovery.Loader{}).Load(discovery.Root{Kind: discovery.RootArgument, Path: roots[0]},
						filepath.Join(roots[0], fmt.Sprintf("d%d", r.IntN(4))))
					fsMu.Unlock()
					if wc != nil {
						for _, p := range []string{"", tr.proj} {
							if v, ok := cat.WithArguments(p, []*discovery.Collection{wc}); ok && v.Set.At(wc.Dir) != wc {
								t.Errorf("WithArguments does not put the working copy first at %s", wc.Dir)
							}
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	// Quiet now: every root read once more, as a watcher's rescan would.
	var all []catalog.Change
	for _, r := range roots {
		all = append(all, catalog.Change{Root: r})
	}
	st, _ := cat.Update(all...)
	for p, got := range st.Views() {
		fresh := catalog.New(catalog.Options{Home: tr.home, Bundled: config})
		fst, _ := fresh.AddProject(p)
		want, _ := fst.View(p)
		if g, w := render(got), render(want); g != w {
			t.Fatalf("seed %d, project %q:\n%s\nfresh:\n%s", seed, p, g, w)
		}
	}
}

// TestSuppressionsApplyInTheView checks that a View applies the
// suppression comments of its files in every answer (all diagnostics,
// those of a collection, those under a path), that a comment covering
// nothing is reported, and that editing a comment away brings the
// diagnostic back.
func TestSuppressionsApplyInTheView(t *testing.T) {
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(12, 12)), home: filepath.Join(base, "home")}
	dir := filepath.Join(tr.root(1), "c")
	tr.write(filepath.Join(dir, "pyproject.toml"), "[project]\nname = \"c\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
	agent := filepath.Join(dir, "agents", "a.md")
	write := func(comment string) {
		tr.write(agent, "---\nmeta:\n  name: a\n  description: d\nbogus: 1"+comment+"\nmodel: x  # amplidex: ignore[ref/]\n---\n")
	}
	write("  # amplidex: ignore[schema/unknown-key]")
	cat := catalog.New(catalog.Options{Home: tr.home})
	st, _ := cat.AddProject("")
	v, _ := st.View("")
	codes := func(ds []diag.Diagnostic) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Code)
		}
		return out
	}
	want := []string{diag.CodeSuppressUnused}
	col := v.Set.Lookup("c")
	for name, ds := range map[string][]diag.Diagnostic{"Diagnostics": v.Diagnostics(),
		"CollectionDiagnostics": v.CollectionDiagnostics(col), "DiagnosticsUnder": v.DiagnosticsUnder(agent)} {
		if got := codes(ds); !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v (the unknown key suppressed, the comment on model unused)", name, got, want)
		}
	}
	write("")
	st, _ = cat.Update(catalog.Change{Root: tr.root(1), Dir: dir})
	v, _ = st.View("")
	if got := codes(v.DiagnosticsUnder(agent)); !slices.Equal(got, []string{diag.CodeUnknownKey, diag.CodeSuppressUnused}) {
		t.Fatalf("with the comment gone: %v", got)
	}
}

// TestScopes registers one project under the catalog's own roots and
// under another Scope's (other bundled roots, another home) and checks
// that each View resolves with its own roots, that a change to a root
// reaches the Views that hold it, and that KeyScope decodes the keys.
func TestScopes(t *testing.T) {
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(13, 13)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
	b1, b2 := filepath.Join(base, "b1"), filepath.Join(base, "b2")
	write := func(dir, name, version string) {
		tr.write(filepath.Join(dir, "pyproject.toml"), fmt.Sprintf("[project]\nname = %q\nversion = %q\ndescription = \"d\"\n", name, version))
	}
	write(filepath.Join(b1, "f"), "foundation", "1.0.0")
	write(filepath.Join(b2, "f"), "foundation", "2.0.0")
	write(filepath.Join(tr.root(0), "mine"), "mine", "1.0.0")
	otherHome := filepath.Join(base, "other-home")
	write(filepath.Join(otherHome, ".amplifier", "collections", "u"), "theirs", "1.0.0")
	cat := catalog.New(catalog.Options{Home: tr.home, Bundled: []string{b1}})
	own := cat.ProjectKey(tr.proj)
	scoped := cat.ScopeKey(catalog.Scope{Project: tr.proj, Home: otherHome, Bundled: []string{b2}})
	if own == scoped || !catalog.IsScopeKey(scoped) || catalog.IsScopeKey(own) {
		t.Fatalf("keys %q and %q", own, scoped)
	}
	cat.AddProject(own)
	st, _ := cat.AddProject(scoped)
	version := func(st *catalog.State, key string) string {
		v, ok := st.View(key)
		if !ok {
			t.Fatalf("no View of %q", key)
		}
		if c := v.Set.Lookup("foundation"); c != nil {
			return c.Version
		}
		return ""
	}
	if a, b := version(st, own), version(st, scoped); a != "1.0.0" || b != "2.0.0" {
		t.Fatalf("foundation resolves to %s in the catalog's own roots and %s in the other scope's; want 1.0.0 and 2.0.0", a, b)
	}
	v, _ := st.View(scoped)
	if v.Set.Lookup("theirs") == nil || v.Set.Lookup("mine") == nil {
		t.Fatal("the other scope's View lacks its home's or its project's collection")
	}
	write(filepath.Join(b2, "f"), "foundation", "2.1.0")
	st, _ = cat.Update(catalog.Change{Root: b2, Dir: filepath.Join(b2, "f")})
	if b := version(st, scoped); b != "2.1.0" {
		t.Fatalf("a change to the other scope's bundled root gives %s", b)
	}
	if got := cat.KeyScope(scoped); got.Project != tr.proj || got.Home != otherHome || !slices.Equal(got.Bundled, []string{b2}) {
		t.Fatalf("KeyScope(%q) = %+v", scoped, got)
	}
	if got := cat.KeyScope(own); got.Project != tr.proj || got.Home != tr.home || !slices.Equal(got.Bundled, []string{b1}) {
		t.Fatalf("KeyScope(%q) = %+v", own, got)
	}
	if home := cat.ScopeKey(catalog.Scope{Project: otherHome, Home: otherHome}); cat.KeyScope(home).Project != "" {
		t.Fatal("the home directory of a scope is a project of it")
	}
	cat.Reconfigure([]string{b2}, nil)
	if a := version(cat.State(), own); a != "2.1.0" {
		t.Fatalf("the catalog's own roots changed, but its View resolves foundation to %s", a)
	}
	if len(cat.RootsOf(scoped)) != 3 {
		t.Fatalf("RootsOf(%q) = %v", scoped, cat.RootsOf(scoped))
	}
}

// TestStressMatchesFresh is a harder TestConcurrentChangesMatchFreshCatalog:
// more roots, Views of other Scopes, listings made to fail and reads
// retried, and more operations. AMPLIDEX_CATALOG_STRESS=N runs N seeds.
func TestStressMatchesFresh(t *testing.T) {
	deadline(t, 2*time.Minute)
	seeds := uint64(3)
	if s := os.Getenv("AMPLIDEX_CATALOG_STRESS"); s != "" {
		fmt.Sscan(s, &seeds)
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { stressMatchesFresh(t, seed) })
	}
}

func stressMatchesFresh(t *testing.T, seed uint64) {
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(14, seed)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
	other := filepath.Join(base, "other")
	b1, b2 := filepath.Join(base, "b1"), filepath.Join(base, "b2")
	roots := []string{tr.root(0), tr.root(1), filepath.Join(other, ".amplifier", "collections"), b1, b2}
	for _, r := range roots {
		for i := range 3 {
			tr.collection(filepath.Join(r, fmt.Sprintf("d%d", i)))
		}
	}
	var (
		faultMu sync.Mutex
		failing = map[string]bool{}
	)
	loader := &discovery.Loader{ReadDir: func(dir string) ([]os.DirEntry, error) {
		faultMu.Lock()
		bad := failing[dir]
		faultMu.Unlock()
		if bad {
			return nil, &os.PathError{Op: "open", Path: dir, Err: os.ErrPermission}
		}
		return os.ReadDir(dir)
	}}
	cat := catalog.New(catalog.Options{Home: tr.home, Bundled: []string{b1}, Loader: loader})
	scopes := map[string]catalog.Scope{
		cat.ScopeKey(catalog.Scope{Project: tr.proj, Home: tr.home, Bundled: []string{b2}}): {Project: tr.proj, Home: tr.home, Bundled: []string{b2}},
		cat.ScopeKey(catalog.Scope{Project: "", Home: tr.home, Bundled: []string{b1, b2}}):  {Home: tr.home, Bundled: []string{b1, b2}},
		cat.ScopeKey(catalog.Scope{Project: other, Home: "", Bundled: nil}):                 {Project: other},
	}
	keys := []string{"", tr.proj, other}
	for k := range scopes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	cat.AddProject("")
	var (
		fsMu   sync.Mutex
		cfgMu  sync.Mutex // guards config
		config = []string{b1}
		wg     sync.WaitGroup
	)
	for w := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(100+w)))
			for range 80 {
				root := roots[r.IntN(len(roots))]
				dir := filepath.Join(root, fmt.Sprintf("d%d", r.IntN(4)))
				switch n := r.IntN(24); {
				case n < 10:
					fsMu.Lock()
					switch r.IntN(5) {
					case 0:
						os.RemoveAll(dir)
					case 1:
						os.Rename(dir, filepath.Join(root, fmt.Sprintf("d%d", r.IntN(4))))
					default:
						tr.collection(dir)
					}
					fsMu.Unlock()
					if r.IntN(4) == 0 {
						cat.Update(catalog.Change{Root: root})
					} else {
						cat.Update(catalog.Change{Root: root, Dir: dir}, catalog.Change{Root: root, Dir: filepath.Join(root, fmt.Sprintf("d%d", r.IntN(4)))})
					}
				case n < 13:
					cat.AddProject(keys[r.IntN(len(keys))])
				case n < 15:
					if k := keys[r.IntN(len(keys))]; k != "" {
						cat.RemoveProject(k)
					}
				case n < 17:
					cfgMu.Lock()
					config = [][]string{nil, {b1}, {b2}, {b2, b1}}[r.IntN(4)]
					cat.Reconfigure(config, nil)
					cfgMu.Unlock()
				case n < 20:
					faultMu.Lock()
					if r.IntN(2) == 0 {
						failing[root] = true
					} else {
						failing[dir] = true
					}
					faultMu.Unlock()
					cat.Update(catalog.Change{Root: root})
				case n < 22:
					faultMu.Lock()
					clear(failing)
					faultMu.Unlock()
				default:
					if v, ok := cat.State().View(keys[r.IntN(len(keys))]); ok {
						_ = v.Diagnostics()
					}
				}
			}
		}()
	}
	wg.Wait()
	faultMu.Lock()
	clear(failing)
	faultMu.Unlock()
	var all []catalog.Change
	for _, r := range roots {
		all = append(all, catalog.Change{Root: r})
	}
	st, _ := cat.Update(all...)
	for key, got := range st.Views() {
		home, bundled, project := tr.home, config, key
		if sc, ok := scopes[key]; ok {
			home, bundled, project = sc.Home, sc.Bundled, sc.Project
		}
		fresh := catalog.New(catalog.Options{Home: home, Bundled: bundled})
		fst, _ := fresh.AddProject(project)
		want, _ := fst.View(fresh.ProjectKey(project))
		if g, w := render(got), render(want); g != w {
			t.Fatalf("seed %d, view %q:\n%s\nfresh:\n%s", seed, key, g, w)
		}
	}
}

// TestPriorChecks builds a View, keeps its Checks as a run would at its
// end, and builds the View again in a new catalog given them: the new View
// equals a fresh one, its collections are not checked again (a poisoned
// result shows through), but for one whose check asked the file system,
// and for none when the Inventory changed.
func TestPriorChecks(t *testing.T) {
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(16, 16)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
	for kind := range 2 {
		for i := range 4 {
			tr.collection(filepath.Join(tr.root(kind), fmt.Sprintf("d%d", i)))
		}
	}
	// A collection whose mention names a document that is no resource:
	// its result depends on the file system.
	docs := filepath.Join(tr.root(0), "docs")
	tr.write(filepath.Join(docs, "pyproject.toml"), "[project]\nname = \"docs\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
	tr.write(filepath.Join(docs, "context", "k.md"), "See @docs:notes/readme.md\n")
	st, _ := catalog.New(catalog.Options{Home: tr.home}).AddProject(tr.proj)
	v, _ := st.View(tr.proj)
	saved := v.Checks()
	if !slices.Contains(saved.Volatile, docs) {
		t.Fatalf("the collection whose mention asked the file system is not volatile: %v", saved.Volatile)
	}
	// Poison one kept result: the new View must show it, for it is not
	// checked again...
	poisoned := ""
	for _, c := range v.Set.Collections() {
		if !slices.Contains(saved.Volatile, c.Dir) {
			poisoned = c.Dir
			break
		}
	}
	if poisoned == "" {
		t.Fatal("every collection is volatile: the tree has nothing to keep")
	}
	saved.Cross[poisoned] = []diag.Diagnostic{{Code: "poison", Path: poisoned, Message: "kept"}}
	// ...while the volatile collection is: the document appears meanwhile.
	tr.write(filepath.Join(docs, "notes", "readme.md"), "# Notes\n")
	prior := func(key string) *catalog.Checks {
		if key == tr.proj {
			return saved
		}
		return nil
	}
	st2, _ := catalog.New(catalog.Options{Home: tr.home, Prior: prior}).AddProject(tr.proj)
	v2, _ := st2.View(tr.proj)
	col := v2.Set.At(poisoned)
	if ds := v2.CollectionDiagnostics(col); !slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return d.Code == "poison" }) {
		t.Fatal("the kept results were not taken: the collection was checked again")
	}
	if ds := v2.CollectionDiagnostics(v2.Set.At(docs)); slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return d.Code == diag.CodeMentionUnresolved }) {
		t.Fatalf("the volatile collection was not checked again: %v", ds)
	}
	// Another file: another Inventory, nothing is taken.
	tr.write(filepath.Join(tr.root(1), "d2", "agents", "new.md"), "---\nmeta:\n  name: new\n  description: d\n---\n")
	st3, _ := catalog.New(catalog.Options{Home: tr.home, Prior: prior}).AddProject(tr.proj)
	v3, _ := st3.View(tr.proj)
	if ds := v3.CollectionDiagnostics(v3.Set.At(poisoned)); slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return d.Code == "poison" }) {
		t.Fatal("results kept over another Inventory were taken")
	}
	fresh, _ := catalog.New(catalog.Options{Home: tr.home}).AddProject(tr.proj)
	want, _ := fresh.View(tr.proj)
	if g, w := render(v3), render(want); g != w {
		t.Fatalf("with another Inventory:\n%s\nfresh:\n%s", g, w)
	}
}

// holdFirstRead returns a Loader whose first listing of dir closes
// reading and waits until release is closed.
func holdFirstRead(dir string) (loader *discovery.Loader, reading, release chan struct{}) {
	reading, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	loader = &discovery.Loader{ReadDir: func(d string) ([]os.DirEntry, error) {
		if d == dir {
			first := false
			once.Do(func() { first = true })
			if first {
				close(reading)
				<-release
			}
		}
		return os.ReadDir(d)
	}}
	return loader, reading, release
}

// TestSharedRootBeingRead: two Views share a root (a project's own
// roots, and the same project with a client's other home). While the
// first registration still reads the shared root, the second's View
// holds that root's collections all the same: it does not publish the
// root as the first found it before reading it (empty).
func TestSharedRootBeingRead(t *testing.T) {
	deadline(t, 2*time.Minute)
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(14, 14)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
	tr.write(filepath.Join(tr.root(0), "mine", "pyproject.toml"), "[project]\nname = \"mine\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
	shared := tr.root(0)
	loader, reading, release := holdFirstRead(shared)
	cat := catalog.New(catalog.Options{Home: tr.home, Loader: loader})
	scoped := cat.ScopeKey(catalog.Scope{Project: tr.proj, Home: filepath.Join(base, "other-home")})
	done := make(chan struct{})
	go func() {
		defer close(done)
		cat.AddProject(scoped)
	}()
	<-reading
	st, _ := cat.AddProject(cat.ProjectKey(tr.proj))
	close(release)
	<-done
	v, ok := st.View(cat.ProjectKey(tr.proj))
	if !ok || v.Set.Lookup("mine") == nil {
		t.Fatalf("the View published while another registration read the shared root lacks its collection (View %v)", ok)
	}
	if v, ok := cat.State().View(scoped); !ok || v.Set.Lookup("mine") == nil {
		t.Fatal("the first registration's View lacks the shared root's collection")
	}
}

// TestChangeDuringReadNotUndone: a change applied while an older read of
// its root is still under way, that finds a collection directory gone,
// is not undone when that read, which loaded the collection before it
// went, is recorded after it (found by the harness: a bundled root added
// back by a reload while one of its collections was removed).
func TestChangeDuringReadNotUndone(t *testing.T) {
	deadline(t, 2*time.Minute)
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(15, 15)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
	root := tr.root(1) // the user root, read by the daemon's own View
	for _, name := range []string{"a-gone", "b-slow"} {
		tr.write(filepath.Join(root, name, "pyproject.toml"), "[project]\nname = \""+name+"\"\nversion = \"1.0.0\"\ndescription = \"d\"\n")
	}
	loader, reading, release := holdFirstRead(filepath.Join(root, "b-slow"))
	// One worker: a-gone is loaded whole before b-slow holds the read.
	cat := catalog.New(catalog.Options{Home: tr.home, Loader: loader, Workers: 1})
	done := make(chan struct{})
	go func() {
		defer close(done)
		cat.AddProject("")
	}()
	<-reading
	gone := filepath.Join(root, "a-gone")
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	// The change reads the directory (gone) and records its batch, then
	// waits for the registration's View: let the read go once it is
	// recorded.
	before := catalog.Generation(cat)
	updated := make(chan struct{})
	go func() {
		defer close(updated)
		cat.Update(catalog.Change{Root: root, Dir: gone})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for catalog.Generation(cat) == before {
		if time.Now().After(deadline) {
			close(release)
			t.Fatal("the change was not recorded while the registration read")
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	<-done
	<-updated
	v, ok := cat.State().View("")
	if !ok {
		t.Fatal("no View of the daemon's own roots")
	}
	if v.Set.Lookup("a-gone") != nil {
		t.Error("a collection whose removal was applied during the root's first read is back once the read is recorded")
	}
	if v.Set.Lookup("b-slow") == nil {
		t.Error("the read's other collection is missing")
	}
}

// TestLabel: a key reads as words, never with the NUL bytes that join a
// ScopeKey's parts.
func TestLabel(t *testing.T) {
	cat := catalog.New(catalog.Options{Home: "/h"})
	key := cat.ScopeKey(catalog.Scope{Project: "/p", Home: "/o", Bundled: []string{"/b1", "/b2"}})
	for _, tc := range []struct{ key, want string }{
		{"", "no project"},
		{"/p", "/p"},
		{key, "/p with a client's roots (home /o, bundled /b1, /b2)"},
		{cat.ScopeKey(catalog.Scope{}), "no project with a client's roots (home none, bundled none)"},
	} {
		if got := catalog.Label(tc.key); got != tc.want {
			t.Errorf("Label(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

// TestScopeCollection: a Scope's collection, the one its client stands
// in, is a root of its own ahead of every other: its name resolves to it
// before the other roots' collection of that name, a change anywhere in
// it reads it again whole, its lock file is none, and it goes away with
// the directory.
func TestScopeCollection(t *testing.T) {
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(21, 21)), home: filepath.Join(base, "home")}
	write := func(dir, name, version string) {
		tr.write(filepath.Join(dir, "pyproject.toml"), fmt.Sprintf("[project]\nname = %q\nversion = %q\ndescription = \"d\"\n", name, version))
		tr.write(filepath.Join(dir, "agents", "helper.md"), "---\nname: helper\ndescription: Helps\n---\n")
	}
	clone := filepath.Join(base, "src", "spec-kit")
	write(clone, "spec-kit", "2.0.0")
	write(filepath.Join(tr.home, ".amplifier", "collections", "spec-kit"), "spec-kit", "1.0.0")
	cat := catalog.New(catalog.Options{Home: tr.home})
	key := cat.ScopeKey(catalog.Scope{Home: tr.home, Collection: clone})
	if s, ok := catalog.ParseScopeKey(key); !ok || s.Collection != clone || s.Home != tr.home || len(s.Bundled) != 0 {
		t.Fatalf("ParseScopeKey(ScopeKey) = %+v", s)
	}
	if l := catalog.Label(key); !strings.Contains(l, "the collection "+clone) {
		t.Errorf("Label = %q, want the collection named", l)
	}
	roots := cat.RootsOf(key)
	if len(roots) != 2 || roots[0] != (discovery.Root{Kind: discovery.RootArgument, Path: clone}) {
		t.Fatalf("RootsOf = %v, want the collection first, as a root of its own", roots)
	}
	st, _ := cat.AddProject(key)
	v, _ := st.View(key)
	if c := v.Set.Lookup("spec-kit"); c == nil || c.Dir != clone || c.Version != "2.0.0" {
		t.Fatalf("spec-kit resolves to %+v, want the clone", c)
	}
	if len(v.LockFiles()) != 1 {
		t.Errorf("lock files %v, want the user root's alone", v.LockFiles())
	}
	// A change below the collection, named as the daemon names it (the
	// root and the first directory below it), reads it whole.
	tr.write(filepath.Join(clone, "agents", "helper.md"), "---\nname: helper\ndescription: Helps\nbogus: 1\n---\n")
	st, _ = cat.Update(catalog.Change{Root: clone, Dir: filepath.Join(clone, "agents")})
	v, _ = st.View(key)
	if ds := v.Diagnostics(); !slices.ContainsFunc(ds, func(d diag.Diagnostic) bool {
		return d.Code == diag.CodeUnknownKey && d.Path == filepath.Join(clone, "agents", "helper.md")
	}) {
		t.Fatalf("the error planted in the clone's agent is not reported: %v", ds)
	}
	if err := os.RemoveAll(clone); err != nil {
		t.Fatal(err)
	}
	st, _ = cat.Update(catalog.Change{Root: clone})
	v, _ = st.View(key)
	if c := v.Set.Lookup("spec-kit"); c == nil || c.Version != "1.0.0" {
		t.Fatalf("with the clone gone, spec-kit resolves to %+v, want the user root's", c)
	}
}
