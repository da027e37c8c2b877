package watcher

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/fstest"
)

// fakeTree is a random tree of directories, listed from memory.
type fakeTree struct {
	kids    map[string][]string // directory → subdirectories, in order
	broken  map[string]bool     // directories whose listing fails
	entries map[string][]fs.DirEntry
}

func randomTree(rng *rand.Rand, n int) *fakeTree {
	t := &fakeTree{kids: map[string][]string{}, broken: map[string]bool{}, entries: map[string][]fs.DirEntry{}}
	dirs := []string{"/t"}
	for len(dirs) < n {
		// Wide and shallow, as roots of collections are, or deep.
		parent := dirs[rng.IntN(len(dirs))]
		if rng.IntN(3) == 0 {
			parent = dirs[len(dirs)-1]
		}
		d := fmt.Sprintf("%s/d%d", parent, len(dirs))
		t.kids[parent] = append(t.kids[parent], d)
		dirs = append(dirs, d)
		if rng.IntN(20) == 0 {
			t.broken[d] = true
		}
	}
	mfs := fstest.MapFS{}
	for _, d := range dirs {
		mfs[d[1:]+"/f"] = &fstest.MapFile{}
		for _, k := range t.kids[d] {
			mfs[k[1:]] = &fstest.MapFile{Mode: fs.ModeDir}
		}
	}
	for _, d := range dirs {
		e, err := fs.ReadDir(mfs, d[1:])
		if err != nil {
			panic(err)
		}
		t.entries[d] = e
	}
	return t
}

// sequential is the order a walk listing every directory itself
// delivers: depth first, in the order expand returns, without the
// directories that fail.
func (t *fakeTree) sequential(top string) []string {
	var order []string
	var visit func(string)
	visit = func(d string) {
		if t.broken[d] {
			return
		}
		order = append(order, d)
		for _, e := range t.entries[d] {
			if e.IsDir() {
				visit(d + "/" + e.Name())
			}
		}
	}
	visit(top)
	return order
}

// TestAheadWalkKeepsTheWalksOrder: whatever the helpers and the
// scheduling, the walk delivers each directory once, in the order of a
// walk that lists every directory itself, lists each directory once and
// only after its watch, and leaves no helper behind.
func TestAheadWalkKeepsTheWalksOrder(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for round := range 200 {
		tree := randomTree(rng, 1+rng.IntN(600))
		helpers := rng.IntN(4)
		var mu sync.Mutex
		watched := map[string]bool{"/t": true}
		listed := map[string]int{}
		listing := 0
		var errs []string
		fail := func(s string) {
			mu.Lock()
			errs = append(errs, s)
			mu.Unlock()
		}
		yield := rng.IntN(2) == 0
		w := &aheadWalk{helpers: helpers}
		w.list = func(dir string) ([]fs.DirEntry, error) {
			mu.Lock()
			if !watched[dir] {
				errs = append(errs, dir+" listed before its watch")
			}
			listed[dir]++
			listing++
			mu.Unlock()
			if yield {
				runtime.Gosched()
			}
			mu.Lock()
			listing--
			mu.Unlock()
			if tree.broken[dir] {
				return nil, fs.ErrPermission
			}
			return slices.Clone(tree.entries[dir]), nil
		}
		expanded := map[string]bool{}
		var delivered []string
		w.expand = func(dir string, entries []fs.DirEntry) ([]string, bool, error) {
			if expanded[dir] {
				fail(dir + " expanded twice")
			}
			expanded[dir] = true
			var dirs []string
			for _, e := range entries {
				if e.IsDir() {
					dirs = append(dirs, dir+"/"+e.Name())
				}
			}
			mu.Lock()
			for _, d := range dirs {
				watched[d] = true
			}
			mu.Unlock()
			return dirs, false, nil
		}
		w.deliver = func(dir string, entries []fs.DirEntry) {
			if !expanded[dir] {
				fail(dir + " delivered before it was expanded")
			}
			if len(entries) != len(tree.entries[dir]) {
				fail(fmt.Sprintf("%s delivered with %d entries, want %d", dir, len(entries), len(tree.entries[dir])))
			}
			delivered = append(delivered, dir)
		}
		complete, err := w.run("/t")
		if !complete || err != nil {
			t.Fatalf("round %d: run = %v, %v", round, complete, err)
		}
		mu.Lock()
		if listing != 0 {
			errs = append(errs, "a helper still lists after run returned")
		}
		for d, n := range listed {
			if n != 1 {
				errs = append(errs, fmt.Sprintf("%s listed %d times", d, n))
			}
		}
		mu.Unlock()
		if want := tree.sequential("/t"); !slices.Equal(delivered, want) {
			t.Fatalf("round %d (%d helpers): delivered\n%v\nwant\n%v", round, helpers, delivered, want)
		}
		if len(errs) > 0 {
			t.Fatalf("round %d (%d helpers): %v", round, helpers, errs[:min(len(errs), 5)])
		}
	}
}

// TestAheadWalkStops: when expand stops the walk, run returns its error
// at once, with nothing delivered after, and no helper left listing.
func TestAheadWalkStops(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	errLimit := errors.New("limit")
	for round := range 100 {
		tree := randomTree(rng, 50+rng.IntN(400))
		var mu sync.Mutex
		listing := 0
		w := &aheadWalk{helpers: 1 + rng.IntN(2)}
		w.list = func(dir string) ([]fs.DirEntry, error) {
			mu.Lock()
			listing++
			mu.Unlock()
			runtime.Gosched()
			mu.Lock()
			listing--
			mu.Unlock()
			return slices.Clone(tree.entries[dir]), nil
		}
		stopAt, expands, stopped := rng.IntN(60), 0, false
		w.expand = func(dir string, entries []fs.DirEntry) ([]string, bool, error) {
			if expands++; expands > stopAt {
				stopped = true
				return nil, true, errLimit
			}
			var dirs []string
			for _, e := range entries {
				if e.IsDir() {
					dirs = append(dirs, dir+"/"+e.Name())
				}
			}
			return dirs, false, nil
		}
		w.deliver = func(dir string, _ []fs.DirEntry) {
			if stopped {
				t.Fatalf("round %d: %s delivered after the walk stopped", round, dir)
			}
		}
		complete, err := w.run("/t")
		if stopped && (complete || !errors.Is(err, errLimit)) {
			t.Fatalf("round %d: run = %v, %v after a stop, want false, %v", round, complete, err, errLimit)
		}
		mu.Lock()
		if listing != 0 {
			t.Fatalf("round %d: a helper still lists after run returned", round)
		}
		mu.Unlock()
	}
}

// TestJobHeapOrder: the heap pops jobs in key order.
func TestJobHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 3))
	var h jobHeap
	var keys []string
	for range 2000 {
		if h.len() > 0 && rng.IntN(3) == 0 {
			got := h.pop().key
			slices.Sort(keys)
			if got != keys[0] {
				t.Fatalf("popped %q, want %q", got, keys[0])
			}
			keys = keys[1:]
			continue
		}
		k := fmt.Sprintf("%04d", rng.IntN(500))
		keys = append(keys, k)
		h.push(&dirJob{key: k})
	}
}
