package pmap

import (
	"fmt"
	"testing"
)

// TestBuildSizesItsLastLeaf: a Map built of few entries keeps room for
// them, not for a full leaf's.
func TestBuildSizesItsLastLeaf(t *testing.T) {
	const fill = nodeMax * 3 / 4
	for _, n := range []int{1, 3, fill + 2} {
		m := Build(func(yield func(string, struct{}) bool) {
			for i := range n {
				if !yield(fmt.Sprintf("k%03d", i), struct{}{}) {
					return
				}
			}
		})
		last := m.root
		for !last.leaf() {
			last = last.kids[len(last.kids)-1]
		}
		if want := n % fill; len(last.keys) != want || cap(last.keys) >= fill {
			t.Errorf("%d entries: the last leaf holds %d keys in room for %d, want %d in less than %d", n, len(last.keys), cap(last.keys), want, fill)
		}
		if m.Len() != n {
			t.Errorf("%d entries: Len %d", n, m.Len())
		}
	}
}
