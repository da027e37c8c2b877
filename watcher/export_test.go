package watcher

// NewGated is New with the goroutine that drains fsnotify held back until
// gate is closed, so that a test can make the kernel queue overflow.
func NewGated(opts Options, handle func(Batch), gate <-chan struct{}) (*Watcher, error) {
	return newWatcher(opts, handle, hooks{drainGate: gate})
}
