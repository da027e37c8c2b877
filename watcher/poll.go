package watcher

import (
	"io/fs"
	"os"
	"path/filepath"
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

// poll walks a polled root and notes every path that is new, gone or
// different since the last walk.
func (w *Watcher) poll(r *root) {
	r.nextPoll = w.now().Add(w.opts.PollInterval)
	snap := w.snapshot(r)
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
// directly in r as watching does. It returns nil when r is not a directory.
func (w *Watcher) snapshot(r *root) map[string]fileState {
	if fi, err := os.Stat(r.path); err != nil || !fi.IsDir() {
		return nil
	}
	snap := make(map[string]fileState, len(r.snap))
	stack := []string{r.path}
	for len(stack) > 0 {
		if w.stopped() {
			break
		}
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
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					stack = append(stack, p)
				}
			}
		}
	}
	return snap
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
