package daemon

import (
	"runtime/debug"
	"sync"
)

// gcTarget keeps the collector's target (GOGC) of a daemon that set one
// (Options.GCPercent): that low target while the daemon idles, Go's
// default while a registration reads a project. A registration allocates
// in proportion to the project while the heap already holds every other
// one, and at a low target the collector would mark that heap again and
// again: at 10,000 collections, a new project of 45,000 files cost about
// a second more CPU. The target is the process's, so one gcTarget serves
// the daemon.
type gcTarget struct {
	mu      sync.Mutex // guards fields below
	idle    int        // the target while nothing reads; 0: GOGC is left alone
	reading int        // registrations under way
}

// settle sets the idle target, pct (0 leaves GOGC alone), in force when
// no registration reads.
func (g *gcTarget) settle(pct int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.idle = pct
	if pct > 0 && g.reading == 0 {
		debug.SetGCPercent(pct)
	}
}

// read raises the target to Go's default until done is called, for a
// registration.
func (g *gcTarget) read() (done func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.idle == 0 {
		return func() {}
	}
	if g.reading++; g.reading == 1 {
		debug.SetGCPercent(100)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.reading--; g.reading == 0 {
				debug.SetGCPercent(g.idle)
			}
		})
	}
}
