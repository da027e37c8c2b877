package dirtree

// An Index is a set of Nodes found by a key the caller computes from each
// Node's entry: a hash table with open addressing and linear probing,
// whose slots hold int32 indices and nothing else. Its zero value is an
// empty Index ready to use.
//
// Every method that may move Nodes about (Insert, Delete) takes the hash
// function of the Index, which must give the hash each Node was inserted
// with.
type Index struct {
	slots []int32 // Node+1 in each used slot; 0 is an empty slot
	n     int
}

// minSlots is the size of the smallest table.
const minSlots = 16

// Len returns the number of Nodes in x.
func (x *Index) Len() int { return x.n }

// Find returns the Node in x for which eq returns true, among those whose
// hash is h, or None.
func (x *Index) Find(h uint64, eq func(Node) bool) Node {
	if x.n == 0 {
		return None
	}
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return None
		}
		if eq(Node(s - 1)) {
			return Node(s - 1)
		}
	}
}

// Insert adds n, whose hash is h. n must not be in x already.
func (x *Index) Insert(n Node, h uint64, hash func(Node) uint64) {
	if (x.n+1)*4 > len(x.slots)*3 {
		x.resize(max(minSlots, 2*len(x.slots)), hash)
	}
	x.place(int32(n)+1, h)
	x.n++
}

// place puts slot value s in the first empty slot from h on.
func (x *Index) place(s int32, h uint64) {
	mask := uint64(len(x.slots) - 1)
	i := h & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = s
}

// Delete removes n, whose hash is h, and reports whether it was in x.
func (x *Index) Delete(n Node, h uint64, hash func(Node) uint64) bool {
	if x.n == 0 {
		return false
	}
	mask := uint64(len(x.slots) - 1)
	want := int32(n) + 1
	i := h & mask
	for x.slots[i] != want {
		if x.slots[i] == 0 {
			return false
		}
		i = (i + 1) & mask
	}
	// Shift back the Nodes after the hole that may sit in it, so that
	// every Node stays reachable from its hash without tombstones.
	for j := i; ; {
		j = (j + 1) & mask
		s := x.slots[j]
		if s == 0 {
			break
		}
		k := hash(Node(s-1)) & mask
		// s stays where it is when its home k lies in (i, j], cyclically.
		var stays bool
		if i <= j {
			stays = i < k && k <= j
		} else {
			stays = i < k || k <= j
		}
		if !stays {
			x.slots[i] = s
			i = j
		}
	}
	x.slots[i] = 0
	x.n--
	if len(x.slots) > minSlots && x.n*8 < len(x.slots) {
		x.resize(len(x.slots)/2, hash)
	}
	return true
}

// resize moves every Node into a table of size slots, a power of two.
func (x *Index) resize(size int, hash func(Node) uint64) {
	old := x.slots
	x.slots = make([]int32, size)
	for _, s := range old {
		if s != 0 {
			x.place(s, hash(Node(s-1)))
		}
	}
}
