package pmap

import (
	"cmp"
	"iter"
	"slices"
)

// nodeMax is the most entries (or children) a node holds; a node of fewer
// than nodeMin is merged with a neighbour when it shrinks.
const (
	nodeMax = 32
	nodeMin = nodeMax / 4
)

// Map is a persistent map ordered by key. The zero Map is empty and ready
// to use.
type Map[K cmp.Ordered, V any] struct {
	root *node[K, V]
	n    int
}

// node is a leaf (kids == nil: keys and vals are the entries) or an inner
// node (keys[i] is the smallest key under kids[i]). Nodes are never
// modified once they are reachable from a Map.
type node[K cmp.Ordered, V any] struct {
	keys []K
	vals []V
	kids []*node[K, V]
}

func (n *node[K, V]) leaf() bool { return n.kids == nil }

// child returns the index of the child that holds k, or would hold it.
func (n *node[K, V]) child(k K) int {
	i, found := slices.BinarySearch(n.keys, k)
	if found || i == 0 {
		return i
	}
	return i - 1
}

// Len returns the number of entries.
func (m Map[K, V]) Len() int { return m.n }

// Get returns the value of k and whether k is present.
func (m Map[K, V]) Get(k K) (V, bool) {
	n := m.root
	for n != nil && !n.leaf() {
		n = n.kids[n.child(k)]
	}
	if n != nil {
		if i, ok := slices.BinarySearch(n.keys, k); ok {
			return n.vals[i], true
		}
	}
	var zero V
	return zero, false
}

// Value returns the value of k, or the zero value when k is absent.
func (m Map[K, V]) Value(k K) V {
	v, _ := m.Get(k)
	return v
}

// Has reports whether k is present.
func (m Map[K, V]) Has(k K) bool {
	_, ok := m.Get(k)
	return ok
}

// Set returns a Map in which k has the value v.
func (m Map[K, V]) Set(k K, v V) Map[K, V] {
	if m.root == nil {
		return Map[K, V]{root: &node[K, V]{keys: []K{k}, vals: []V{v}}, n: 1}
	}
	a, b, added := m.root.set(k, v)
	n := m.n
	if added {
		n++
	}
	if b != nil {
		a = &node[K, V]{keys: []K{a.keys[0], b.keys[0]}, kids: []*node[K, V]{a, b}}
	}
	return Map[K, V]{root: a, n: n}
}

// set returns the node that replaces n once k is set, and a second one when
// n had to split.
func (n *node[K, V]) set(k K, v V) (a, b *node[K, V], added bool) {
	c := &node[K, V]{}
	if n.leaf() {
		i, found := slices.BinarySearch(n.keys, k)
		if found {
			c.keys = n.keys // keys are never modified in place: share them
			c.vals = slices.Clone(n.vals)
			c.vals[i] = v
			return c, nil, false
		}
		c.keys = slices.Insert(slices.Clone(n.keys), i, k)
		c.vals = slices.Insert(slices.Clone(n.vals), i, v)
		added = true
	} else {
		i := n.child(k)
		ka, kb, add := n.kids[i].set(k, v)
		added = add
		c.keys, c.kids = slices.Clone(n.keys), slices.Clone(n.kids)
		c.keys[i], c.kids[i] = ka.keys[0], ka
		if kb != nil {
			c.keys = slices.Insert(c.keys, i+1, kb.keys[0])
			c.kids = slices.Insert(c.kids, i+1, kb)
		}
	}
	a, b = c.split()
	return a, b, added
}

// split halves a node that holds more than nodeMax entries; it returns n
// and nil otherwise.
func (n *node[K, V]) split() (*node[K, V], *node[K, V]) {
	if len(n.keys) <= nodeMax {
		return n, nil
	}
	h := len(n.keys) / 2
	a := &node[K, V]{keys: n.keys[:h:h]}
	b := &node[K, V]{keys: n.keys[h:]}
	if n.leaf() {
		a.vals, b.vals = n.vals[:h:h], n.vals[h:]
	} else {
		a.kids, b.kids = n.kids[:h:h], n.kids[h:]
	}
	return a, b
}

// Delete returns a Map without k.
func (m Map[K, V]) Delete(k K) Map[K, V] {
	if m.root == nil {
		return m
	}
	r, removed := m.root.del(k)
	if !removed {
		return m
	}
	for r != nil && !r.leaf() && len(r.kids) == 1 {
		r = r.kids[0]
	}
	return Map[K, V]{root: r, n: m.n - 1}
}

// del returns the node that replaces n once k is gone (nil when nothing
// is left) and whether k was there.
func (n *node[K, V]) del(k K) (*node[K, V], bool) {
	if n.leaf() {
		i, found := slices.BinarySearch(n.keys, k)
		if !found {
			return n, false
		}
		if len(n.keys) == 1 {
			return nil, true
		}
		return &node[K, V]{keys: slices.Delete(slices.Clone(n.keys), i, i+1),
			vals: slices.Delete(slices.Clone(n.vals), i, i+1)}, true
	}
	i := n.child(k)
	kid, removed := n.kids[i].del(k)
	if !removed {
		return n, false
	}
	c := &node[K, V]{keys: slices.Clone(n.keys), kids: slices.Clone(n.kids)}
	switch {
	case kid == nil:
		c.keys = slices.Delete(c.keys, i, i+1)
		c.kids = slices.Delete(c.kids, i, i+1)
		if len(c.kids) == 0 {
			return nil, true
		}
	case len(kid.keys) < nodeMin && len(c.kids) > 1:
		// Merge with a neighbour, splitting again when the two are too
		// many together.
		lo := i
		if lo == len(c.kids)-1 {
			lo--
		}
		c.kids[i] = kid
		merged := merge(c.kids[lo], c.kids[lo+1])
		a, b := merged.split()
		add := []*node[K, V]{a}
		keys := []K{a.keys[0]}
		if b != nil {
			add, keys = append(add, b), append(keys, b.keys[0])
		}
		c.kids = slices.Replace(c.kids, lo, lo+2, add...)
		c.keys = slices.Replace(c.keys, lo, lo+2, keys...)
	default:
		c.keys[i], c.kids[i] = kid.keys[0], kid
	}
	return c, true
}

// merge returns a node holding the entries (or children) of a and then b,
// which are of the same kind.
func merge[K cmp.Ordered, V any](a, b *node[K, V]) *node[K, V] {
	c := &node[K, V]{keys: append(slices.Clone(a.keys), b.keys...)}
	if a.leaf() {
		c.vals = append(slices.Clone(a.vals), b.vals...)
	} else {
		c.kids = append(slices.Clone(a.kids), b.kids...)
	}
	return c
}

// All yields every entry in key order.
func (m Map[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if m.root != nil {
			m.root.walk(nil, yield)
		}
	}
}

// From yields the entries whose key is at least k, in key order.
func (m Map[K, V]) From(k K) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if m.root != nil {
			m.root.walk(&k, yield)
		}
	}
}

// walk yields the entries under n, from the first at least *from when from
// is set; it returns false when yield asked to stop.
func (n *node[K, V]) walk(from *K, yield func(K, V) bool) bool {
	if n.leaf() {
		i := 0
		if from != nil {
			i, _ = slices.BinarySearch(n.keys, *from)
		}
		for ; i < len(n.keys); i++ {
			if !yield(n.keys[i], n.vals[i]) {
				return false
			}
		}
		return true
	}
	i := 0
	if from != nil {
		i = n.child(*from)
	}
	for ; i < len(n.kids); i++ {
		if !n.kids[i].walk(from, yield) {
			return false
		}
		from = nil
	}
	return true
}

// Values returns every value in key order.
func (m Map[K, V]) Values() []V {
	out := make([]V, 0, m.n)
	for _, v := range m.All() {
		out = append(out, v)
	}
	return out
}

// Build returns a Map of the entries yielded, which must come in strictly
// increasing key order; it panics otherwise, as that is a mistake in the
// program. It costs O(n), where n Sets cost O(n log n).
func Build[K cmp.Ordered, V any](entries iter.Seq2[K, V]) Map[K, V] {
	const fill = nodeMax * 3 / 4
	var level []*node[K, V]
	n := 0
	for k, v := range entries {
		last := len(level) - 1
		if last >= 0 && level[last].keys[len(level[last].keys)-1] >= k {
			panic("pmap: Build needs keys in increasing order")
		}
		if last < 0 || len(level[last].keys) == fill {
			level = append(level, &node[K, V]{keys: make([]K, 0, fill), vals: make([]V, 0, fill)})
			last++
		}
		level[last].keys = append(level[last].keys, k)
		level[last].vals = append(level[last].vals, v)
		n++
	}
	if n == 0 {
		return Map[K, V]{}
	}
	// The last leaf is seldom full: it is sized to fit, or the many small
	// Maps a program builds (a set of one name) would each keep room for
	// fill entries.
	if l := level[len(level)-1]; len(l.keys) < fill {
		l.keys, l.vals = slices.Clone(l.keys), slices.Clone(l.vals)
	}
	for len(level) > 1 {
		var up []*node[K, V]
		for i := 0; i < len(level); i += fill {
			kids := level[i:min(i+fill, len(level))]
			p := &node[K, V]{kids: slices.Clip(kids), keys: make([]K, len(kids))}
			for j, c := range kids {
				p.keys[j] = c.keys[0]
			}
			up = append(up, p)
		}
		level = up
	}
	return Map[K, V]{root: level[0], n: n}
}

// Min returns the smallest key and its value, and false when the Map is
// empty.
func (m Map[K, V]) Min() (K, V, bool) {
	for k, v := range m.All() {
		return k, v, true
	}
	var k K
	var v V
	return k, v, false
}

// Keys returns every key in order.
func (m Map[K, V]) Keys() []K {
	out := make([]K, 0, m.n)
	for k := range m.All() {
		out = append(out, k)
	}
	return out
}
