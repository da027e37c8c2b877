package dirtree_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/amplidex/amplidex/watcher/internal/dirtree"
)

// TestIndexCollisions fills an Index whose keys collide on purpose, near
// the end of the table so that runs wrap around, deletes at random and
// checks that every Node left is found and no Node deleted is.
func TestIndexCollisions(t *testing.T) {
	for _, buckets := range []uint64{1, 3, 7, 1 << 20} {
		t.Run(fmt.Sprint("buckets", buckets), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(buckets, 7))
			// The hash of Node n: a few values, all near the top of a
			// 16-slot table, and spread only when buckets is large.
			hash := func(n dirtree.Node) uint64 { return 13 + uint64(n)%buckets }
			var x dirtree.Index
			in := make(map[dirtree.Node]bool)
			for step := range 3000 {
				n := dirtree.Node(rng.IntN(200))
				if in[n] {
					if !x.Delete(n, hash(n), hash) {
						t.Fatalf("step %d: Delete(%d) found nothing", step, n)
					}
					delete(in, n)
				} else {
					if x.Delete(n, hash(n), hash) {
						t.Fatalf("step %d: Delete(%d) found a Node never inserted", step, n)
					}
					x.Insert(n, hash(n), hash)
					in[n] = true
				}
				if x.Len() != len(in) {
					t.Fatalf("step %d: Len %d, want %d", step, x.Len(), len(in))
				}
				for m := range dirtree.Node(200) {
					got := x.Find(hash(m), func(k dirtree.Node) bool { return k == m })
					if (got == m) != in[m] || (got != m && got != dirtree.None) {
						t.Fatalf("step %d: Find(%d) = %d, in the index: %v", step, m, got, in[m])
					}
				}
			}
		})
	}
}
