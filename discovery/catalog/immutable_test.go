package catalog_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/check"
	"github.com/amplidex/amplidex/query"
)

// A deep snapshot of a value: every field, element and entry reachable
// from it, by path, read with reflect (unexported fields too), so that a
// write anywhere in a published View or Set shows as a path whose value
// changed. It follows the house rules of what may change in a value
// handed out:
//   - a sync.Mutex (or RWMutex) guards the fields below it in its struct:
//     caches, filled and changed under it (a Set's stats). They are not
//     read, nor is the mutex;
//   - a sync.Once fills the field below it once, when first asked: that
//     field may go from its zero value to a value, and is then compared
//     like any other. It is read after everything else, so that what it
//     points to is first reached through the fields that own it;
//   - a sync.Map, a sync.Pool and the sync/atomic types are caches or
//     counters of their own; functions and channels are compared only by
//     being nil or not.
//
// A pointer reached again is written as a reference to the path where it
// was first reached: sharing is part of what is compared.

// snapshot is a deep snapshot: the value at each path, and the paths of
// the Once-filled fields that were still empty.
type snapshot struct {
	values map[string]string
	empty  map[string]bool // Once-filled fields not filled yet
}

type walker struct {
	snapshot
	seen  map[ident]string // pointers and maps met, by the path they were first met at
	later []pending        // Once-filled fields, read last
}

// ident is a pointer or a map: its address and type (a struct and its
// first field share an address).
type ident struct {
	p uintptr
	t reflect.Type
}

type pending struct {
	path string
	v    reflect.Value
}

// snap returns the deep snapshot of v.
func snap(v any) snapshot {
	w := &walker{snapshot: snapshot{values: map[string]string{}, empty: map[string]bool{}}, seen: map[ident]string{}}
	w.walk("", reflect.ValueOf(v))
	for len(w.later) > 0 {
		p := w.later[0]
		w.later = w.later[1:]
		if p.v.IsZero() {
			w.empty[p.path] = true
			w.values[p.path] = "(empty)"
			continue
		}
		w.walk(p.path, p.v)
	}
	return w.snapshot
}

var (
	mutexType   = reflect.TypeFor[sync.Mutex]()
	rwMutexType = reflect.TypeFor[sync.RWMutex]()
	onceType    = reflect.TypeFor[sync.Once]()
)

// opaque reports the types that are not compared: caches and counters of
// their own.
func opaque(t reflect.Type) bool {
	switch t.PkgPath() {
	case "sync/atomic":
		return true
	case "sync":
		return t.Name() == "Map" || t.Name() == "Pool"
	}
	return false
}

func (w *walker) walk(path string, v reflect.Value) {
	if !v.IsValid() {
		w.values[path] = "invalid"
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Map:
		if v.IsNil() {
			w.values[path] = "nil"
			return
		}
		// Two map values of one map share its entries: a map met again
		// is a reference too.
		key := ident{v.Pointer(), v.Type()}
		if first, ok := w.seen[key]; ok {
			w.values[path] = "ref " + first
			return
		}
		w.seen[key] = path
	}
	switch v.Kind() {
	case reflect.Pointer:
		w.walk(path+"*", v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			w.values[path] = "nil"
			return
		}
		w.values[path+".(type)"] = v.Elem().Type().String()
		w.walk(path+".(value)", v.Elem())
	case reflect.Struct:
		t := v.Type()
		if opaque(t) {
			return
		}
		onceFilled := false
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Type == mutexType || f.Type == rwMutexType {
				return // it and the fields below are what it guards
			}
			if f.Type == onceType {
				onceFilled = true
				continue
			}
			p := path + "." + f.Name
			if onceFilled {
				onceFilled = false
				w.later = append(w.later, pending{p, v.Field(i)})
				continue
			}
			w.walk(p, v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			w.values[path] = "nil"
			return
		}
		w.values[path+".len"] = strconv.Itoa(v.Len())
		for i := range v.Len() {
			w.walk(path+"["+strconv.Itoa(i)+"]", v.Index(i))
		}
	case reflect.Map:
		type entry struct {
			key string
			v   reflect.Value
		}
		var entries []entry
		for it := v.MapRange(); it.Next(); {
			entries = append(entries, entry{keyString(it.Key()), it.Value()})
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
		w.values[path+".len"] = strconv.Itoa(len(entries))
		for _, e := range entries {
			w.walk(path+"["+e.key+"]", e.v)
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		w.values[path] = fmt.Sprintf("%s nil=%v", v.Kind(), v.IsNil())
	case reflect.String:
		w.values[path] = strconv.Quote(v.String())
	case reflect.Bool:
		w.values[path] = strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.values[path] = strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		w.values[path] = strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		w.values[path] = strconv.FormatFloat(v.Float(), 'g', -1, 64)
	default:
		w.values[path] = "unhandled " + v.Kind().String()
	}
}

// keyString renders a map key: the keys of the maps of a View are
// strings, Roots and other comparable structs of plain fields.
func keyString(k reflect.Value) string {
	switch k.Kind() {
	case reflect.String:
		return strconv.Quote(k.String())
	case reflect.Struct:
		parts := make([]string, k.NumField())
		for i := range k.NumField() {
			parts[i] = keyString(k.Field(i))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10)
	case reflect.Bool:
		return strconv.FormatBool(k.Bool())
	case reflect.Pointer:
		return fmt.Sprintf("%#x", k.Pointer())
	}
	return k.Kind().String()
}

// changes returns how after differs from before, the snapshots of one
// value taken at two times: every path whose value changed, went or
// came, but for a Once-filled field that was empty before and is
// filled now. It shows at most max of them.
func changes(before, after snapshot, max int) []string {
	var out []string
	for p, b := range before.values {
		if before.empty[p] {
			continue
		}
		if a, ok := after.values[p]; !ok {
			out = append(out, fmt.Sprintf("%s: was %s, is gone", p, b))
		} else if a != b {
			out = append(out, fmt.Sprintf("%s: was %s, is %s", p, b, a))
		}
	}
	for p, a := range after.values {
		if _, ok := before.values[p]; ok {
			continue
		}
		filled := false
		for e := range before.empty {
			if p == e || strings.HasPrefix(p, e+".") || strings.HasPrefix(p, e+"[") || strings.HasPrefix(p, e+"*") {
				filled = true
				break
			}
		}
		if !filled {
			out = append(out, fmt.Sprintf("%s: was not there, is %s", p, a))
		}
	}
	sort.Strings(out)
	if len(out) > max {
		out = append(out[:max], fmt.Sprintf("… and %d more", len(out)-max))
	}
	return out
}

// TestSnapshotSeesWrites: the snapshot tells a write into a published
// value's map, slice or field from a Once filling what it fills.
func TestSnapshotSeesWrites(t *testing.T) {
	type inner struct{ N int }
	type lazy struct {
		once sync.Once
		v    []string
	}
	type value struct {
		M    map[string][]int
		S    []*inner
		P    *inner
		mu   sync.Mutex
		memo map[string]bool // guarded by mu: a cache
	}
	fresh := func() *value {
		shared := &inner{1}
		return &value{M: map[string][]int{"a": {1, 2}}, S: []*inner{shared, {2}}, P: shared, memo: map[string]bool{}}
	}
	for _, tc := range []struct {
		name  string
		write func(v *value)
		seen  bool
	}{
		{"map entry added", func(v *value) { v.M["b"] = nil }, true},
		{"slice in a map written", func(v *value) { v.M["a"][1] = 3 }, true},
		{"pointee written", func(v *value) { v.S[1].N = 5 }, true},
		{"sharing broken", func(v *value) { v.P = &inner{1} }, true},
		{"cache under a mutex", func(v *value) { v.mu.Lock(); v.memo["x"] = true; v.mu.Unlock() }, false},
	} {
		v := fresh()
		before := snap(v)
		tc.write(v)
		if got := changes(before, snap(v), 5); (len(got) > 0) != tc.seen {
			t.Errorf("%s: changes %v, want seen %v", tc.name, got, tc.seen)
		}
	}
	l := &lazy{}
	before := snap(l)
	l.once.Do(func() { l.v = []string{"filled"} })
	if got := changes(before, snap(l), 5); len(got) > 0 {
		t.Errorf("a Once filling its field is taken for a write: %v", got)
	}
	before = snap(l)
	l.v[0] = "written"
	if got := changes(before, snap(l), 5); len(got) == 0 {
		t.Error("a write into what a Once filled is not seen")
	}
}

// TestPublishedNeverWritten: no published State, View or Set is ever
// written. Each round takes a deep snapshot of the latest State, then
// runs, from several goroutines at once, every kind of change (edits,
// lock files, registrations and removals, reconfiguration, working
// copies laid over Views) and every kind of question (diagnostics,
// checks, resolution, the query answers); once they are done, every
// State snapshotted so far must be as it was.
func TestPublishedNeverWritten(t *testing.T) {
	deadline(t, 3*time.Minute)
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(41, 1)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
	other := filepath.Join(base, "other")
	bundled := filepath.Join(base, "bundled")
	roots := []string{tr.root(0), tr.root(1), filepath.Join(other, ".amplifier", "collections"), bundled}
	for _, r := range roots {
		for i := range 4 {
			tr.collection(filepath.Join(r, fmt.Sprintf("d%d", i)))
		}
	}
	locks := []string{filepath.Join(tr.proj, ".amplifier", "collections.lock"), filepath.Join(tr.home, ".amplifier", "collections.lock")}
	writeLock := func(r *rand.Rand, path string) {
		tr.write(path, fmt.Sprintf(`{"version": "1.1", "collections": {"c%d": {"name": "c%d", "source": "git+https://x/y@main", "commit": null, "path": %q, "installed_at": "2025-10-31T10:30:00Z", "modules": {}}}}`,
			r.IntN(6), r.IntN(6), filepath.Join(filepath.Dir(path), "collections", fmt.Sprintf("d%d", r.IntN(5)))))
	}
	r0 := rand.New(rand.NewPCG(41, 2))
	for _, l := range locks {
		writeLock(r0, l)
	}
	cat := catalog.New(catalog.Options{Home: tr.home, Bundled: []string{bundled}})
	cat.AddProject("")
	cat.AddProject(tr.proj)
	cat.AddProject(other)

	type kept struct {
		st   *catalog.State
		snap snapshot
	}
	var states []kept
	for round := range 4 {
		st := cat.State()
		for _, v := range st.Views() {
			// What a View builds when first asked, built now, so that a
			// write into it later is seen.
			v.Diagnostics()
			v.Set.Collections()
			v.Set.Winners()
		}
		states = append(states, kept{st, snap(st)})
		if round == 0 {
			t.Logf("a State of %d Views: %d values in its snapshot", len(st.Views()), len(states[0].snap.values))
		}

		var (
			fsMu sync.Mutex // one writer of the tree at a time: tree's rand is not safe
			wg   sync.WaitGroup
		)
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(round), uint64(w)))
				for range 40 {
					switch n := r.IntN(20); {
					case n < 6:
						root := roots[r.IntN(len(roots))]
						dir := filepath.Join(root, fmt.Sprintf("d%d", r.IntN(5)))
						fsMu.Lock()
						if r.IntN(4) == 0 {
							os.RemoveAll(dir)
						} else {
							tr.collection(dir)
						}
						fsMu.Unlock()
						cat.Update(catalog.Change{Root: root, Dir: dir})
					case n < 8:
						l := locks[r.IntN(len(locks))]
						fsMu.Lock()
						writeLock(r, l)
						fsMu.Unlock()
						cat.Update(catalog.Change{Lock: l})
					case n < 9:
						cat.AddProject([]string{tr.proj, other}[r.IntN(2)])
					case n < 10:
						cat.RemoveProject(other)
					case n < 11:
						cat.Reconfigure([][]string{nil, {bundled}}[r.IntN(2)], nil)
					case n < 13:
						fsMu.Lock()
						wc := (&discovery.Loader{}).Load(discovery.Root{Kind: discovery.RootArgument, Path: roots[0]},
							filepath.Join(roots[0], fmt.Sprintf("d%d", r.IntN(4))))
						fsMu.Unlock()
						if wc != nil {
							if v, ok := cat.WithArguments(tr.proj, []*discovery.Collection{wc}); ok {
								v.Diagnostics()
							}
						}
					default:
						// Questions, of the State kept last round and of the latest.
						for _, st := range []*catalog.State{states[len(states)-1].st, cat.State()} {
							for _, v := range st.Views() {
								ask(r, v)
							}
						}
					}
				}
			}()
		}
		wg.Wait()
		for i, k := range states {
			if diff := changes(k.snap, snap(k.st), 20); len(diff) > 0 {
				t.Fatalf("round %d: the State of version %d (snapshotted in round %d) was written to:\n%s",
					round, k.st.Version, i, strings.Join(diff, "\n"))
			}
		}
	}
}

// ask asks v a random question, as the daemon's and the command line's
// answers do.
func ask(r *rand.Rand, v *catalog.View) {
	cols := v.Set.Collections()
	switch r.IntN(8) {
	case 0:
		v.Diagnostics()
		v.Checks()
	case 1:
		if len(cols) > 0 {
			c := cols[r.IntN(len(cols))]
			v.DiagnosticsUnder(c.Dir)
			v.CollectionDiagnostics(c)
			check.Collection(v.Set, c)
		}
	case 2:
		for _, lp := range v.LockFiles() {
			v.LockDiagnostics(lp)
		}
	case 3:
		query.MethodResolve.Answer(v, query.NameParams{Name: fmt.Sprintf("c%d", r.IntN(7))})
		query.MethodCollections.Answer(v, query.ListParams{})
	case 4:
		query.MethodDiagnostics.Answer(v, query.DiagnosticsParams{})
	case 5:
		query.MethodAgents.Answer(v, query.ListParams{})
		query.MethodProfiles.Answer(v, query.ListParams{})
	case 6:
		for _, w := range v.Set.Winners() {
			for _, res := range w.Resources {
				if res.Kind == discovery.KindProfile {
					query.MethodProfile.Answer(v, query.ProfileParams{Ref: w.Name + ":" + res.Name, Merged: true})
				}
			}
		}
	default:
		query.MethodCollection.Answer(v, query.NameParams{Name: fmt.Sprintf("c%d", r.IntN(6))})
		catalog.Inventory(v.Set)
	}
}
