package daemon

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// A daemon is quiet most of its life, between bursts of work (a branch
// checked out, a project opened, an editor's questions). The collector
// frees what a burst threw away, but Go gives the pages back to the
// system only slowly, keeping a heap near its target for the next burst;
// a background agent is judged by what it holds while nobody looks at
// it. A trimmer watches how much the daemon allocates and, once a burst
// of at least trimBusy bytes is followed by a whole period of less than
// trimQuiet, returns the free memory at once (debug.FreeOSMemory), so
// that a quiet daemon holds about what it keeps. A quiet daemon that did
// nothing since the last trim is left alone: the trim costs a collection.
type trimmer struct {
	// allocated returns the bytes allocated since the process started;
	// free gives the free memory back. Fields so that tests can drive
	// them.
	allocated func() uint64
	free      func()

	// last is what was allocated at the last look, since what was
	// allocated since the last trim; the goroutine's own.
	last, since uint64

	stop   chan struct{}
	ticker *time.Ticker // every's, stopped by close
	wg     sync.WaitGroup
}

const (
	// DefaultTrimEvery is how often a daemon looks whether it went quiet
	// (Options.TrimEvery).
	DefaultTrimEvery = 5 * time.Second
	// trimBusy is the allocation since the last trim that makes a burst.
	trimBusy = 16 << 20
	// trimQuiet is the most a daemon allocates in a period and is quiet:
	// a question or two of an editor, not a save (one save a second
	// allocates more), so that a trim, which holds up allocation while it
	// gives pages back, does not fall amid work.
	trimQuiet = 64 << 10
)

func newTrimmer() *trimmer {
	return &trimmer{allocated: heapAllocated, free: debug.FreeOSMemory, stop: make(chan struct{})}
}

// every looks whether to trim every period, until close.
func (t *trimmer) every(period time.Duration) {
	t.ticker = time.NewTicker(period)
	t.start(t.ticker.C)
}

// start looks at each tick whether to trim, until close.
func (t *trimmer) start(tick <-chan time.Time) {
	t.last = t.allocated()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		for {
			select {
			case <-t.stop:
				return
			case <-tick:
				t.look()
			}
		}
	}()
}

// look trims when a burst of work just ended: since the last trim, at
// least trimBusy bytes were allocated, and since the last look less than
// trimQuiet.
func (t *trimmer) look() {
	now := t.allocated()
	step := now - t.last
	t.last, t.since = now, t.since+step
	if t.since >= trimBusy && step < trimQuiet {
		t.free()
		t.last, t.since = t.allocated(), 0
	}
}

// close stops the trimmer and waits for a trim under way.
func (t *trimmer) close() {
	if t.ticker != nil {
		t.ticker.Stop()
	}
	close(t.stop)
	t.wg.Wait()
}

// heapAllocated reads the bytes the heap allocated since the start. It
// stops the world for a moment, once a period: runtime/metrics would not,
// but every process of the command would pay for its initialisation, a
// whole-process query's 4 ms included (about 0.1 ms).
func heapAllocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}
