package watcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// limitReached reports whether err means that a watch could not be added
// for want of a resource that more watches would only use up further: the
// kernel's watches (ENOSPC, as inotify says, or Options.MaxWatches), or file
// descriptors (see tooManyFiles); the root that needed the watch is
// polled. Or the tree holds more directories than it may (ErrTooLarge):
// the root, or the linked collection, is then neither watched nor polled.
func limitReached(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || tooManyFiles(err) || errors.Is(err, ErrTooLarge)
}

// tooManyFiles reports whether err means the process (EMFILE) or the
// system (ENFILE) is out of file descriptors. kqueue, which fsnotify uses on
// macOS and the BSDs, holds one open file per watched file and directory,
// against a default limit of 256 on macOS.
func tooManyFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// skipped reports whether a directory is never entered or watched.
func skipped(name string) bool {
	switch name {
	case ".git", "node_modules", "__pycache__", ".venv":
		return true
	}
	return false
}

// fileKey identifies a file: its device and inode numbers. The zero key
// means unknown.
type fileKey struct{ dev, ino uint64 }

// errSameDir is returned by addWatch when the directory is already watched
// under another path that still leads to it (a bind mount): one kernel
// watch cannot serve two paths.
var errSameDir = errors.New("same directory already watched under another path")

type mountState int

const (
	mountOff      mountState = iota // nothing watched
	mountTree                       // real and every directory below it are watched
	mountAncestor                   // real is missing; the nearest existing ancestor is watched
	mountGuard                      // the ancestors of a watched root are watched
	mountRefused                    // a link not followed (Options.FollowLink, or too large); real is where it leads
)

// A mount maps a real directory tree onto the paths reported for it: a
// root's own tree (logical is the root), or a collection linked into a root
// (logical is <root>/<link>, real is where the link resolves). Each root
// also has a guard mount, which watches the directories above the top of
// each of its trees, so that renaming one of them (which moves the tree
// without an event on its own watches) is noticed.
type mount struct {
	root    *root
	logical string
	link    bool

	state   mountState
	real    string  // resolved directory, when state is mountTree
	id      fileKey // identity of real
	dest    string  // the link's target as read, for link mounts
	anc     string  // the watched ancestor, when state is mountAncestor
	ancNext string  // the name in anc on the way to the target
	nodes   int     // watches this mount owns

	guarded []guardKey // where the root's guard watches the way to this tree

	// For a guard: watched directory → name in it → trees whose path
	// goes through that name.
	guards map[string]map[string]map[*mount]struct{}
}

// guardedThrough lists the trees a guard watches dir for: those under
// name in dir, or under every name when name is empty.
func (m *mount) guardedThrough(dir, name string) []*mount {
	var trees []*mount
	for n, ms := range m.guards[dir] {
		if name != "" && n != name {
			continue
		}
		for t := range ms {
			if !slices.Contains(trees, t) {
				trees = append(trees, t)
			}
		}
	}
	return trees
}

// guardKey is a name in a directory watched by a guard.
type guardKey struct{ dir, name string }

// logicalOf translates a path under m.real into the reported path.
func (m *mount) logicalOf(p string) string {
	if m.logical == m.real {
		// The same string, not an equal copy: a walk's paths live in its
		// chunks (see paths), and so do what a listener keeps of them.
		return p
	}
	if p == m.real {
		return m.logical
	}
	if isVolumeRoot(m.real) || isVolumeRoot(m.logical) {
		return filepath.Join(m.logical, strings.TrimPrefix(p, m.real))
	}
	return m.logical + p[len(m.real):]
}

// isVolumeRoot reports a clean path that ends in a separator: "/", or a
// volume root such as C:\ on Windows.
func isVolumeRoot(p string) bool { return p != "" && os.IsPathSeparator(p[len(p)-1]) }

// target is the path whose appearance a missing mount waits for.
func (m *mount) target() string {
	if !m.link {
		return m.root.path
	}
	if m.dest == "" {
		return ""
	}
	if filepath.IsAbs(m.dest) {
		return filepath.Clean(m.dest)
	}
	return filepath.Join(filepath.Dir(m.logical), m.dest)
}

// detachMount drops every watch of m.
func (w *Watcher) detachMount(m *mount) {
	switch m.state {
	case mountTree:
		w.unguard(m)
		if n := w.ws.watched(m.real); w.ws.has(n, m) {
			w.dropSubtree(m, n)
		}
		if m.nodes > 0 {
			// Not reachable from the top: sweep.
			for n := range w.ws.tree.All() {
				if w.ws.has(n, m) {
					w.dropOwner(m, n)
				}
			}
		}
	case mountAncestor:
		w.unwatchAncestor(m)
	case mountGuard:
		for dir := range m.guards {
			if n := w.ws.watched(dir); n != none {
				w.dropOwner(m, n)
			}
		}
		m.guards = nil
		for _, t := range m.root.mounts() {
			t.guarded = nil
		}
	}
	m.state = mountOff
	m.root.dirty = true
}

// detachRoot drops every watch of r and of the collections linked into it.
func (w *Watcher) detachRoot(r *root) {
	for name, m := range r.links {
		w.detachMount(m)
		delete(r.links, name)
	}
	w.detachMount(r.main)
	w.detachMount(r.guard)
}

// guard watches, through the root's guard, every directory above the top
// of m's tree, as resolved and as spelled, so that renaming or replacing
// one of them is noticed. Guards are best effort: one that cannot be added
// is left out.
func (w *Watcher) guard(m *mount) {
	g := m.root.guard
	g.state = mountGuard
	if g.guards == nil {
		g.guards = make(map[string]map[string]map[*mount]struct{})
	}
	add := func(dir, name string) {
		names := g.guards[dir]
		if names == nil {
			if _, err := w.addWatch(g, dir); err != nil {
				return
			}
			names = make(map[string]map[*mount]struct{})
			g.guards[dir] = names
		}
		if names[name] == nil {
			names[name] = make(map[*mount]struct{})
		}
		if _, ok := names[name][m]; !ok {
			names[name][m] = struct{}{}
			m.guarded = append(m.guarded, guardKey{dir, name})
		}
	}
	for p := m.real; filepath.Dir(p) != p; p = filepath.Dir(p) {
		add(filepath.Dir(p), filepath.Base(p))
	}
	spelled := m.target()
	if spelled == "" || spelled == m.real {
		return
	}
	for p := spelled; filepath.Dir(p) != p; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			add(real, filepath.Base(p))
		}
	}
}

// unguard undoes guard.
func (w *Watcher) unguard(m *mount) {
	g := m.root.guard
	for _, k := range m.guarded {
		names := g.guards[k.dir]
		delete(names[k.name], m)
		if len(names[k.name]) == 0 {
			delete(names, k.name)
		}
		if len(names) == 0 {
			delete(g.guards, k.dir)
			if n := w.ws.watched(k.dir); n != none {
				w.dropOwner(g, n)
			}
		}
	}
	m.guarded = nil
}

func (w *Watcher) unwatchAncestor(m *mount) {
	if m.state != mountAncestor {
		return
	}
	if n := w.ws.watched(m.anc); n != none {
		w.dropOwner(m, n)
	}
	m.state = mountOff
	m.anc, m.ancNext = "", ""
}

type dirStatus int

const (
	dirOK dirStatus = iota
	dirMissing
	dirNotDir // exists, not a directory
	dirBroken // a symlink loop, a permission error: nothing to wait for
)

// resolveDir resolves every symlink in p and reports whether the result is
// a directory.
func resolveDir(p string) (string, fs.FileInfo, dirStatus) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, dirMissing
		}
		return "", nil, dirBroken
	}
	fi, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, dirMissing
	case err != nil:
		return "", nil, dirBroken
	case !fi.IsDir():
		return "", nil, dirNotDir
	}
	return real, fi, dirOK
}

// nearestDir finds the nearest existing directory on the way up from
// target, its real path, and the name in it that leads to target.
func nearestDir(target string) (real, next string, ok bool) {
	for p := target; ; {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			// p may vanish meanwhile (rm -rf in progress): then look higher.
			if real, err := filepath.EvalSymlinks(p); err == nil {
				sep := string(filepath.Separator)
				rest := strings.TrimLeft(strings.TrimPrefix(target, p), sep)
				next, _, _ = strings.Cut(rest, sep)
				return real, next, true
			}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", "", false
		}
		p = parent
	}
}

// maxAttachTries bounds attach's retries when the target keeps appearing
// and vanishing while its ancestor watch is being moved.
const maxAttachTries = 16

// attach watches m's tree when its directory exists, else the nearest
// existing ancestor of where it will appear. With report set, every path
// found in the tree is noted as changed. It returns an error only when a
// limit was reached (see limitReached).
func (w *Watcher) attach(m *mount, report bool) error {
	if m.link {
		m.dest, _ = os.Readlink(m.logical)
	}
	for range maxAttachTries {
		real, fi, st := resolveDir(m.logical)
		switch st {
		case dirOK:
			w.unwatchAncestor(m)
			m.real = real
			m.id = keyOf(fi)
			if m.link && w.opts.FollowLink != nil {
				if err := w.opts.FollowLink(m.logical, real); err != nil {
					w.refuseLink(m, err)
					return nil
				}
			}
			m.state = mountTree
			m.root.dirty = true
			if err := w.watchTree(m, real, report); err != nil {
				return err
			}
			w.guard(m)
			return nil
		case dirMissing, dirNotDir:
			if st == dirNotDir && m.link {
				// A link to a file: syncLink notices when the link changes.
				w.unwatchAncestor(m)
				return nil
			}
			target := m.target()
			if target == "" {
				w.unwatchAncestor(m)
				return nil
			}
			anc, next, ok := nearestDir(target)
			if !ok {
				w.unwatchAncestor(m)
				return nil
			}
			if m.state == mountAncestor && m.anc == anc && m.ancNext == next {
				return nil
			}
			w.unwatchAncestor(m)
			if _, err := w.addWatch(m, anc); err != nil {
				if limitReached(err) {
					return err
				}
				if vanished(err) {
					continue // removed meanwhile (rm -rf in progress): look again
				}
				w.warn(m.root, fmt.Sprintf("cannot watch %s: %v", anc, unwrapPathError(err)))
				return nil
			}
			m.state, m.anc, m.ancNext = mountAncestor, anc, next
			m.root.dirty = true
			// The target may have appeared before the watch was in place:
			// look again.
		default:
			w.unwatchAncestor(m)
			return nil
		}
	}
	if m.state == mountOff {
		w.warn(m.root, fmt.Sprintf("stopped following %s: it keeps appearing and vanishing", m.logical))
	}
	return nil
}

// watchTree watches top and every directory below it for m, noting each
// path found when report is set. At the top of a root's own tree it also
// attaches the collections linked into the root.
func (w *Watcher) watchTree(m *mount, top string, report bool) error {
	r := m.root
	var links []string
	// watch adds the watches of dirs, in order, and keeps those watched;
	// stop says the walk must end.
	watch := func(dirs []string) (kept []string, stop bool, err error) {
		for _, dir := range dirs {
			if w.stopped() || m.state != mountTree {
				return nil, true, nil // closing, or a move handled on the way gave up the tree
			}
			if _, err := w.addWatch(m, dir); err != nil {
				if limitReached(err) {
					return nil, true, err
				}
				if !vanished(err) {
					w.warn(r, fmt.Sprintf("cannot watch %s: %v", dir, unwrapPathError(err)))
				}
				continue
			}
			kept = append(kept, dir)
		}
		return kept, false, nil
	}
	if kept, stop, err := watch([]string{top}); stop || len(kept) == 0 {
		return err
	}
	walk := &aheadWalk{list: readDirUnsorted, helpers: walkHelpers()}
	if w.opts.OnListing != nil {
		// A listener follows the walk in name order (see OnListing).
		walk.list = listSorted
		walk.deliver = func(dir string, entries []fs.DirEntry) {
			w.opts.OnListing(r.path, m.logicalOf(dir), entries)
		}
	} else {
		walk.deliver = func(string, []fs.DirEntry) {}
	}
	walk.expand = func(dir string, entries []fs.DirEntry) ([]string, bool, error) {
		var found []string
		for _, e := range entries {
			name := e.Name()
			var p string // made only when needed: most entries are files
			if report {
				p = joinPath(dir, name)
				w.note(r, m.logicalOf(p))
			}
			switch {
			case e.IsDir():
				if skipped(name) {
					break
				}
				if p == "" {
					p = w.paths.join(dir, name)
				}
				if p != w.syncDir {
					found = append(found, p)
				}
			case e.Type()&fs.ModeSymlink != 0 && m == r.main && dir == m.real:
				links = append(links, name)
			}
		}
		// Listed only once their watches are in place (see
		// Options.OnListing).
		return watch(found)
	}
	if complete, err := walk.run(top); !complete {
		return err
	}
	for _, name := range links {
		if err := w.syncLink(r, name, report); err != nil {
			return err
		}
	}
	return nil
}

// vanished reports whether err means the path is gone (or was replaced by
// a file), which a later event reports anyway.
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// syncLink brings the link mount for name, directly in r, in line with what
// is on disk: attached when name is a symlink, gone otherwise.
func (w *Watcher) syncLink(r *root, name string, report bool) error {
	logical := filepath.Join(r.path, name)
	fi, err := os.Lstat(logical)
	isLink := err == nil && fi.Mode()&fs.ModeSymlink != 0
	old := r.links[name]
	if old != nil {
		if isLink && w.linkUnchanged(old) {
			return nil
		}
		w.detachMount(old)
		delete(r.links, name)
	}
	if !isLink {
		return nil
	}
	m := &mount{root: r, logical: logical, link: true}
	r.links[name] = m
	r.dirty = true
	err = w.attach(m, report)
	if errors.Is(err, ErrTooLarge) {
		w.refuseLink(m, err)
		return nil
	}
	return err
}

// refuseLink stops following the linked collection m, for the reason err
// gives: nothing below where it leads is watched. The link itself is
// still seen to change, as an entry of the root.
func (w *Watcher) refuseLink(m *mount, err error) {
	w.detachMount(m)
	m.state = mountRefused
	m.root.dirty = true
	w.warn(m.root, fmt.Sprintf("collection link %s → %s not followed: %v", filepath.Base(m.logical), m.real, unwrapPathError(err)))
}

// linkUnchanged reports whether the link mount m still matches its link.
func (w *Watcher) linkUnchanged(m *mount) bool {
	dest, err := os.Readlink(m.logical)
	if err != nil || dest != m.dest {
		return false
	}
	switch m.state {
	case mountTree, mountRefused:
		real, fi, st := resolveDir(m.logical)
		if st != dirOK || real != m.real {
			return false
		}
		return keyOf(fi) == m.id
	case mountAncestor:
		_, _, st := resolveDir(m.logical)
		return st == dirMissing
	default:
		_, _, st := resolveDir(m.logical)
		return st != dirOK && st != dirMissing
	}
}
