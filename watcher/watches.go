package watcher

import (
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"slices"
	"syscall"

	"github.com/amplidex/amplidex/watcher/internal/dirtree"
	"github.com/fsnotify/fsnotify"
)

// none is no directory.
const none = dirtree.None

// A watch is one kernel watch on a directory, shared by every mount that
// needs it (roots and linked collections may overlap). It is the value of
// a held entry of the watches' tree: a directory is watched exactly when
// its entry is held.
type watch struct {
	// owner is the mount that needs the watch, or the first of them when
	// several do (watches.more then lists them all).
	owner *mount
	id    fileKey
}

// watches are the kernel watches: one entry per watched directory in a
// tree of names (the directories on the way to them are bare entries),
// found by path or by identity. They belong to the run goroutine.
//
// A watched directory's entry is named with a substring of the path given
// to fsnotify, which keeps that path for as long as the watch: the path is
// stored once, by fsnotify.
type watches struct {
	tree   *dirtree.Tree[watch]
	byID   dirtree.Index // held entries with a known identity, by watch.id
	idSeed maphash.Seed
	idHash func(dirtree.Node) uint64
	more   map[dirtree.Node][]*mount // every owner, for the few watches that have several
}

func newWatches() watches {
	ws := watches{
		tree:   dirtree.New[watch](),
		idSeed: maphash.MakeSeed(),
		more:   make(map[dirtree.Node][]*mount),
	}
	tree, seed := ws.tree, ws.idSeed
	ws.idHash = func(n dirtree.Node) uint64 { return maphash.Comparable(seed, tree.Value(n).id) }
	return ws
}

// watched returns the watch on dir, or none.
func (ws *watches) watched(dir string) dirtree.Node {
	n := ws.tree.Lookup(dir)
	if !ws.tree.Held(n) {
		return none
	}
	return n
}

// withID returns the watch on the directory whose identity is id, or none.
func (ws *watches) withID(id fileKey) dirtree.Node {
	return ws.byID.Find(maphash.Comparable(ws.idSeed, id), func(n dirtree.Node) bool {
		return ws.tree.Value(n).id == id
	})
}

// path returns the directory n watches.
func (ws *watches) path(n dirtree.Node) string { return ws.tree.Path(n) }

// has reports whether m owns the watch n.
func (ws *watches) has(n dirtree.Node, m *mount) bool {
	if !ws.tree.Held(n) {
		return false
	}
	if ms, ok := ws.more[n]; ok {
		return slices.Contains(ms, m)
	}
	return ws.tree.Value(n).owner == m
}

// owners appends the owners of n to dst.
func (ws *watches) owners(dst []*mount, n dirtree.Node) []*mount {
	if ms, ok := ws.more[n]; ok {
		return append(dst, ms...)
	}
	if o := ws.tree.Value(n).owner; o != nil {
		dst = append(dst, o)
	}
	return dst
}

// addOwner makes m, not yet one, an owner of n.
func (ws *watches) addOwner(n dirtree.Node, m *mount) {
	v := ws.tree.Value(n)
	if v.owner == nil {
		v.owner = m
		return
	}
	ms := ws.more[n]
	if ms == nil {
		ms = []*mount{v.owner}
	}
	ws.more[n] = append(ms, m)
}

// removeOwner removes the owner m from n and reports whether n has any
// owner left.
func (ws *watches) removeOwner(n dirtree.Node, m *mount) bool {
	v := ws.tree.Value(n)
	ms, ok := ws.more[n]
	if !ok {
		v.owner = nil
		return false
	}
	if i := slices.Index(ms, m); i >= 0 {
		ms = slices.Delete(ms, i, i+1)
	}
	v.owner = ms[0]
	if len(ms) == 1 {
		delete(ws.more, n)
	} else {
		ws.more[n] = ms
	}
	return true
}

// add records the watch just added on dir, the path given to fsnotify.
func (ws *watches) add(dir string, id fileKey) dirtree.Node {
	n := ws.tree.Insert(dir)
	*ws.tree.Value(n) = watch{id: id}
	if id != (fileKey{}) {
		// A watch of the same identity left under another path (see
		// newNode) is no longer found by it.
		for old := ws.withID(id); old != none; old = ws.withID(id) {
			ws.byID.Delete(old, ws.idHash(old), ws.idHash)
		}
		ws.byID.Insert(n, ws.idHash(n), ws.idHash)
	}
	return n
}

// release forgets the watch n, which has no owner left.
func (ws *watches) release(n dirtree.Node) {
	if ws.tree.Value(n).id != (fileKey{}) {
		ws.byID.Delete(n, ws.idHash(n), ws.idHash)
	}
	*ws.tree.Value(n) = watch{}
	ws.tree.Release(n)
}

// addWatch makes m an owner of the watch on dir, adding the kernel watch
// when dir has none yet.
func (w *Watcher) addWatch(m *mount, dir string) (dirtree.Node, error) {
	if limit := w.dirLimit(m); limit > 0 && m.nodes >= limit && !w.ws.has(w.ws.watched(dir), m) {
		return none, fmt.Errorf("watch %s: %s holds more than %d directories: %w", dir, m.logical, limit, ErrTooLarge)
	}
	n := w.ws.watched(dir)
	if n == none {
		var err error
		if n, err = w.newNode(dir); err != nil {
			return none, err
		}
	}
	if !w.ws.has(n, m) {
		w.ws.addOwner(n, m)
		m.nodes++
		m.root.dirty = true
	}
	return n, nil
}

// dirLimit is the most directories m may watch: Options.MaxRootDirs for a
// root's own tree, Options.MaxLinkDirs for a linked collection, none (0)
// for the watches on the way to a tree.
func (w *Watcher) dirLimit(m *mount) int {
	switch {
	case m == m.root.main:
		return w.opts.MaxRootDirs
	case m.link:
		return w.opts.MaxLinkDirs
	}
	return 0
}

// newNode adds the kernel watch for dir. A directory moved from one
// watched place to another keeps its kernel watch, which fsnotify knows by
// the old path only: the watch under the old path is dropped first (the
// move is reported there), so that the new path gets a watch of its own.
func (w *Watcher) newNode(dir string) (dirtree.Node, error) {
	if w.opts.MaxWatches > 0 && w.ws.tree.Len() >= w.opts.MaxWatches {
		return none, fmt.Errorf("watch %s: %w (budget of %d watches used)", dir, syscall.ENOSPC, w.opts.MaxWatches)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return none, fmt.Errorf("watch %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return none, fmt.Errorf("watch %s: %w", dir, syscall.ENOTDIR)
	}
	id := keyOf(fi)
	if id != (fileKey{}) {
		if old := w.ws.withID(id); old != none {
			oldPath := w.ws.path(old)
			if fi, err := os.Stat(oldPath); err == nil && keyOf(fi) == id {
				return none, fmt.Errorf("watch %s: %w: %s", dir, errSameDir, oldPath)
			}
			w.moved(old)
			if n := w.ws.watched(dir); n != none {
				return n, nil // handling the move watched dir already
			}
		}
	}
	if err := w.addKernelWatch(dir); err != nil {
		return none, fmt.Errorf("watch %s: %w", dir, err)
	}
	return w.ws.add(dir, id), nil
}

// addKernelWatch adds the fsnotify watch for dir, through the test hook
// when one is set.
func (w *Watcher) addKernelWatch(dir string) error {
	if w.hooks.addWatch != nil {
		if err := w.hooks.addWatch(dir); err != nil {
			return err
		}
	}
	err := w.fsw.Add(dir)
	if err != nil && tooManyFiles(err) {
		// kqueue opens dir, then every file in it: running out part way
		// leaves dir and some of its files watched, which nothing would
		// ever remove. inotify leaves nothing, and says so.
		if err := w.fsw.Remove(dir); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) {
			w.log.Debug("watcher: remove partial watch", "dir", dir, "err", err)
		}
	}
	return err
}

// moved handles a watched directory found at another path: each mount that
// watched it learns that it went away, and its watch is dropped. Handling
// it may drop the watch n and reuse its entry, so n is held by a Ref.
func (w *Watcher) moved(n dirtree.Node) {
	path := w.ws.path(n)
	ref := w.ws.tree.Ref(n)
	owners := w.ws.owners(nil, n)
	for _, m := range owners {
		var err error
		switch m.state {
		case mountTree:
			if path == m.real {
				err = w.checkMount(m, true)
			} else if n := w.ws.tree.Deref(ref); w.ws.has(n, m) {
				w.note(m.root, m.logicalOf(path))
				w.dropSubtree(m, n)
			}
		case mountAncestor:
			err = w.recheck(m)
		case mountGuard:
			for _, t := range m.guardedThrough(path, "") {
				if t.state == mountTree {
					if err := w.checkMount(t, true); limitReached(err) {
						w.limited(t, err, true)
					}
				}
			}
		}
		if limitReached(err) {
			w.limited(m, err, true)
		}
	}
	for _, m := range owners {
		n := w.ws.tree.Deref(ref)
		if n == none {
			return
		}
		if m.state == mountTree {
			w.dropSubtree(m, n)
		} else {
			w.dropOwner(m, n)
		}
	}
}

// dropOwner removes m from n's owners, and the kernel watch with the last
// owner.
func (w *Watcher) dropOwner(m *mount, n dirtree.Node) {
	if !w.ws.has(n, m) {
		return
	}
	left := w.ws.removeOwner(n, m)
	m.nodes--
	m.root.dirty = true
	if left {
		return
	}
	dir := w.ws.path(n)
	w.ws.release(n)
	// The kernel drops the watch of a deleted directory by itself, so
	// failures here (no such watch) are expected.
	if err := w.fsw.Remove(dir); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) {
		w.log.Debug("watcher: remove watch", "dir", dir, "err", err)
	}
}

// dropSubtree removes m from n and from every directory below it that m
// watches through watched directories.
func (w *Watcher) dropSubtree(m *mount, n dirtree.Node) {
	// Dropping below n frees entries below n only (n is held, or has
	// children, until the end), and adds none: the children stay valid.
	for _, c := range w.ws.tree.AppendChildren(nil, n) {
		if w.ws.has(c, m) {
			w.dropSubtree(m, c)
		}
	}
	w.dropOwner(m, n)
}
