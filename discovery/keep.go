package discovery

import (
	"slices"
	"strings"
)

// A collection that a daemon keeps for its whole life holds, per file, a
// brief Facts, its strings (names, descriptions, references), a Resource
// and its path; loaded one file at a time among the garbage of parsing,
// these would end up as hundreds of small objects scattered over memory
// that the scan mostly freed. keep gives what one collection keeps a few
// objects of its own, sized to fit: one slice of its brief Facts, one of
// their agent references, one string holding all their text and paths
// and the collection's own name, version and directories (every kept
// string is a part of it), and one byte slice for the blocks of its
// profiles. What was kept before becomes garbage at once.
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

// keepBrief moves what c keeps into a few objects (see above) and returns
// c. The Loader calls it for collections of brief Facts, once they are
// loaded whole, before any other code sees them.
func (c *Collection) keepBrief() *Collection {
	own := []*string{&c.Name, &c.Version, &c.Description, &c.Problem, &c.Degraded}
	dirs := []*string{&c.Pyproject, &c.Base, &c.Dir, &c.RealDir}
	var n, refs, blocks, size int
	for _, p := range slices.Concat(own, dirs) {
		size += len(*p)
	}
	paths := make(map[string]bool, len(c.Resources)+1)
	paths[c.Pyproject] = true
	for _, r := range c.Resources {
		paths[r.Path] = true
		size += len(r.Path)
		if !strings.Contains(r.Path, r.Name) {
			size += len(r.Name)
		}
		if !strings.HasSuffix(r.Path, r.Rel) {
			size += len(r.Rel)
		}
	}
	for p, f := range c.Facts {
		if !paths[p] {
			size += len(p)
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
			blocks += len(f.blocks)
			size += f.Metadata.size()
		}
	}
	var t text
	t.b.Grow(size)
	facts := make([]Facts, 0, n)
	var agents []Ref
	if refs > 0 {
		agents = make([]Ref, 0, refs)
	}
	var blockBuf []byte
	if blocks > 0 {
		blockBuf = make([]byte, 0, blocks)
	}
	moved := make(map[string]*Facts, len(c.Facts))
	for p, f := range c.Facts {
		if f == nil || !f.brief {
			moved[p] = f
			continue
		}
		facts = append(facts, *f)
		g := &facts[len(facts)-1]
		g.Name, g.Description = t.keep(f.Name), t.keep(f.Description)
		g.Kind, g.AgentsMode = internKind(g.Kind), internMode(g.AgentsMode)
		if f.Extends != nil {
			agents = append(agents, Ref{Value: t.keep(f.Extends.Value), Range: f.Extends.Range})
			g.Extends = &agents[len(agents)-1]
		}
		if f.Agents != nil {
			start := len(agents)
			for _, a := range f.Agents {
				agents = append(agents, Ref{Value: t.keep(a.Value), Range: a.Range})
			}
			g.Agents = agents[start:len(agents):len(agents)]
		}
		if f.blocks != nil {
			start := len(blockBuf)
			blockBuf = append(blockBuf, f.blocks...)
			g.blocks = blockBuf[start:len(blockBuf):len(blockBuf)]
		}
		if f.Metadata != nil {
			m := f.Metadata.keep(&t)
			if c.Metadata == f.Metadata {
				c.Metadata = m
			}
			g.Metadata = m
		}
		moved[p] = g
	}
	// The collection's own strings: its name and version are its
	// metadata's, decoded or parsed each in an object of its own.
	for _, p := range own {
		*p = t.keep(*p)
	}
	// Its paths, joined one by one, are most often prefixes of one another:
	// its pyproject.toml's, the resources' base, the directory and its real
	// path. Each is a part of one kept before when it can be.
	var anchors []string
	for _, p := range dirs {
		if *p == "" {
			continue
		}
		if i := slices.IndexFunc(anchors, func(a string) bool { return strings.HasPrefix(a, *p) }); i >= 0 {
			*p = anchors[i][:len(*p)]
			continue
		}
		*p = t.keep(*p)
		anchors = append(anchors, *p)
	}
	// The resources, in a slice of their own size (the loader's grew by
	// appending), and their paths, each once: a resource's Name and Rel
	// are parts of its Path, and a file's key in Facts is its path.
	c.Resources = slices.Clip(slices.Clone(c.Resources))
	keys := make(map[string]string, len(c.Facts))
	if c.Pyproject != "" {
		keys[c.Pyproject] = c.Pyproject
	}
	for i := range c.Resources {
		r := &c.Resources[i]
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
		keys[path] = path
	}
	kept := make(map[string]*Facts, len(moved))
	for p, f := range moved {
		key, ok := keys[p]
		if !ok {
			key = t.keep(p)
		}
		kept[key] = f
	}
	c.Facts = kept
	return c
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
