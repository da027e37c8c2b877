package discovery

import (
	"os"
	"path/filepath"
	"strings"
)

// FindProject returns the project directory for the working directory wd:
// the nearest ancestor (wd included) that holds a .amplifier directory,
// else wd itself.
func FindProject(wd string) string {
	wd = filepath.Clean(wd)
	for dir := wd; ; {
		if fi, err := os.Stat(filepath.Join(dir, ".amplifier")); err == nil && fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd
		}
		dir = parent
	}
}

// Roots returns the collection roots in precedence order: the project's
// .amplifier/collections, the user's ~/.amplifier/collections, then each
// bundled directory. Empty arguments are left out; none needs to exist. A
// directory named twice (a project in the home directory) is kept once, at
// its highest precedence.
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
	if project != "" {
		add(RootProject, filepath.Join(project, ".amplifier", "collections"))
	}
	if home != "" {
		add(RootUser, filepath.Join(home, ".amplifier", "collections"))
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
// roots; bundled roots have none.
func LockPath(r Root) string {
	if r.Kind == RootBundled {
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
