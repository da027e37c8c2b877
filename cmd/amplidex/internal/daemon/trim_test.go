package daemon

import (
	"testing"
	"time"
)

// TestTrimAfterABurst: the trimmer gives memory back once, when a burst
// of allocation is followed by a quiet period; never during the burst,
// never when the daemon stayed quiet, and again after the next burst.
func TestTrimAfterABurst(t *testing.T) {
	var allocated uint64
	trims := 0
	tr := &trimmer{allocated: func() uint64 { return allocated }, free: func() { trims++ }}
	look := func(alloc uint64, want int, what string) {
		t.Helper()
		allocated += alloc
		tr.look()
		if trims != want {
			t.Fatalf("%s: %d trims, want %d", what, trims, want)
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

// TestTrimmerStops: a started trimmer looks at each tick, and close
// stops it.
func TestTrimmerStops(t *testing.T) {
	var allocated uint64 = 1
	freed := make(chan struct{}, 1)
	tr := newTrimmer()
	tr.allocated = func() uint64 { return allocated }
	tr.free = func() { freed <- struct{}{} }
	tick := make(chan time.Time)
	tr.start(tick)
	allocated += trimBusy
	tick <- time.Time{} // the burst
	tick <- time.Time{} // quiet: trims
	select {
	case <-freed:
	case <-time.After(10 * time.Second):
		t.Fatal("no trim after a burst and a quiet period")
	}
	tr.close()
	select {
	case tick <- time.Time{}:
		t.Fatal("the trimmer still looks after close")
	case <-time.After(50 * time.Millisecond):
	}
}
