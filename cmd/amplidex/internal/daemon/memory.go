package daemon

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// A daemon is quiet most of its life, between bursts of work (a branch
// checked out, a project opened, an editor's questions). The collector
// frees what a burst threw away, but Go gives the pages back to the
// system only slowly, keeping a heap near its target for the next burst;
// a background agent is judged by what it holds while nobody looks at
// it. Memory is the one policy a daemon's process follows: nothing else in
// the process sets the collector's target or the memory limit, or gives
// memory back.
//
//   - The process's soft memory limit (debug.SetMemoryLimit) bounds what
//     the runtime holds: as the memory Go holds nears it, the collector
//     runs more often and gives pages back sooner.
//   - The collector's target is Go's default (or ReadGC) while the daemon
//     reads (its first scan, a new project's registration): a read
//     allocates in proportion to the project while the heap already holds
//     every other one, and at a low target the collector would mark that
//     heap again and again (at 10,000 collections a new project of 45,000
//     files cost about a second more CPU). Between reads it is IdleGC,
//     low: the heap stays near what the daemon keeps.
//   - One trim rule: once a burst of work ends, the memory it freed goes
//     back to the system at once (debug.FreeOSMemory), so that a quiet
//     daemon holds about what it keeps. A burst has ended when the daemon
//     ends a piece of work it knows to be large (its first scan, a write
//     of a whole root's records), or when a look every TrimEvery finds
//     that at least trimBusy bytes were allocated since memory last went
//     back and less than trimQuiet since the last look. The heap's
//     allocations are read from runtime/metrics, which does not stop the
//     world. A daemon that allocated almost nothing since the last trim
//     is left alone: a trim costs a collection.
type Memory struct {
	// Limit, when positive, is the process's soft memory limit in bytes
	// (debug.SetMemoryLimit); DefaultMemoryLimit is the command's, unless
	// GOMEMLIMIT is set. Zero leaves the runtime's (GOMEMLIMIT, or none).
	Limit int64
	// ReadGC, when positive, is the collector's target (as GOGC) while a
	// scan or a registration reads; zero is Go's default, 100.
	ReadGC int
	// IdleGC, when positive, is the collector's target while the daemon
	// reads nothing; the command's is 25, unless GOGC is set. Zero
	// leaves the collector's target alone, reading or not.
	IdleGC int
	// TrimEvery, when positive, is how often the daemon looks whether a
	// burst of work ended (DefaultTrimEvery is the command's). Zero: the
	// daemon looks only when it ends a piece of work it knows of.
	TrimEvery time.Duration
}

const (
	// DefaultMemoryLimit is the command's soft memory limit for a daemon
	// (Memory.Limit): eight times what a daemon of 10,000 collections
	// holds, so that the collector works harder only well past any real
	// set of roots.
	DefaultMemoryLimit = 1 << 30
	// DefaultTrimEvery is how often a daemon looks whether it went quiet
	// (Memory.TrimEvery).
	DefaultTrimEvery = 5 * time.Second
	// trimBusy is the allocation since the last trim that makes a burst.
	trimBusy = 16 << 20
	// trimQuiet is the most a daemon allocates in a period and is quiet:
	// a question or two of an editor, not a save (one save a second
	// allocates more), so that a trim, which holds up allocation while it
	// gives pages back, does not fall amid work. It is also the least a
	// piece of work must have allocated for its end to give memory back.
	trimQuiet = 64 << 10
	// readGC is Go's default target, for a read when ReadGC is zero.
	readGC = 100
)

// Set applies the settings of m that hold from the process's start: the
// memory limit, and the collector's target while reading (a process
// starts by reading; a check does nothing else).
func (m Memory) Set() {
	if m.Limit > 0 {
		debug.SetMemoryLimit(m.Limit)
	}
	if m.ReadGC > 0 {
		debug.SetGCPercent(m.ReadGC)
	}
}

// memory keeps a daemon's Memory policy in force.
type memory struct {
	policy Memory
	// allocated returns the bytes the heap allocated since the process
	// started; free gives the free memory back; setGC sets the
	// collector's target. Fields so that tests can drive them.
	allocated func() uint64
	free      func()
	setGC     func(int)

	mu sync.Mutex // guards fields below
	// settled is set once the first scan is done: only then is the idle
	// target in force between reads.
	settled bool
	reading int // scans and registrations under way
	// last is what was allocated at the last look, since what was
	// allocated since the last trim.
	last, since uint64

	stop   chan struct{}
	ticker *time.Ticker // every's, stopped by close
	wg     sync.WaitGroup
}

func newMemory(p Memory, free func()) *memory {
	m := &memory{policy: p, allocated: heapAllocated, free: free,
		setGC: func(pct int) { debug.SetGCPercent(pct) }, stop: make(chan struct{})}
	p.Set()
	m.last = m.allocated()
	return m
}

// settle puts the idle target in force: the first scan is done.
func (m *memory) settle() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settled = true
	if m.policy.IdleGC > 0 && m.reading == 0 {
		m.setGC(m.policy.IdleGC)
	}
}

// read puts the reading target in force until done is called, for a
// registration.
func (m *memory) read() (done func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.policy.IdleGC == 0 {
		return func() {}
	}
	if m.reading++; m.reading == 1 && m.settled {
		m.setGC(m.readGC())
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.reading--; m.reading == 0 && m.settled {
				m.setGC(m.policy.IdleGC)
			}
		})
	}
}

func (m *memory) readGC() int {
	if m.policy.ReadGC > 0 {
		return m.policy.ReadGC
	}
	return readGC
}

// ended says that a piece of work known to be large ended: its memory
// goes back now (see Memory).
func (m *memory) ended() { m.look(true) }

// look applies the trim rule (see Memory): ended is set when the daemon
// knows that a burst just ended, else the allocation since the last look
// says whether it did. The memory goes back outside the lock: it takes a
// collection, and a registration that starts meanwhile need not wait.
func (m *memory) look(ended bool) {
	m.mu.Lock()
	now := m.allocated()
	step := now - m.last
	m.last, m.since = now, m.since+step
	trim := ended && m.since >= trimQuiet || m.since >= trimBusy && step < trimQuiet
	if trim {
		m.since = 0
	}
	m.mu.Unlock()
	if !trim {
		return
	}
	m.free()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = m.allocated() // what the trim allocated is no work
}

// every looks whether a burst of work ended every period, until close.
func (m *memory) every(period time.Duration) {
	m.ticker = time.NewTicker(period)
	m.start(m.ticker.C)
}

// start looks at each tick whether a burst of work ended, until close.
func (m *memory) start(tick <-chan time.Time) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for {
			select {
			case <-m.stop:
				return
			case <-tick:
				m.look(false)
			}
		}
	}()
}

// close stops the looks and waits for a trim under way.
func (m *memory) close() {
	if m.ticker != nil {
		m.ticker.Stop()
	}
	close(m.stop)
	m.wg.Wait()
}

// heapAllocated reads the bytes the heap allocated since the process
// started, from runtime/metrics: without stopping the world.
func heapAllocated() uint64 {
	s := [1]metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
