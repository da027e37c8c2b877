package watcher

import (
	"fmt"
	"time"
)

// maxWarnings bounds the distinct warnings kept per root; later ones are
// counted under a single entry.
const maxWarnings = 32

// root is one watched root: its own tree (main), the collections linked
// into it (links), and, when polled, its last snapshot.
type root struct {
	path  string
	main  *mount
	guard *mount            // watches the directories above the root
	links map[string]*mount // by link name, for directory symlinks directly in the root

	polled   bool
	snap     map[string]fileState // when polled; nil while the root is missing
	nextPoll time.Time
	// refused, when set, says why the root is neither watched nor polled:
	// it holds too many directories (ErrTooLarge).
	refused error

	pend     pending
	warnings []warning
	dirty    bool // status changed since it was last published
}

type warning struct {
	msg   string
	count int
}

func newRoot(path string) *root {
	r := &root{path: path, links: make(map[string]*mount), dirty: true}
	r.main = &mount{root: r, logical: path}
	r.guard = &mount{root: r, logical: path}
	return r
}

func (r *root) mounts() []*mount {
	ms := make([]*mount, 0, 2+len(r.links))
	ms = append(ms, r.main, r.guard)
	for _, m := range r.links {
		ms = append(ms, m)
	}
	return ms
}

func (r *root) state() State {
	switch {
	case r.refused != nil:
		return StateTooLarge
	case r.polled && r.snap != nil:
		return StatePolling
	case !r.polled && r.main.state == mountTree:
		return StateWatching
	default:
		return StateMissing
	}
}

func (r *root) status() RootStatus {
	s := RootStatus{Path: r.path, State: r.state()}
	for _, m := range r.mounts() {
		s.Watches += m.nodes
	}
	for _, wn := range r.warnings {
		if wn.count == 1 {
			s.Warnings = append(s.Warnings, wn.msg)
		} else {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s (%d times)", wn.msg, wn.count))
		}
	}
	return s
}

// pending is the batch a root is collecting.
type pending struct {
	paths       map[string]struct{}
	rescan      bool
	reasons     Reason
	first, last time.Time
}

func (p *pending) empty() bool { return len(p.paths) == 0 && !p.rescan }

// due is when the batch must be delivered: after a quiet period, or at the
// latest maxWait after its first change.
func (p *pending) due(debounce, maxWait time.Duration) time.Time {
	quiet := p.last.Add(debounce)
	if latest := p.first.Add(maxWait); latest.Before(quiet) {
		return latest
	}
	return quiet
}

func (w *Watcher) touch(r *root) {
	now := w.now()
	if r.pend.first.IsZero() {
		r.pend.first = now
	}
	r.pend.last = now
}

// note records that path, under root r, may have changed.
func (w *Watcher) note(r *root, path string) {
	w.touch(r)
	if r.pend.rescan {
		return
	}
	if r.pend.paths == nil {
		r.pend.paths = make(map[string]struct{})
	}
	r.pend.paths[path] = struct{}{}
}

// rescan asks the consumer to rescan all of r, for the reasons given.
func (w *Watcher) rescan(r *root, reasons Reason) {
	w.touch(r)
	r.pend.rescan = true
	r.pend.paths = nil
	r.pend.reasons |= reasons
}

// warn records a warning on r, counting repeats.
func (w *Watcher) warn(r *root, msg string) {
	w.log.Warn("watcher: "+msg, "root", r.path)
	r.dirty = true
	if len(r.warnings) >= maxWarnings {
		msg = "further warnings omitted"
	}
	for i := range r.warnings {
		if r.warnings[i].msg == msg {
			r.warnings[i].count++
			return
		}
	}
	r.warnings = append(r.warnings, warning{msg: msg, count: 1})
}

// addRoot starts watching a new root, and returns why it does not when
// the root is too large.
func (w *Watcher) addRoot(path string) error {
	if r, ok := w.roots[path]; ok {
		return r.refused
	}
	r := newRoot(path)
	w.roots[path] = r
	i := 0
	for i < len(w.order) && w.order[i].path < path {
		i++
	}
	w.order = append(w.order[:i], append([]*root{r}, w.order[i:]...)...)
	if err := w.attach(r.main, false); err != nil {
		// The caller scans the root after AddRoot, and needs no Rescan;
		// unless the walk handed it listings, made while the root was
		// watched, that may have missed changes the watches it then lost
		// would have reported.
		w.startPolling(r, err, w.opts.OnListing != nil)
	}
	return r.refused
}

// removeRoot stops watching a root and forgets it.
func (w *Watcher) removeRoot(path string) error {
	r, ok := w.roots[path]
	if !ok {
		return fmt.Errorf("remove root %s: %w", path, ErrUnknownRoot)
	}
	w.detachRoot(r)
	delete(w.roots, path)
	for i, o := range w.order {
		if o == r {
			w.order = append(w.order[:i], w.order[i+1:]...)
			break
		}
	}
	w.dropQueued(path)
	w.smu.Lock()
	delete(w.status, path)
	w.smu.Unlock()
	return nil
}
