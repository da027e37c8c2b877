package check

import (
	"slices"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/lock"
	"github.com/amplidex/amplidex/discovery/resolve"
)

// Compose returns every diagnostic about the files of c over s: each
// file's own (c.OwnDiagnostics), cross, the cross-reference diagnostics
// of c as Collection gives them (a caller that keeps them from an earlier
// check passes those), and c's shadowing, with the suppression comments
// of c's files applied (discovery.Collection.Suppress), in no promised
// order. It is the one place the diagnostics of a collection's files are
// composed: a catalog View composes those of the files on disk with it,
// and the analysis engine those of a collection its buffers make, whose
// Facts hold the buffers' comments as typed.
func Compose(s *resolve.Set, c *discovery.Collection, cross []diag.Diagnostic) []diag.Diagnostic {
	out := c.OwnDiagnostics()
	out = append(out, cross...)
	out = append(out, Shadowed(s, c)...)
	return c.Suppress(out)
}

// Lock returns the diagnostics of the lock file at path of the root r of
// s, sorted: read, what reading it found (lock.Read's or lock.Parse's
// diagnostics), and, when l was read from a file that exists, what
// lock.Check finds against the collections s has in r. A lock file takes
// no suppression comments. It is the one place a lock file's diagnostics
// are composed, for a View's lock files and for a buffer of one alike.
func Lock(s *resolve.Set, r discovery.Root, path string, l *lock.File, read []diag.Diagnostic) []diag.Diagnostic {
	out := slices.Clone(read)
	if l.Exists() {
		var installed []lock.Installed
		for _, c := range s.InRoot(s.RootIndex(r)) {
			installed = append(installed, lock.Installed{Name: c.Name, Dir: c.Dir})
		}
		out = append(out, lock.Check(path, l, installed)...)
	}
	diag.Sort(out)
	return out
}
