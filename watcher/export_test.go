package watcher

import "time"

// NewGated is New with the goroutine that drains fsnotify held back until
// gate is closed, so that a test can make the kernel queue overflow.
func NewGated(opts Options, handle func(Batch), gate <-chan struct{}) (*Watcher, error) {
	return newWatcher(opts, handle, hooks{drainGate: gate})
}

// NewWithAddWatch is New with addWatch called before each kernel watch on
// a root's directory is added (not the one on the sync directory): an error
// it returns is taken as fsnotify's, so that a test can make the kernel
// refuse watches. It is called from the Watcher's own goroutine.
func NewWithAddWatch(opts Options, handle func(Batch), addWatch func(dir string) error) (*Watcher, error) {
	return newWatcher(opts, handle, hooks{addWatch: addWatch})
}

// InjectError hands err to the Watcher as if fsnotify had reported it, after
// the events and errors the drain goroutine has queued so far.
func (w *Watcher) InjectError(err error) { w.enqueue(item{err: err}) }

// PollDelay is how long after a walk that took took a polled root is
// walked again, its poll interval being interval.
func PollDelay(interval, took time.Duration) time.Duration { return pollDelay(interval, took) }
