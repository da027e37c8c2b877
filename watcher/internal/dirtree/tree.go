package dirtree

import (
	"hash/maphash"
	"iter"
	"os"
	"path/filepath"
	"strings"
)

// A Node is a directory in a Tree: the index of its entry.
type Node int32

// None is no Node: what lookups return when nothing is found, and the
// parent of a top entry.
const None Node = -1

// freed marks the parent of a free entry.
const freed Node = -2

// A Ref is a Node that knows when it has gone: it stays valid across
// changes to the Tree, and Deref tells whether its entry is still the one
// it was taken from.
type Ref struct {
	n   Node
	gen uint32
}

type entry[V any] struct {
	name   string
	parent Node // None at the top; freed for a free entry
	child  Node // first child
	next   Node // next sibling; the next free entry, for a free entry
	prev   Node // previous sibling
	gen    uint32
	held   bool
	val    V
}

// A Tree interns paths as entries that each hold one name and a value of
// type V. Make one with New.
type Tree[V any] struct {
	entries []entry[V]
	free    Node // first free entry, chained through next
	held    int  // held entries
	bare    int  // entries not held (kept for their children)
	kids    Index
	seed    maphash.Seed
	hash    func(Node) uint64 // hash of an entry's parent and name, for kids
}

// New returns an empty Tree.
func New[V any]() *Tree[V] {
	t := &Tree[V]{free: None, seed: maphash.MakeSeed()}
	t.hash = func(n Node) uint64 {
		e := &t.entries[n]
		return t.hashOf(e.parent, e.name)
	}
	return t
}

func (t *Tree[V]) hashOf(parent Node, name string) uint64 {
	return maphash.String(t.seed, name) ^ uint64(uint32(parent)+1)*0x9e3779b97f4a7c15
}

// Len returns the number of held entries.
func (t *Tree[V]) Len() int { return t.held }

// Entries returns the number of entries, held or not.
func (t *Tree[V]) Entries() int { return t.held + t.bare }

// valid reports whether n names a live entry.
func (t *Tree[V]) valid(n Node) bool {
	return n >= 0 && int(n) < len(t.entries) && t.entries[n].parent != freed
}

// Held reports whether n is a live entry that its caller holds.
func (t *Tree[V]) Held(n Node) bool { return t.valid(n) && t.entries[n].held }

// Child returns the entry named name directly below parent (a top entry
// when parent is None), or None.
func (t *Tree[V]) Child(parent Node, name string) Node {
	return t.kids.Find(t.hashOf(parent, name), func(n Node) bool {
		e := &t.entries[n]
		return e.parent == parent && e.name == name
	})
}

// Lookup returns the entry of path, held or not, or None.
func (t *Tree[V]) Lookup(path string) Node {
	path = filepath.Clean(path)
	first, rest := head(path)
	n := t.Child(None, first)
	for rest != "" && n != None {
		var name string
		name, rest = next(rest)
		n = t.Child(n, name)
	}
	return n
}

// Insert returns the entry of path, held, adding it and the entries of
// the directories above it that are missing (not held). When the entry
// was not held before, its name becomes a substring of path: see the
// package's caveats.
func (t *Tree[V]) Insert(path string) Node {
	path = filepath.Clean(path)
	// Every name split off below is a substring of path.
	name, rest := head(path)
	n := None
	for {
		last := rest == ""
		c := t.Child(n, name)
		switch {
		case c == None && last:
			c = t.add(n, name)
		case c == None:
			c = t.add(n, strings.Clone(name))
		case last && !t.entries[c].held:
			t.entries[c].name = name
		}
		n = c
		if last {
			break
		}
		name, rest = next(rest)
	}
	if e := &t.entries[n]; !e.held {
		e.held = true
		t.held++
		t.bare--
	}
	return n
}

// add makes a bare entry named name below parent.
func (t *Tree[V]) add(parent Node, name string) Node {
	var n Node
	if t.free != None {
		n = t.free
		t.free = t.entries[n].next
	} else {
		t.entries = append(t.entries, entry[V]{})
		n = Node(len(t.entries) - 1)
	}
	e := &t.entries[n]
	e.name, e.parent, e.child, e.next, e.prev = name, parent, None, None, None
	if parent != None {
		p := &t.entries[parent]
		if p.child != None {
			e.next = p.child
			t.entries[p.child].prev = n
		}
		p.child = n
	}
	t.bare++
	t.kids.Insert(n, t.hashOf(parent, name), t.hash)
	return n
}

// Release lets go of n: its entry is freed, with the entries above it
// that are not held and have no other children, unless it has children
// of its own; then it stays, not held, and its name is copied out of the
// path it was inserted with. Releasing an entry that is not held does
// nothing.
func (t *Tree[V]) Release(n Node) {
	if !t.Held(n) {
		return
	}
	e := &t.entries[n]
	e.held = false
	t.held--
	t.bare++
	if e.child != None {
		e.name = strings.Clone(e.name)
		return
	}
	for n != None {
		e := &t.entries[n]
		if e.held || e.child != None {
			return
		}
		p := e.parent
		t.remove(n)
		n = p
	}
}

// remove frees the entry of n, which has no children and is not held.
func (t *Tree[V]) remove(n Node) {
	e := &t.entries[n]
	t.kids.Delete(n, t.hashOf(e.parent, e.name), t.hash)
	if e.prev != None {
		t.entries[e.prev].next = e.next
	} else if e.parent != None {
		t.entries[e.parent].child = e.next
	}
	if e.next != None {
		t.entries[e.next].prev = e.prev
	}
	*e = entry[V]{parent: freed, child: None, next: t.free, prev: None, gen: e.gen + 1}
	t.free = n
	t.bare--
}

// Value returns the value of n, valid until the next Insert.
func (t *Tree[V]) Value(n Node) *V { return &t.entries[n].val }

// Name returns the last component of n's path.
func (t *Tree[V]) Name(n Node) string { return t.entries[n].name }

// Parent returns the entry of the directory above n, or None at the top.
func (t *Tree[V]) Parent(n Node) Node { return t.entries[n].parent }

// AppendChildren appends the entries directly below n to dst, in no
// particular order, and returns the result.
func (t *Tree[V]) AppendChildren(dst []Node, n Node) []Node {
	for c := t.entries[n].child; c != None; c = t.entries[c].next {
		dst = append(dst, c)
	}
	return dst
}

// Path returns the path of n, as it was inserted.
func (t *Tree[V]) Path(n Node) string {
	var buf [32]Node
	chain := buf[:0]
	size := 0
	for m := n; m != None; m = t.entries[m].parent {
		chain = append(chain, m)
		size += len(t.entries[m].name) + 1
	}
	var b strings.Builder
	b.Grow(size)
	for i := len(chain) - 1; i >= 0; i-- {
		name := t.entries[chain[i]].name
		if s := b.String(); s != "" && !os.IsPathSeparator(s[len(s)-1]) {
			b.WriteByte(filepath.Separator)
		}
		b.WriteString(name)
	}
	return b.String()
}

// Ref returns a Ref to n.
func (t *Tree[V]) Ref(n Node) Ref { return Ref{n: n, gen: t.entries[n].gen} }

// Deref returns the Node r was taken from, or None when its entry has
// been freed since (and may now be another directory's).
func (t *Tree[V]) Deref(r Ref) Node {
	if !t.valid(r.n) || t.entries[r.n].gen != r.gen {
		return None
	}
	return r.n
}

// All yields every held entry. The caller may Release entries meanwhile,
// but not Insert.
func (t *Tree[V]) All() iter.Seq[Node] {
	return func(yield func(Node) bool) {
		for i := range t.entries {
			if t.entries[i].held && !yield(Node(i)) {
				return
			}
		}
	}
}

// head splits a clean path into its first component (its volume root
// with the separator when it has one) and the rest.
func head(p string) (first, rest string) {
	v := len(filepath.VolumeName(p))
	if v < len(p) && os.IsPathSeparator(p[v]) {
		return p[:v+1], p[v+1:]
	}
	return next(p)
}

// next splits p at its first separator.
func next(p string) (name, rest string) {
	for i := 0; i < len(p); i++ {
		if os.IsPathSeparator(p[i]) {
			return p[:i], p[i+1:]
		}
	}
	return p, ""
}
