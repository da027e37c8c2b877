package daemon

import (
	"sync"
	"time"
)

// idler stops a daemon that has had no client for a while: it hears the
// number of the socket's connections (server.Server.Activity), which
// requests and subscriptions hold, and once none is left it arms a timer
// for the idle time; a connection disarms it. When the timer fires with
// still no connection, it calls fire with the idle time, once.
type idler struct {
	now  func() time.Time
	fire func(after time.Duration)

	mu sync.Mutex // guards fields below
	// after is the idle time; zero or less: never.
	after time.Duration
	// open counts the connections; since is when it last fell to zero
	// (or the idler started).
	open  int
	since time.Time
	timer *time.Timer
	// started is set by start: until then no timer is armed.
	started bool
	// done is set once fire was called or the idler closed: it arms no
	// timer any more.
	done bool
}

// newIdler returns an idler that counts connections; its time runs once
// start is called.
func newIdler(after time.Duration, now func() time.Time, fire func(time.Duration)) *idler {
	return &idler{now: now, fire: fire, after: after, since: now()}
}

// start starts the idle time: the daemon's first scan does not count.
func (i *idler) start() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.started, i.since = true, i.now()
	i.armLocked()
}

// activity is the server's Activity hook: open connections are open.
func (i *idler) activity(open int) {
	i.mu.Lock()
	defer i.mu.Unlock()
	was := i.open
	i.open = open
	switch {
	case open > 0 && i.timer != nil:
		i.timer.Stop()
	case open == 0 && was > 0:
		i.since = i.now()
		i.armLocked()
	}
}

// setAfter changes the idle time (a reload); the time without clients
// so far counts.
func (i *idler) setAfter(after time.Duration) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.after = after
	if i.timer != nil {
		i.timer.Stop()
	}
	i.armLocked()
}

// armLocked sets the timer for the end of the idle time, when there is
// one and no connection is open. i.mu is held.
func (i *idler) armLocked() {
	if !i.started || i.done || i.after <= 0 || i.open > 0 {
		return
	}
	wait := i.since.Add(i.after).Sub(i.now())
	if i.timer == nil {
		i.timer = time.AfterFunc(wait, i.expire)
		return
	}
	i.timer.Reset(wait)
}

// expire runs when the timer fires: it calls fire when the daemon is
// still idle, and arms the timer again when a reset raced it.
func (i *idler) expire() {
	i.mu.Lock()
	if i.done || i.after <= 0 || i.open > 0 {
		i.mu.Unlock()
		return
	}
	if i.now().Before(i.since.Add(i.after)) {
		i.armLocked()
		i.mu.Unlock()
		return
	}
	i.done = true
	after := i.after
	i.mu.Unlock()
	i.fire(after)
}

// close stops the timer; fire is not called after close returns unless
// it was running already.
func (i *idler) close() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.done = true
	if i.timer != nil {
		i.timer.Stop()
	}
}

// state returns the idle time (zero: never), the connections open, and
// when the daemon exits should no other client connect: counted from
// now while the one connection is the asker's, from when the last one
// closed when none is open, zero when others are open or it never exits.
func (i *idler) state() (after time.Duration, open int, deadline time.Time) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.after <= 0 {
		return 0, i.open, time.Time{}
	}
	switch {
	case i.open == 0 && i.started:
		deadline = i.since.Add(i.after)
	case i.open <= 1:
		deadline = i.now().Add(i.after)
	}
	return i.after, i.open, deadline
}
