package catalog

import (
	"github.com/amplidex/amplidex/discovery"
)

// WithArguments returns a View of a registered project in which the
// collections named on a command line come first, ahead of every root
// (their Root is of kind discovery.RootArgument), and the collections of
// the roots at the same directories are left out. It is how `check DIR`
// checks a working copy against the roots it will be installed beside.
// The View is not published; it is the caller's alone.
func (c *Catalog) WithArguments(project string, cols []*discovery.Collection) (*View, bool) {
	key := c.ProjectKey(project)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.projects[key] == nil {
		return nil, false
	}
	skip := map[string]bool{}
	var argRoots []discovery.Root
	byRoot := map[discovery.Root][]*discovery.Collection{}
	for _, col := range cols {
		skip[col.Dir], skip[col.RealDir] = true, true
		if _, ok := byRoot[col.Root]; !ok {
			argRoots = append(argRoots, col.Root)
		}
		byRoot[col.Root] = append(byRoot[col.Root], col)
	}
	roots := append(argRoots, c.rootsOf(key)...)
	groups := make([][]*discovery.Collection, len(roots))
	for i, r := range roots {
		if i < len(argRoots) {
			groups[i] = byRoot[r]
			continue
		}
		if rs := c.roots[r.Path]; rs != nil {
			for _, e := range rs.cols {
				if e.c != nil && !skip[e.c.Dir] && !skip[e.c.RealDir] {
					groups[i] = append(groups[i], e.c)
				}
			}
		}
	}
	return c.viewOf(key, roots, groups), true
}
