package watcher

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// fileState is what polling compares to tell that a path changed.
type fileState struct {
	size  int64
	mtime int64
	ino   uint64
	mode  fs.FileMode
}

func stateOf(fi fs.FileInfo) fileState {
	return fileState{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: keyOf(fi).ino, mode: fi.Mode()}
}

// pollShare bounds the time polling takes: the next walk of a root comes
// at least pollShare times as long as the last one took after it, so
// that a large root polled costs at most 1/pollShare of a core, not a
// core walking it without a pause.
const pollShare = 20

// pollDelay is how long after a walk that took took a polled root is
// walked again: the poll interval, or pollShare times the walk.
func pollDelay(interval, took time.Duration) time.Duration {
	return max(interval, pollShare*took)
}

// poll walks a polled root and notes every path that is new, gone or
// different since the last walk. A root found to hold more directories
// than it may is polled no more.
func (w *Watcher) poll(r *root) {
	began := time.Now()
	snap, dirs := w.snapshot(r)
	r.nextPoll = w.now().Add(pollDelay(w.opts.PollInterval, time.Since(began)))
	if limit := w.opts.MaxRootDirs; limit > 0 && dirs > limit {
		w.refuseRoot(r, fmt.Errorf("poll %s: %w", r.path, ErrTooLarge), true)
		return
	}
	switch {
	case snap == nil && r.snap != nil:
		w.rescan(r, ReasonRootVanished)
	case snap != nil && r.snap == nil:
		w.rescan(r, ReasonRootAppeared)
	case snap != nil:
		for p, st := range snap {
			if old, ok := r.snap[p]; !ok || old != st {
				w.note(r, p)
			}
		}
		for p := range r.snap {
			if _, ok := snap[p]; !ok {
				w.note(r, p)
			}
		}
	}
	if (snap == nil) != (r.snap == nil) {
		r.dirty = true
	}
	r.snap = snap
}

// snapshot records every path under r, following the directory symlinks
// directly in r as watching does, and counts the directories of r's own
// tree. It returns nil when r is not a directory, and stops early once
// the directories are more than Options.MaxRootDirs.
func (w *Watcher) snapshot(r *root) (map[string]fileState, int) {
	if fi, err := os.Stat(r.path); err != nil || !fi.IsDir() {
		return nil, 0
	}
	snap := make(map[string]fileState, len(r.snap))
	stack := []string{r.path}
	dirs := 0
	for len(stack) > 0 {
		if w.stopped() || (w.opts.MaxRootDirs > 0 && dirs > w.opts.MaxRootDirs) {
			break
		}
		dirs++
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		entries, err := readDirUnsorted(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			p := joinPath(dir, e.Name())
			if p == w.syncDir {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			snap[p] = stateOf(fi)
			switch {
			case e.IsDir():
				if !skipped(e.Name()) {
					stack = append(stack, p)
				}
			case e.Type()&fs.ModeSymlink != 0 && dir == r.path:
				if fi, err := os.Stat(p); err == nil && fi.IsDir() && w.follows(p) {
					stack = append(stack, p)
				}
			}
		}
	}
	return snap, dirs
}

// follows reports whether the directory symlink link, directly in a
// root, is followed (Options.FollowLink).
func (w *Watcher) follows(link string) bool {
	if w.opts.FollowLink == nil {
		return true
	}
	real, err := filepath.EvalSymlinks(link)
	return err == nil && w.opts.FollowLink(link, real) == nil
}

func readDirUnsorted(dir string) ([]fs.DirEntry, error) {
	f, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// joinPath joins a clean absolute directory and a name, faster than
// filepath.Join for this one case, with the platform's separator, so
// that paths print as the system writes them and compare equal to those
// filepath.Join makes.
func joinPath(dir, name string) string {
	if dir != "" && os.IsPathSeparator(dir[len(dir)-1]) {
		return dir + name // "/" or a volume root such as C:\
	}
	return dir + string(filepath.Separator) + name
}
