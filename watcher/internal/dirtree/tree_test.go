package dirtree_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/amplidex/amplidex/watcher/internal/dirtree"
)

// abs spells a slash-separated path below the top of the file system the
// platform's way.
func abs(p string) string {
	return filepath.Join(string(filepath.Separator), filepath.FromSlash(p))
}

// sharesStorage reports whether s lies inside the storage of p.
func sharesStorage(s, p string) bool {
	if s == "" || p == "" {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(p)))
	at := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return at >= start && at+uintptr(len(s)) <= start+uintptr(len(p))
}

func TestInsertLookupPath(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths []string
	}{
		{"top", []string{abs("")}},
		{"one", []string{abs("a")}},
		{"deep", []string{abs("a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/aa/bb/cc/dd/ee/ff/gg/hh/ii")}},
		{"siblings", []string{abs("a/b"), abs("a/c"), abs("a/b/c"), abs("b")}},
		{"same names", []string{abs("x/x"), abs("x/x/x"), abs("y/x")}},
		{"relative", []string{"rel/a", "rel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := dirtree.New[int]()
			nodes := make(map[string]dirtree.Node)
			for i, p := range tc.paths {
				n := tr.Insert(p)
				*tr.Value(n) = i + 1
				nodes[p] = n
			}
			if tr.Len() != len(tc.paths) {
				t.Errorf("Len = %d, want %d", tr.Len(), len(tc.paths))
			}
			for i, p := range tc.paths {
				n := tr.Lookup(p)
				if n != nodes[p] || !tr.Held(n) {
					t.Fatalf("Lookup(%q) = %d (held %v), want %d", p, n, tr.Held(n), nodes[p])
				}
				if got := tr.Path(n); got != p {
					t.Errorf("Path(Lookup(%q)) = %q", p, got)
				}
				if got := *tr.Value(n); got != i+1 {
					t.Errorf("Value(%q) = %d, want %d", p, got, i+1)
				}
				if got := tr.Name(n); got != filepath.Base(p) && p != abs("") {
					t.Errorf("Name(%q) = %q", p, got)
				}
			}
			for _, p := range []string{abs("nope"), abs("a/nope"), abs("a/b/c/nope"), ""} {
				if n := tr.Lookup(p); n != dirtree.None && !slices.Contains(tc.paths, p) && tr.Held(n) {
					t.Errorf("Lookup(%q) = %d, held, never inserted", p, n)
				}
			}
		})
	}
}

func TestBareAncestors(t *testing.T) {
	tr := dirtree.New[int]()
	deep := tr.Insert(abs("a/b/c"))
	if tr.Len() != 1 || tr.Entries() != 4 {
		t.Fatalf("Len %d, Entries %d; want 1 and 4 (/, a, b bare)", tr.Len(), tr.Entries())
	}
	b := tr.Lookup(abs("a/b"))
	if b == dirtree.None || tr.Held(b) {
		t.Fatalf("a/b: %d, held %v; want a bare entry", b, tr.Held(b))
	}
	if got := tr.Parent(deep); got != b {
		t.Errorf("Parent(a/b/c) = %d, want %d", got, b)
	}
	// Holding a bare entry keeps it when its child goes.
	if n := tr.Insert(abs("a/b")); n != b {
		t.Fatalf("Insert(a/b) = %d, want the bare entry %d", n, b)
	}
	tr.Release(deep)
	if tr.Lookup(abs("a/b/c")) != dirtree.None {
		t.Error("a/b/c still there after Release")
	}
	if !tr.Held(tr.Lookup(abs("a/b"))) || tr.Entries() != 3 {
		t.Errorf("a/b held %v, Entries %d; want held and 3", tr.Held(tr.Lookup(abs("a/b"))), tr.Entries())
	}
	// Releasing an entry with children keeps it bare.
	tr.Insert(abs("a/b/d"))
	tr.Release(b)
	if n := tr.Lookup(abs("a/b")); n != b || tr.Held(n) {
		t.Errorf("a/b after Release with a child: %d held %v, want %d bare", n, tr.Held(n), b)
	}
	tr.Release(b) // not held: nothing
	tr.Release(tr.Lookup(abs("a/b/d")))
	if tr.Entries() != 0 || tr.Len() != 0 {
		t.Errorf("Entries %d, Len %d after the last Release; want 0", tr.Entries(), tr.Len())
	}
	if tr.Lookup(abs("")) != dirtree.None {
		t.Error("the top entry outlived every entry below it")
	}
}

func TestNamesShareThePathInserted(t *testing.T) {
	tr := dirtree.New[int]()
	p := strings.Clone(abs("one/two/three"))
	n := tr.Insert(p)
	if !sharesStorage(tr.Name(n), p) {
		t.Errorf("the held entry's name %q is a copy, not part of the path inserted", tr.Name(n))
	}
	for _, a := range []string{abs("one/two"), abs("one")} {
		if name := tr.Name(tr.Lookup(a)); sharesStorage(name, p) {
			t.Errorf("the bare entry %s keeps the path inserted below it alive", a)
		}
	}
	// A bare entry that becomes held takes its name from the new path.
	q := strings.Clone(abs("one/two"))
	m := tr.Insert(q)
	if !sharesStorage(tr.Name(m), q) {
		t.Errorf("the entry held again has a name %q not from the path inserted", tr.Name(m))
	}
	// Released while it has children, it lets go of that path.
	tr.Release(m)
	if sharesStorage(tr.Name(m), q) {
		t.Error("an entry released with children keeps the path it was inserted with")
	}
	if tr.Name(m) != "two" {
		t.Errorf("name %q, want two", tr.Name(m))
	}
}

func TestRefs(t *testing.T) {
	tr := dirtree.New[int]()
	n := tr.Insert(abs("a"))
	r := tr.Ref(n)
	if tr.Deref(r) != n {
		t.Fatalf("Deref of a live entry = %d, want %d", tr.Deref(r), n)
	}
	tr.Release(n)
	if got := tr.Deref(r); got != dirtree.None {
		t.Errorf("Deref after Release = %d, want None", got)
	}
	// The entries are reused: the Ref must not lead to the new one.
	for i := range 4 {
		tr.Insert(abs(fmt.Sprint("b", i)))
	}
	if got := tr.Deref(r); got != dirtree.None {
		t.Errorf("Deref after reuse = %d (%s), want None", got, tr.Path(got))
	}
}

func TestAll(t *testing.T) {
	tr := dirtree.New[int]()
	want := []string{abs("a/b"), abs("a/c/d"), abs("e")}
	for _, p := range want {
		tr.Insert(p)
	}
	var got []string
	for n := range tr.All() {
		got = append(got, tr.Path(n))
		tr.Release(n)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("All yielded %q, want %q", got, want)
	}
	if tr.Entries() != 0 {
		t.Errorf("%d entries left after releasing all", tr.Entries())
	}
}

// TestRandomOperations inserts and releases paths at random and checks the
// Tree against a set of the paths held.
func TestRandomOperations(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 22))
			var universe []string
			for range 300 {
				depth := 1 + rng.IntN(5)
				parts := make([]string, depth)
				for i := range parts {
					parts[i] = fmt.Sprint(string(rune('a'+rng.IntN(4))), rng.IntN(3))
				}
				universe = append(universe, abs(strings.Join(parts, "/")))
			}
			tr := dirtree.New[string]()
			held := make(map[string]dirtree.Node)
			for step := range 4000 {
				p := universe[rng.IntN(len(universe))]
				if n, ok := held[p]; ok && rng.IntN(2) == 0 {
					tr.Release(n)
					delete(held, p)
				} else if !ok {
					n := tr.Insert(strings.Clone(p))
					*tr.Value(n) = p
					held[p] = n
				}
				if step%97 == 0 || step == 3999 {
					check(t, tr, held)
				}
			}
			for _, n := range held {
				tr.Release(n)
			}
			if tr.Entries() != 0 {
				t.Errorf("%d entries left after releasing all", tr.Entries())
			}
		})
	}
}

// check compares tr with the held paths: every held path is found, held,
// with its value; every directory above one is found; nothing else is.
func check(t *testing.T, tr *dirtree.Tree[string], held map[string]dirtree.Node) {
	t.Helper()
	above := make(map[string]bool)
	for p, n := range held {
		if got := tr.Lookup(p); got != n || !tr.Held(n) || *tr.Value(n) != p || tr.Path(n) != p {
			t.Fatalf("%s: Lookup %d, want %d held with its value", p, got, n)
		}
		for q := filepath.Dir(p); ; q = filepath.Dir(q) {
			if _, ok := held[q]; !ok {
				above[q] = true
			}
			if filepath.Dir(q) == q {
				break
			}
		}
	}
	if tr.Len() != len(held) || tr.Entries() != len(held)+len(above) {
		t.Fatalf("Len %d, Entries %d; want %d and %d", tr.Len(), tr.Entries(), len(held), len(held)+len(above))
	}
	for q := range above {
		n := tr.Lookup(q)
		if n == dirtree.None || tr.Held(n) {
			t.Fatalf("%s: %d held %v, want a bare entry", q, n, tr.Held(n))
		}
	}
	// Children are exactly the entries whose parent is the Node.
	var all []dirtree.Node
	for n := range tr.All() {
		all = append(all, n)
	}
	for _, q := range slices.Sorted(maps.Keys(above)) {
		all = append(all, tr.Lookup(q))
	}
	for _, n := range all {
		for _, c := range tr.AppendChildren(nil, n) {
			if tr.Parent(c) != n {
				t.Fatalf("child %s of %s has parent %d", tr.Path(c), tr.Path(n), tr.Parent(c))
			}
			if tr.Child(n, tr.Name(c)) != c {
				t.Fatalf("Child(%s, %s) does not find %d", tr.Path(n), tr.Name(c), c)
			}
		}
	}
}
