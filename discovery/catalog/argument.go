package catalog

import (
	"github.com/amplidex/amplidex/discovery"
)

// WithArguments returns a View of a registered project in which the
// collections named on a command line come first, ahead of every root
// (their Root is of kind discovery.RootArgument), and the collections of
// the roots at the same directories are left out. It is how `check DIR`
// checks a working copy against the roots it will be installed beside,
// and how an editor's buffers in a working copy are checked. The View is
// not published; it is the caller's alone. It is derived from the
// project's published View, as a change is: it costs what the arguments
// change, takes no lock and reads nothing but the stats of mentions.
func (c *Catalog) WithArguments(project string, cols []*discovery.Collection) (*View, bool) {
	v, ok := c.State().View(c.ProjectKey(project))
	if !ok {
		return nil, false
	}
	return v.WithArguments(cols), true
}

// WithArguments returns v with cols ahead of every root, and without the
// collections of v's roots at the same directories (see
// Catalog.WithArguments). v is left as it is.
func (v *View) WithArguments(cols []*discovery.Collection) *View {
	if len(cols) == 0 {
		return v
	}
	var front []discovery.Root
	seen := map[discovery.Root]bool{}
	dirs := map[string]bool{}
	for _, col := range cols {
		if !seen[col.Root] {
			seen[col.Root] = true
			front = append(front, col.Root)
		}
		dirs[col.Dir], dirs[col.RealDir] = true, true
	}
	var removed []*discovery.Collection
	gone := map[*discovery.Collection]bool{}
	for d := range dirs {
		for _, rc := range v.Set.Holding(d) {
			if !gone[rc] && (dirs[rc.Dir] || dirs[rc.RealDir]) {
				gone[rc] = true
				removed = append(removed, rc)
			}
		}
	}
	set, sd := v.Set.WithFront(front).Apply(removed, cols)
	w, _ := v.derive(set, sd, removed, cols)
	return w
}
