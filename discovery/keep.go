package discovery

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// A collection that a daemon keeps for its whole life holds, per file, a
// brief Facts, its strings (names, descriptions, references), a Resource
// and its path; loaded one file at a time among the garbage of parsing,
// these would end up as hundreds of small objects scattered over memory
// that the scan mostly freed. Keep gives what one collection keeps a few
// objects of its own, sized to fit: one slice of its brief Facts, one of
// their agent references, and one string holding all their text, paths
// and blocks (see Facts.ProfileBlocks) and the collection's own name,
// version and directories (every kept string is a part of it). What was
// kept before becomes garbage at once.
//
// # Invariants
//
//   - Only a collection's brief Facts are moved, and every one is its
//     own: no Facts value is shared between files or collections.
//   - Every kept string is a part of one string, and every kept slice a
//     part of one slice, all made for the one collection: it keeps them
//     alive together, and drops them together when it is read again.
//   - Values are equal to what they were: keeping changes where they
//     live, never what they say.

// text gathers the strings one collection keeps into one string: each
// string kept is a part of it. Its size is reserved first, so that every
// part is cut from one allocation.
type text struct {
	b strings.Builder
}

// keep returns a copy of s that is a part of the text.
func (t *text) keep(s string) string {
	if s == "" {
		return ""
	}
	start := t.b.Len()
	t.b.WriteString(s)
	return t.b.String()[start:]
}

// Keep returns a copy of c, a collection loaded with brief Facts (see
// Loader.Details) that no other code has seen yet, whose values are moved
// into a few objects of its own (see above); c is garbage afterwards. A
// reader of many collections at once keeps them once it has read them
// all, so that what they keep for their life is made together, not among
// the garbage of reading them.
func (c *Collection) Keep() *Collection {
	d := &Collection{}
	c.copyTo(d)
	own := [...]*string{&d.Name, &d.Version, &d.Description, &d.Problem, &d.Degraded}
	dirs := [...]*string{&d.Pyproject, &d.Base, &d.Dir, &d.RealDir}
	// The collection's name, version and description are most often its
	// metadata's: the same strings are kept once.
	shared := func(int, string) bool { return false }
	if pf := c.Facts[c.Pyproject]; c.Metadata != nil && pf != nil && pf.brief && pf.Metadata == c.Metadata {
		m := c.Metadata
		shared = func(i int, s string) bool { return i < 3 && s == [...]string{m.Name, m.Version, m.Description}[i] }
	}
	// The size of the text, to the byte: each string as it will be kept.
	var n, refs, size int
	for i, p := range own {
		if !shared(i, *p) {
			size += len(*p)
		}
	}
	for i, p := range dirs {
		if !isPrefix(*p, dirs[:i]) {
			size += len(*p)
		}
	}
	for _, r := range c.Resources {
		size += len(r.Path)
		if !strings.Contains(r.Path, r.Name) {
			size += len(r.Name)
		}
		if !strings.HasSuffix(r.Path, r.Rel) {
			size += len(r.Rel)
		}
	}
	for p, f := range c.Facts {
		if p != c.Pyproject && !c.isResource(p) {
			size += len(p) // a package's copy of pyproject.toml
		}
		if f != nil && f.brief {
			n++
			refs += len(f.Agents)
			size += len(f.Name) + len(f.Description)
			for _, a := range f.Agents {
				size += len(a.Value)
			}
			if f.Extends != nil {
				refs++
				size += len(f.Extends.Value)
			}
			size += len(f.blocks)
			size += f.Metadata.size()
		}
	}
	var t text
	t.b.Grow(size)
	facts := make([]Facts, 0, n)
	var agents []syntax.Ref
	if refs > 0 {
		agents = make([]syntax.Ref, 0, refs)
	}
	d.Facts = make(map[string]*Facts, len(c.Facts))
	move := func(f *Facts) *Facts {
		if f == nil || !f.brief {
			return f
		}
		facts = append(facts, *f)
		g := &facts[len(facts)-1]
		g.Name, g.Description = t.keep(f.Name), t.keep(f.Description)
		g.Kind, g.AgentsMode = internKind(g.Kind), internMode(g.AgentsMode)
		if f.Extends != nil {
			agents = append(agents, syntax.Ref{Value: t.keep(f.Extends.Value), Range: f.Extends.Range})
			g.Extends = &agents[len(agents)-1]
		}
		if f.Agents != nil {
			start := len(agents)
			for _, a := range f.Agents {
				agents = append(agents, syntax.Ref{Value: t.keep(a.Value), Range: a.Range})
			}
			g.Agents = agents[start:len(agents):len(agents)]
		}
		g.blocks = t.keep(f.blocks)
		if f.Metadata != nil {
			m := f.Metadata.keep(&t)
			if c.Metadata == f.Metadata {
				d.Metadata = m
			}
			g.Metadata = m
		}
		return g
	}
	// Its paths, joined one by one, are most often prefixes of one another:
	// its pyproject.toml's, the resources' base, the directory and its real
	// path. Each is a part of one kept before when it can be.
	for i, p := range dirs {
		if *p == "" {
			continue
		}
		if j := slices.IndexFunc(dirs[:i], func(a *string) bool { return strings.HasPrefix(*a, *p) }); j >= 0 {
			*p = (*dirs[j])[:len(*p)]
			continue
		}
		*p = t.keep(*p)
	}
	// The collection's own strings, its metadata's when they are the same.
	if f, ok := c.Facts[c.Pyproject]; ok {
		d.Facts[d.Pyproject] = move(f)
	}
	for i, p := range own {
		if shared(i, *p) {
			*p = [...]string{d.Metadata.Name, d.Metadata.Version, d.Metadata.Description}[i]
			continue
		}
		*p = t.keep(*p)
	}
	// The resources, in a slice of their own size (the loader's grew by
	// appending), and their paths, each once: a resource's Name and Rel
	// are parts of its Path, and a file's key in Facts is its path.
	d.Resources = slices.Clip(slices.Clone(c.Resources))
	for i := range d.Resources {
		r := &d.Resources[i]
		path := t.keep(r.Path)
		if i := strings.LastIndex(path, r.Name); r.Name != "" && i >= 0 {
			r.Name = path[i : i+len(r.Name)]
		} else {
			r.Name = t.keep(r.Name)
		}
		if strings.HasSuffix(path, r.Rel) {
			r.Rel = path[len(path)-len(r.Rel):]
		} else {
			r.Rel = t.keep(r.Rel)
		}
		r.Path = path
		if f, ok := c.Facts[path]; ok {
			d.Facts[path] = move(f)
		}
	}
	for p, f := range c.Facts {
		if _, ok := d.Facts[p]; !ok {
			d.Facts[t.keep(p)] = move(f)
		}
	}
	return d
}

// isResource reports whether p is the path of one of c's resources.
func (c *Collection) isResource(p string) bool {
	if len(p) <= len(c.Base) || p[:len(c.Base)] != c.Base || p[len(c.Base)] != filepath.Separator {
		return false
	}
	r, ok := c.ResourceAt(filepath.ToSlash(p[len(c.Base)+1:]))
	return ok && r.Path == p
}

// isPrefix reports whether s is a prefix of one of the strings of ps.
func isPrefix(s string, ps []*string) bool {
	return slices.ContainsFunc(ps, func(p *string) bool { return strings.HasPrefix(*p, s) })
}

// size returns how many bytes of text m holds; 0 for nil.
func (m *Metadata) size() int {
	if m == nil {
		return 0
	}
	n := len(m.Name) + len(m.Version) + len(m.Description) + len(m.Author)
	for k, v := range m.URLs {
		n += len(k) + len(v)
	}
	for _, s := range m.Capabilities {
		n += len(s)
	}
	for _, r := range m.Requires {
		n += len(r.Name) + len(r.Constraint)
	}
	return n
}

// keep returns a copy of m whose strings are parts of t.
func (m *Metadata) keep(t *text) *Metadata {
	c := &Metadata{Name: t.keep(m.Name), Version: t.keep(m.Version), Description: t.keep(m.Description),
		Author: t.keep(m.Author)}
	if m.URLs != nil {
		c.URLs = make(map[string]string, len(m.URLs))
		for k, v := range m.URLs {
			c.URLs[t.keep(k)] = t.keep(v)
		}
	}
	if m.Capabilities != nil {
		c.Capabilities = make([]string, len(m.Capabilities))
		for i, s := range m.Capabilities {
			c.Capabilities[i] = t.keep(s)
		}
	}
	if m.Requires != nil {
		c.Requires = make([]Requirement, len(m.Requires))
		for i, r := range m.Requires {
			c.Requires[i] = Requirement{Name: t.keep(r.Name), Constraint: t.keep(r.Constraint), Range: r.Range}
		}
	}
	return c
}

// internKind returns the constant of a known kind, so that a kind decoded
// from the index holds no string of its own.
func internKind(k Kind) Kind {
	for _, known := range Kinds {
		if k == known {
			return known
		}
	}
	return k
}

// internMode returns the constant of a known agents mode.
func internMode(m string) string {
	for _, known := range []string{"all", "none", "list", "inline"} {
		if m == known {
			return known
		}
	}
	return m
}
