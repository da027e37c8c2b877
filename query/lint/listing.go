package lint

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/amplidex/amplidex/discovery"
)

// listedNames are the names whose absence from a directory the policy
// needs to know: the project's configuration files and the markers that
// stop the search for them.
var listedNames = [...]string{"amplidex.toml", ".amplidex.toml", "pyproject.toml", ".git", ".amplifier"}

// nameSet is a set of listedNames, one bit each, in their order.
type nameSet uint8

// maybeAll is the nameSet of a directory that may hold any of the names.
const maybeAll = nameSet(1<<len(listedNames) - 1)

// listings remembers, of every directory a check's Loader listed, which
// of listedNames it may hold, so that the policy need not try to open or
// stat the others (a check asks about every directory that holds a
// file, and most hold none of them).
//
// A name is "may hold" when an entry equals it but for the case of ASCII
// letters, or when an entry holds a byte that is not ASCII: on a file
// system that folds case or normalizes names, those are the only entries
// an open of an ASCII name can find. Only "cannot hold" skips the system
// call: a name that may be there is looked up as before, so the answer
// is the same as without listings, but for a file created after its
// directory was listed.
//
// It also remembers the pyproject.toml files the Loader read that cannot
// be a project's configuration, not naming amplidex (see fileIn), so that
// they are not read again.
//
// And it remembers the real paths of the directories that hold
// collections, so that the real path of each collection needs one lstat
// rather than one for every directory above it (see realPath).
//
// It is safe for concurrent use: the Loader lists directories and reads
// files on several goroutines.
type listings struct {
	mu    sync.Mutex         // guards fields below
	names map[string]nameSet // by directory, as the Loader named it
	plain map[string]bool    // pyproject.toml files that do not name amplidex
	real  discovery.RealParents
}

func newListings() *listings {
	return &listings{names: map[string]nameSet{}, plain: map[string]bool{}}
}

// tune makes l see what Loader lists and reads, and resolve the real
// paths of its collections.
func (l *listings) tune(loader *discovery.Loader) {
	loader.ReadDir = l.readDir
	loader.OnRead = l.onRead
	loader.RealPath = l.realPath
}

// realPath returns what filepath.EvalSymlinks(dir) does, for an absolute
// clean dir. When dir is no symbolic link, that is the real path of its
// parent, remembered, and its name: the parent is resolved once for all
// its collections. On Windows, whose real paths also normalize each
// name's case, every path is resolved whole.
func (l *listings) realPath(dir string) (string, error) {
	parent, name := filepath.Split(dir)
	parent = filepath.Clean(parent)
	if runtime.GOOS == "windows" || name == "" || parent == dir || !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return filepath.EvalSymlinks(dir)
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		return filepath.EvalSymlinks(dir)
	}
	return l.real.Below(dir)
}

// onRead remembers a pyproject.toml that a project's configuration
// cannot be: one that does not name amplidex, and that the policy could
// read (a larger one is an error there).
func (l *listings) onRead(path string, src []byte) {
	if filepath.Base(path) != "pyproject.toml" || int64(len(src)) > configLimit("pyproject.toml") || bytes.Contains(src, []byte("amplidex")) {
		return
	}
	l.mu.Lock()
	l.plain[path] = true
	l.mu.Unlock()
}

// plainPyproject reports whether path is a pyproject.toml that was read
// and does not name amplidex. A nil listings knows none.
func (l *listings) plainPyproject(path string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.plain[path]
}

// readDir lists dir as os.ReadDir does, remembering what it holds when
// the listing is whole.
func (l *listings) readDir(dir string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return entries, err
	}
	var set nameSet
	for _, e := range entries {
		set |= mayBe(e.Name())
		if set == maybeAll {
			break
		}
	}
	l.mu.Lock()
	l.names[dir] = set
	l.mu.Unlock()
	return entries, nil
}

// namesIn returns the names of listedNames that dir may hold: all of
// them unless dir was listed, else those an open could find among its
// entries. A nil listings knows nothing.
func (l *listings) namesIn(dir string) nameSet {
	if l == nil {
		return maybeAll
	}
	l.mu.Lock()
	set, ok := l.names[dir]
	l.mu.Unlock()
	if !ok {
		return maybeAll
	}
	return set
}

// mayHold reports whether dir may hold name, one of listedNames (see
// namesIn).
func (l *listings) mayHold(dir, name string) bool { return l.namesIn(dir).has(name) }

// has reports whether s holds name; true for a name not in listedNames.
func (s nameSet) has(name string) bool {
	for i, n := range listedNames {
		if n == name {
			return s&(1<<i) != 0
		}
	}
	return true
}

// mayBe returns the names of listedNames that an entry called entry may
// be found as.
func mayBe(entry string) nameSet {
	var set nameSet
	for i := 0; i < len(entry); i++ {
		if entry[i] >= 0x80 {
			return maybeAll
		}
	}
	for i, n := range listedNames {
		if equalFoldASCII(entry, n) {
			set |= 1 << i
		}
	}
	return set
}

// equalFoldASCII reports whether a and b are equal but for the case of
// ASCII letters.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
