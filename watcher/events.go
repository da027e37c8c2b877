package watcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// gone reports whether op says the path went away from where it was.
func gone(op fsnotify.Op) bool { return op&(fsnotify.Remove|fsnotify.Rename) != 0 }

// handleEvent routes one fsnotify event to every mount watching the
// directory it happened in, or the directory it happened to.
func (w *Watcher) handleEvent(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	dir := filepath.Dir(name)
	if dir == w.syncDir {
		w.handleCookie(filepath.Base(name), ev.Op)
		return
	}
	if name == w.syncDir {
		if gone(ev.Op) {
			w.restoreSyncDir()
		}
		return
	}
	var buf [4]*mount
	ms := buf[:0]
	if dir != name {
		if n := w.ws.watched(dir); n != none {
			ms = w.ws.owners(ms, n)
		}
	}
	if n := w.ws.watched(name); n != none {
		for _, m := range w.ws.owners(nil, n) {
			if !slices.Contains(ms, m) {
				ms = append(ms, m)
			}
		}
	}
	for _, m := range ms {
		w.dispatch(m, name, dir, ev.Op)
	}
}

// dispatch handles an event for one mount. The mount may have changed state
// since the event was routed to it (a root's links are detached with it),
// so its state is checked here.
func (w *Watcher) dispatch(m *mount, name, dir string, op fsnotify.Op) {
	var err error
	switch m.state {
	case mountAncestor:
		if (name == m.anc && gone(op)) || (dir == m.anc && filepath.Base(name) == m.ancNext) {
			err = w.recheck(m)
		}
	case mountGuard:
		for _, t := range m.guardedThrough(dir, filepath.Base(name)) {
			if t.state == mountTree {
				if err := w.checkMount(t, gone(op)); limitReached(err) {
					w.limited(t, err, true)
				}
			}
		}
	case mountTree:
		if name == m.real {
			if gone(op) {
				err = w.checkMount(m, true)
			}
			break
		}
		if w.ws.has(w.ws.watched(dir), m) {
			err = w.changed(m, name, dir, op)
		}
	}
	if err != nil && limitReached(err) {
		w.limited(m, err, true)
	}
}

// limited handles err, which limitReached accepted, met by mount m: a
// linked collection too large is no longer followed; otherwise the root
// is polled, or refused when it is the root that is too large.
func (w *Watcher) limited(m *mount, err error, rescan bool) {
	if m.link && errors.Is(err, ErrTooLarge) {
		w.refuseLink(m, err)
		return
	}
	w.startPolling(m.root, err, rescan)
}

// changed handles an event for name inside m's tree.
func (w *Watcher) changed(m *mount, name, dir string, op fsnotify.Op) error {
	r := m.root
	w.note(r, m.logicalOf(name))
	if gone(op) || op.Has(fsnotify.Create) {
		if err := w.refresh(m, name); err != nil {
			return err
		}
	}
	if m == r.main && dir == m.real {
		return w.syncLink(r, filepath.Base(name), true)
	}
	return nil
}

// refresh makes m's watches for name match the disk after name was
// created, removed or renamed: whatever was watched there is dropped, and a
// directory found there now is watched afresh and walked, everything in it
// reported (its contents may predate the watch: mkdir -p, a directory moved
// in). Event names are what fsnotify knew when it read the event, which
// may be out of date after a move, so the disk decides, never the event.
func (w *Watcher) refresh(m *mount, name string) error {
	if n := w.ws.watched(name); w.ws.has(n, m) {
		w.dropSubtree(m, n)
	}
	fi, err := os.Lstat(name)
	if err != nil || !fi.IsDir() || skipped(filepath.Base(name)) || name == w.syncDir {
		return nil
	}
	return w.watchTree(m, name, true)
}

// checkMount handles a change to the top of m's tree or to a directory
// above it: when the tree is gone or replaced, the mount starts over, and
// the root is rescanned (or, for a linked collection, the link is
// reported). With force set (the top itself was removed or renamed) it
// starts over even when the path still leads to a directory with the same
// inode number, as a new directory may reuse the number of a removed one.
func (w *Watcher) checkMount(m *mount, force bool) error {
	if !force {
		real, fi, st := resolveDir(m.logical)
		if st == dirOK && real == m.real && keyOf(fi) == m.id {
			return nil
		}
	}
	r := m.root
	if m.link {
		w.detachMount(m)
		w.note(r, m.logical)
		return w.attach(m, true)
	}
	w.detachRoot(r)
	err := w.attach(r.main, false)
	if r.main.state == mountTree {
		w.rescan(r, ReasonRootReplaced)
	} else {
		w.rescan(r, ReasonRootVanished)
	}
	return err
}

// recheck handles a change on the way to a missing mount's directory.
func (w *Watcher) recheck(m *mount) error {
	err := w.attach(m, m.link)
	if m.state == mountTree {
		if m.link {
			w.note(m.root, m.logical)
		} else {
			w.rescan(m.root, ReasonRootAppeared)
		}
	}
	return err
}

// handleError handles an error from fsnotify. An overflow of the kernel
// queue cannot be pinned to a root, and neither can a read error, so every
// root that is not polled is watched afresh (which also repairs watches lost
// with the events) and rescanned.
func (w *Watcher) handleError(err error) {
	if errors.Is(err, syscall.EINVAL) {
		// fsnotify drops the watch of a moved directory itself and reports
		// EINVAL when that watch was already gone: nothing is lost.
		w.log.Debug("watcher: fsnotify", "err", err)
		return
	}
	reason, text := ReasonOverflow, "kernel event queue overflowed"
	if !errors.Is(err, fsnotify.ErrEventOverflow) {
		reason, text = ReasonWatchLost, fmt.Sprintf("watch error: %v", err)
	}
	w.log.Warn("watcher: "+text+"; rescanning every root", "err", err)
	for _, r := range w.order {
		if r.polled || r.refused != nil {
			continue
		}
		w.warn(r, text+"; root rescanned")
		w.detachRoot(r)
		why := reason
		if err := w.attach(r.main, false); err != nil {
			w.startPolling(r, err, false)
			why |= ReasonPolling | limitReason(err)
		}
		w.rescan(r, why)
	}
	// Cookies may have been lost with the events. The rescans queued above
	// happen after every pending Flush was called, so they can finish now.
	w.finishFlushes()
}

// startPolling puts r into polling after the kernel (or the budget) refused
// a watch, for want of watches or of file descriptors (see limitReached).
// With rescan set, and r watched before, the consumer is asked to rescan,
// as changes may have been missed on the way.
func (w *Watcher) startPolling(r *root, cause error, rescan bool) {
	if errors.Is(cause, ErrTooLarge) {
		w.refuseRoot(r, cause, rescan)
		return
	}
	if r.polled || r.refused != nil {
		return
	}
	hadTree := r.main.state == mountTree
	w.detachRoot(r)
	r.polled = true
	r.dirty = true
	w.log.Warn("watcher: no watch left", "root", r.path, "err", cause)
	w.warn(r, fmt.Sprintf("%s; polling every %s or more (a walk costs at most 1/%d of a core)", limitText(cause), w.opts.PollInterval, pollShare))
	began := time.Now()
	snap, dirs := w.snapshot(r)
	if limit := w.opts.MaxRootDirs; limit > 0 && dirs > limit {
		r.polled = false
		w.refuseRoot(r, fmt.Errorf("poll %s: %w", r.path, ErrTooLarge), rescan && hadTree)
		return
	}
	r.snap = snap
	r.nextPoll = w.now().Add(pollDelay(w.opts.PollInterval, time.Since(began)))
	if rescan && hadTree {
		w.rescan(r, ReasonPolling|limitReason(cause))
	}
}

// refuseRoot stops watching and polling r, which holds more directories
// than it may (cause wraps ErrTooLarge). With rescan set, and r watched or
// polled before, the consumer is asked to rescan, as changes may have been
// missed on the way.
func (w *Watcher) refuseRoot(r *root, cause error, rescan bool) {
	if r.refused != nil {
		return
	}
	had := r.main.state == mountTree || r.polled
	w.detachRoot(r)
	r.polled, r.snap, r.refused = false, nil, &tooLargeError{root: r.path, limit: w.opts.MaxRootDirs}
	r.dirty = true
	w.log.Warn("watcher: root too large; neither watched nor polled", "root", r.path, "err", cause)
	w.warn(r, fmt.Sprintf("more than %d directories: neither watched nor polled, so changes in it are not seen (a root holds collections, not a whole tree)", w.opts.MaxRootDirs))
	if rescan && had {
		w.rescan(r, ReasonTooLarge)
	}
}

// tooLargeError is why a root is neither watched nor polled.
type tooLargeError struct {
	root  string
	limit int
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("root %s holds more than %d directories, more than a collections root holds", e.root, e.limit)
}

func (e *tooLargeError) Is(target error) bool { return target == ErrTooLarge }

// limitReason is the reason a root is polled after err, which
// limitReached accepted.
func limitReason(err error) Reason {
	if tooManyFiles(err) {
		return ReasonTooManyFiles
	}
	return ReasonWatchLimit
}

// limitText names the limit err says was reached, and how to raise it,
// for a root's warnings.
func limitText(err error) string {
	switch {
	case errors.Is(err, syscall.EMFILE):
		return "too many open files: raise ulimit -n"
	case errors.Is(err, syscall.ENFILE):
		return "too many open files in the system: raise its limit (kern.maxfiles, fs.file-max)"
	default:
		return "inotify watch limit reached"
	}
}
