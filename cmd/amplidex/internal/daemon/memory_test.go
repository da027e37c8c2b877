package daemon

import (
	"runtime/debug"
	"testing"
	"time"
)

// fakeMemory returns a memory policy whose allocation counter, trims and
// collector targets the test drives and sees.
func fakeMemory(p Memory) (m *memory, allocated *uint64, trims *int, gc *int) {
	allocated, trims, gc = new(uint64), new(int), new(int)
	*gc = -1
	m = &memory{policy: p, allocated: func() uint64 { return *allocated }, free: func() { *trims++ },
		setGC: func(pct int) { *gc = pct }, stop: make(chan struct{})}
	return m, allocated, trims, gc
}

// TestTrimAfterABurst: the memory of a burst of allocation goes back once,
// when the burst is followed by a quiet period; never during the burst,
// never when the daemon stayed quiet, and again after the next burst.
func TestTrimAfterABurst(t *testing.T) {
	m, allocated, trims, _ := fakeMemory(Memory{})
	look := func(alloc uint64, want int, what string) {
		t.Helper()
		*allocated += alloc
		m.look(false)
		if *trims != want {
			t.Fatalf("%s: %d trims, want %d", what, *trims, want)
		}
	}
	look(0, 0, "quiet from the start")
	look(trimQuiet/2, 0, "a little work, quiet")
	for range 4 {
		look(8<<20, 0, "a burst under way")
	}
	look(0, 1, "the burst over")
	look(0, 1, "still quiet")
	look(trimQuiet/2, 1, "a little work after the trim")
	look(trimBusy, 1, "the next burst")
	look(trimQuiet-1, 2, "the next burst over")
	// A trickle that never makes a quiet period busy stays below the
	// burst until it has added up to one.
	for range trimBusy/(trimQuiet/2) - 1 {
		look(trimQuiet/2, 2, "a trickle")
	}
	look(trimQuiet/2, 3, "the trickle added up to a burst")
}

// TestTrimWhenWorkEnds: a piece of work the daemon knows of gives its
// memory back as it ends, whatever the last period allocated, unless
// almost nothing was allocated since the last trim.
func TestTrimWhenWorkEnds(t *testing.T) {
	m, allocated, trims, _ := fakeMemory(Memory{})
	*allocated += 4 << 20 // less than a burst, all of it in this period
	m.ended()
	if *trims != 1 {
		t.Fatalf("the end of a piece of work gave memory back %d times, want 1", *trims)
	}
	*allocated += trimQuiet - 1
	m.ended()
	if *trims != 1 {
		t.Fatalf("an end with next to nothing allocated since the last trim gave memory back: %d trims", *trims)
	}
	*allocated += 1
	m.ended()
	if *trims != 2 {
		t.Fatalf("%d trims after a second piece of work, want 2", *trims)
	}
	// What a trim allocates is no work of the daemon's.
	m.free = func() { *trims++; *allocated += trimBusy }
	*allocated += trimQuiet
	m.ended()
	m.look(false)
	m.look(false)
	if *trims != 3 {
		t.Fatalf("%d trims, want 3: the trim's own allocation made a burst", *trims)
	}
}

// TestMemoryLooksStop: a started policy looks at each tick, and close
// stops it.
func TestMemoryLooksStop(t *testing.T) {
	freed := make(chan struct{}, 1)
	m, allocated, _, _ := fakeMemory(Memory{})
	m.free = func() { freed <- struct{}{} }
	tick := make(chan time.Time)
	m.start(tick)
	*allocated += trimBusy
	tick <- time.Time{} // the burst
	tick <- time.Time{} // quiet: trims
	select {
	case <-freed:
	case <-time.After(10 * time.Second):
		t.Fatal("no trim after a burst and a quiet period")
	}
	m.close()
	select {
	case tick <- time.Time{}:
		t.Fatal("the policy still looks after close")
	case <-time.After(50 * time.Millisecond):
	}
}

// TestGCTargetRaisedWhileReading: a daemon with an idle target runs at
// the reading target while any registration reads, and at its idle
// target once the first scan is done and the last registration too; one
// without leaves the target alone.
func TestGCTargetRaisedWhileReading(t *testing.T) {
	none, _, _, gc := fakeMemory(Memory{})
	none.settle()
	none.read()()
	if *gc != -1 {
		t.Fatalf("a policy without an idle target set the target to %d", *gc)
	}

	m, _, _, gc := fakeMemory(Memory{IdleGC: 50})
	scan := m.read() // the first scan's registration
	if *gc != -1 {
		t.Fatalf("the first scan changed the target to %d", *gc)
	}
	scan()
	if *gc != -1 {
		t.Fatalf("the first scan's registration set the target to %d before the scan was done", *gc)
	}
	m.settle()
	if *gc != 50 {
		t.Fatalf("idle target %d, want 50", *gc)
	}
	first := m.read()
	second := m.read()
	if *gc != 100 {
		t.Fatalf("target %d while reading, want Go's default 100", *gc)
	}
	first()
	first() // twice: counted once
	if *gc != 100 {
		t.Fatalf("target %d while one registration still reads, want 100", *gc)
	}
	second()
	if *gc != 50 {
		t.Fatalf("target %d once every registration is done, want 50", *gc)
	}

	m, _, _, gc = fakeMemory(Memory{IdleGC: 25, ReadGC: 200})
	m.settle()
	done := m.read()
	if *gc != 200 {
		t.Fatalf("target %d while reading, want ReadGC 200", *gc)
	}
	done()
	if *gc != 25 {
		t.Fatalf("target %d after reading, want IdleGC 25", *gc)
	}
}

// TestMemorySet: the policy sets the process's memory limit and reading
// target, and leaves them alone when it has none.
func TestMemorySet(t *testing.T) {
	limit := debug.SetMemoryLimit(-1)
	gc := debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)
	defer debug.SetMemoryLimit(limit)
	defer debug.SetGCPercent(gc)

	Memory{}.Set()
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("a policy without a limit changed it to %d", got)
	}
	Memory{Limit: 3 << 30, ReadGC: 321}.Set()
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Fatalf("memory limit %d, want %d", got, 3<<30)
	}
	if got := debug.SetGCPercent(gc); got != 321 {
		t.Fatalf("collector target %d, want 321", got)
	}
}

// TestHeapAllocatedGrows: the counter the trim rule reads grows with what
// the heap allocates.
func TestHeapAllocatedGrows(t *testing.T) {
	before := heapAllocated()
	keep := make([][]byte, 0, 64)
	for range 64 {
		keep = append(keep, make([]byte, 64<<10))
	}
	if after := heapAllocated(); after < before+uint64(len(keep))*(64<<10) {
		t.Fatalf("heap allocations read %d, then %d after 4 MiB more", before, after)
	}
	_ = keep[len(keep)-1]
}
