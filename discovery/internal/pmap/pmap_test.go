package pmap_test

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/amplidex/amplidex/discovery/internal/pmap"
)

// check compares m with the reference map ref.
func check(t *testing.T, m pmap.Map[int, int], ref map[int]int) {
	t.Helper()
	if m.Len() != len(ref) {
		t.Fatalf("Len = %d, want %d", m.Len(), len(ref))
	}
	keys := slices.Sorted(maps.Keys(ref))
	var got []int
	for k, v := range m.All() {
		if ref[k] != v {
			t.Fatalf("All: %d = %d, want %d", k, v, ref[k])
		}
		got = append(got, k)
	}
	if !slices.Equal(got, keys) {
		t.Fatalf("All keys = %v, want %v", got, keys)
	}
	for _, k := range keys {
		if v, ok := m.Get(k); !ok || v != ref[k] {
			t.Fatalf("Get(%d) = %d, %v; want %d", k, v, ok, ref[k])
		}
	}
}

func TestRandomAgainstMap(t *testing.T) {
	for _, keys := range []int{50, 3000, 40000} {
		t.Run(itoa(keys), func(t *testing.T) { randomAgainstMap(t, keys, 20*keys) })
	}
}

func randomAgainstMap(t *testing.T, keys, steps int) {
	r := rand.New(rand.NewPCG(1, uint64(keys)))
	var m pmap.Map[int, int]
	ref := map[int]int{}
	var history []pmap.Map[int, int]
	var refs []map[int]int
	for step := range steps {
		k := r.IntN(keys)
		if r.IntN(3) == 0 {
			m = m.Delete(k)
			delete(ref, k)
		} else {
			m = m.Set(k, step)
			ref[k] = step
		}
		if step%(steps/20) == 0 {
			check(t, m, ref)
			history = append(history, m)
			refs = append(refs, maps.Clone(ref))
		}
	}
	check(t, m, ref)
	// Older versions are untouched by later changes.
	for i, h := range history {
		check(t, h, refs[i])
	}
	// Shrink to nothing.
	for k := range ref {
		m = m.Delete(k)
	}
	check(t, m, map[int]int{})
}

func TestFrom(t *testing.T) {
	var m pmap.Map[int, string]
	for i := 0; i < 1000; i += 2 {
		m = m.Set(i, "x")
	}
	var got []int
	for k := range m.From(501) {
		got = append(got, k)
		if len(got) == 3 {
			break
		}
	}
	if !slices.Equal(got, []int{502, 504, 506}) {
		t.Fatalf("From(501) = %v", got)
	}
	for range m.From(2000) {
		t.Fatal("From past the end yields something")
	}
}

func TestBuild(t *testing.T) {
	ref := map[int]int{}
	m := pmap.Build(func(yield func(int, int) bool) {
		for i := range 500 {
			ref[i*3] = i
			if !yield(i*3, i) {
				return
			}
		}
	})
	check(t, m, ref)
	m2 := m.Set(7, 7).Delete(0)
	ref2 := maps.Clone(ref)
	ref2[7] = 7
	delete(ref2, 0)
	check(t, m2, ref2)
	check(t, m, ref)
}

// BenchmarkSet measures one change of a map of n entries: it must stay
// about flat as n grows.
func BenchmarkSet(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 100000} {
		b.Run(itoa(n), func(b *testing.B) {
			var m pmap.Map[int, int]
			for i := range n {
				m = m.Set(i, i)
			}
			b.ResetTimer()
			for i := range b.N {
				_ = m.Set(i%n, i)
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}
