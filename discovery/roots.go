package discovery

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ProjectSearch is what FindProject found.
type ProjectSearch struct {
	// Dir is the project directory: the nearest ancestor of the working
	// directory (itself included) that holds a .amplifier directory the
	// user may trust, else the working directory itself. It is empty when
	// the search was refused (see Refused): there is no project then, and
	// the working directory may be the one holding the refused directory.
	Dir string
	// Refused is the .amplifier directory the search found but did not
	// take, because it, or the directory that holds it, belongs to another
	// user; empty when there is none. The search goes no higher than a
	// refused directory.
	Refused string
	// Owner is the user id that owns what made Refused untrusted (the
	// .amplifier directory, else the directory holding it); -1 when
	// Refused is empty.
	Owner int
}

// Warning returns the one-line message that says why a .amplifier
// directory was refused, or "" when none was.
func (s ProjectSearch) Warning() string {
	if s.Refused == "" {
		return ""
	}
	return fmt.Sprintf("ignoring %s: it belongs to user %d, not to you; no project is used", s.Refused, s.Owner)
}

// FindProject looks for the project of the working directory wd: the
// nearest ancestor (wd included) that holds a .amplifier directory, else
// wd itself. Like git's safe.directory, it does not trust what another
// user controls. Going up from wd, at each directory D:
//
//   - when D/.amplifier is a directory (or a link to one), it is the
//     project if D and D/.amplifier (the link and its target) belong to
//     the effective user; otherwise the search stops and reports it in
//     Refused, with no project;
//   - else, when D belongs to another user and anyone may write in it
//     (such as /tmp), the search stops there, with wd as the project: a
//     .amplifier above a directory where anyone can create one is not
//     looked for.
//
// Directories of other users that are not writable by all (/, /home) are
// passed through. Where the system keeps no owners (Windows), every
// directory counts as the user's.
func FindProject(wd string) ProjectSearch {
	return defaultFinder().find(wd)
}

// projectFinder is FindProject with the user and the way to tell owners
// given, so that tests can pretend a directory belongs to someone else.
type projectFinder struct {
	uid int
	// owner returns the user id that owns the file at path, described by
	// fi, and false when the system does not say.
	owner func(path string, fi fs.FileInfo) (int, bool)
}

func (f projectFinder) find(wd string) ProjectSearch {
	wd = filepath.Clean(wd)
	for dir := wd; ; {
		amp := filepath.Join(dir, ".amplifier")
		if ai, err := os.Stat(amp); err == nil && ai.IsDir() {
			if owner, bad := f.untrusted(amp); bad {
				return ProjectSearch{Refused: amp, Owner: owner}
			}
			return ProjectSearch{Dir: dir, Owner: -1}
		}
		if f.openToOthers(dir) {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ProjectSearch{Dir: wd, Owner: -1}
}

// Untrusted applies FindProject's rule to another file a search going up
// from a working directory finds (a project's configuration): it reports
// whether the file at path, or the directory holding it, belongs to
// another user than the effective one, and who owns it (the file: the
// link, else the file it leads to; else the directory). It reports -1
// and false when both are the user's, or where the system keeps no owners.
func Untrusted(path string) (owner int, untrusted bool) {
	return defaultFinder().untrusted(path)
}

// OpenToOthers reports whether dir belongs to another user and anyone may
// write in it (such as /tmp): a search going up stops there, as
// FindProject's does, for anyone could have put there what it would find
// above or in it. A directory that cannot be looked at is not.
func OpenToOthers(dir string) bool { return defaultFinder().openToOthers(dir) }

// defaultFinder is the rule of trust for the effective user.
func defaultFinder() projectFinder { return projectFinder{uid: os.Geteuid(), owner: fileOwner} }

// untrusted is Untrusted for f's user. A file that cannot be looked at
// is judged by its directory alone.
func (f projectFinder) untrusted(path string) (int, bool) {
	if fi, err := os.Stat(path); err == nil {
		if owner, bad := f.foreign(path, fi); bad {
			return owner, true
		}
	}
	if li, err := os.Lstat(path); err == nil {
		if owner, bad := f.foreign(path, li); bad {
			return owner, true
		}
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err == nil {
		return f.foreign(dir, fi)
	}
	return -1, false
}

// openToOthers is OpenToOthers for f's user.
func (f projectFinder) openToOthers(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	_, foreign := f.foreign(dir, fi)
	return foreign && fi.Mode().Perm()&0o002 != 0
}

// foreign reports whether the file at path belongs to another user than
// f's, and who owns it. A file whose owner is not known is the user's.
func (f projectFinder) foreign(path string, fi fs.FileInfo) (int, bool) {
	uid, ok := f.owner(path, fi)
	return uid, ok && uid != f.uid
}

// Roots returns the collection roots in precedence order: the project's
// .amplifier/collections, the user's ~/.amplifier/collections, then each
// bundled directory. Empty arguments are left out; none needs to exist. A
// directory named twice is kept once: a project in the home directory is
// the user root (labelled user, not project), and a bundled directory
// already named is left out.
func Roots(project, home string, bundled []string) []Root {
	var roots []Root
	seen := map[string]bool{}
	add := func(k RootKind, p string) {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			roots = append(roots, Root{Kind: k, Path: p})
		}
	}
	user := ""
	if home != "" {
		user = filepath.Clean(filepath.Join(home, ".amplifier", "collections"))
	}
	if project != "" {
		if p := filepath.Clean(filepath.Join(project, ".amplifier", "collections")); p != user {
			add(RootProject, p)
		}
	}
	if user != "" {
		add(RootUser, user)
	}
	for _, b := range bundled {
		if b != "" {
			add(RootBundled, b)
		}
	}
	return roots
}

// LockPath returns the lock file that belongs to a root: the
// collections.lock beside the collections directory of the project and user
// roots; bundled roots have none, nor do the collections named as
// arguments.
func LockPath(r Root) string {
	if r.Kind == RootBundled || r.Kind == RootArgument {
		return ""
	}
	return filepath.Join(filepath.Dir(r.Path), "collections.lock")
}

// SplitPathList splits a path list such as AMPLIDEX_BUNDLED on the
// operating system's list separator, dropping empty elements.
func SplitPathList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, string(os.PathListSeparator)) {
		if p != "" {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}
