package catalog

import (
	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/internal/pmap"
	"github.com/amplidex/amplidex/discovery/resolve"
)

// Sets made without a View. A View is made when a project is registered:
// every document of its roots read and checked, seconds for a large one.
// Which collection wins a name needs less: the collections' metadata and
// listings. A Sketch is the Set of some roots made from that alone, by
// the catalog as a View's is made, so that an answer from it is the
// answer the View gives once it is published.

// Source gives the collections of one root, in any order, for a Sketch;
// false when it cannot tell what the root holds.
type Source func(discovery.Root) ([]*discovery.Collection, bool)

// newSet is where the catalog makes every Set it does not derive from
// another (resolve.Set.Apply): a View's, and a Sketch.
func newSet(roots []discovery.Root, cols [][]*discovery.Collection) *resolve.Set {
	return resolve.NewSet(roots, cols)
}

// Sketch returns the Set of roots, given in precedence order, each
// holding the collections from gives for it, and false when from fails
// for one. It is a Sketch with nothing held: for a caller that has no
// Catalog yet, such as a daemon answering from what its last run left
// before its first scan ends.
func Sketch(roots []discovery.Root, from Source) (*resolve.Set, bool) {
	cols := make([][]*discovery.Collection, len(roots))
	for i, r := range roots {
		cs, ok := from(r)
		if !ok {
			return nil, false
		}
		cols[i] = cs
	}
	return newSet(roots, cols), true
}

// Sketch returns the Set that a View over roots (given in precedence
// order) would hold now, without making the View: each root the catalog
// has listed holds the collections a View is built from, and every other
// root what from gives (ReadNames, say). It reports false when the last
// listing of a root the catalog holds failed, or when from fails. It takes
// the catalog's lock only to take what the roots hold; from is called
// outside it.
func (c *Catalog) Sketch(roots []discovery.Root, from Source) (*resolve.Set, bool) {
	held := make([]*pmap.Map[string, entry], len(roots))
	c.mu.Lock()
	for i, r := range roots {
		rs := c.roots[r.Path]
		if rs == nil || !rs.listed || rs.root != r {
			continue
		}
		if rs.failed != "" {
			c.mu.Unlock()
			return nil, false
		}
		cols := rs.cols
		held[i] = &cols
	}
	c.mu.Unlock()
	return Sketch(roots, func(r discovery.Root) ([]*discovery.Collection, bool) {
		i := indexOf(roots, r)
		if held[i] == nil {
			return from(r)
		}
		var out []*discovery.Collection
		for _, e := range held[i].All() {
			if e.c != nil {
				out = append(out, e.c)
			}
		}
		return out, true
	})
}

// indexOf returns the index of the first root of roots that is r.
func indexOf(roots []discovery.Root, r discovery.Root) int {
	for i := range roots {
		if roots[i] == r {
			return i
		}
	}
	return -1
}

// ReadNames is a Source: it reads the root names only (see
// discovery.Loader.NamesOnly) with the catalog's Loader, and so through
// its FileCache: the metadata it reads is the metadata a registration
// reads, and the registration that follows finds it in the cache. It
// reports false when the root cannot be listed, or a collection of it
// could be read only in part (the registration's retries decide what it
// holds then).
func (c *Catalog) ReadNames(r discovery.Root) ([]*discovery.Collection, bool) {
	c.mu.Lock()
	loader := c.namesLoader()
	c.mu.Unlock()
	_, sc, _ := c.read(loader, map[string]discovery.Root{r.Path: r}, nil, []string{r.Path}, nil)
	if len(sc) != 1 || sc[0].failed != "" {
		return nil, false
	}
	var out []*discovery.Collection
	for _, l := range sc[0].dirs {
		switch {
		case l.c == nil:
		case l.c.Degraded != "":
			return nil, false
		default:
			out = append(out, l.c)
		}
	}
	return out, true
}

// namesLoader returns the catalog's Loader reading names only, made once
// for each Loader the catalog is given. c.mu is held.
func (c *Catalog) namesLoader() *discovery.Loader {
	if c.names == nil || c.namesOf != c.loader {
		l := c.loader
		c.names = &discovery.Loader{Schema: l.Schema, Cache: l.Cache, ReadFile: l.ReadFile, ReadDir: l.ReadDir, Stat: l.Stat,
			OnRead: l.OnRead, MaxFileSize: l.MaxFileSize, RealPath: l.RealPath, Details: l.Details, Mentions: l.Mentions,
			NamesOnly: true}
		c.namesOf = l
	}
	return c.names
}
