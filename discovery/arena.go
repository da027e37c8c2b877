package discovery

import (
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// A collection that a daemon keeps for its whole life holds, per file, a
// brief Facts, its strings (names, descriptions, references), a Resource
// and its path; loaded one file at a time among the garbage of parsing,
// these end up as hundreds of small objects scattered over memory that the
// scan mostly freed. compact moves what one collection keeps into a few
// objects sized to fit: one slice of its brief Facts, one of their agent
// references, one string holding all their text and paths and the
// collection's own name, version and directories (every kept string is a
// substring of it), and one byte slice for the blocks of its profiles. What was kept before becomes garbage at once.
//
// # Invariants
//
//   - Only brief Facts are compacted, and only a collection's own: the
//     shared ones of files that say nothing (see plainBrief) stay shared.
//   - Every string compact moves is a substring of one string, and every
//     slice a subslice of one slice, all made for the one collection: it
//     keeps them alive together, and drops them together when it is read
//     again.
//   - Values are equal to what they were: compacting changes where they
//     live, never what they say.

// Slab hands out, from chunks of slabChunk bytes or more, the memory of
// the collections a scan compacts: chunks that large have spans of their
// own, so what the scan keeps never shares a span with what it throws
// away, and is not left scattered over half-empty spans once the garbage
// is collected. A daemon sets one on its Loader for its first scan. A
// chunk lives while one collection of it does: collections read again
// later take their memory as any other value, and what they held of a
// chunk stays until the chunk's last collection goes. Safe for
// concurrent use.
type Slab struct {
	mu    sync.Mutex // guards fields below
	facts []Facts
	refs  []Ref
	metas []Metadata
	cols  []Collection
	res   []Resource
	strs  []string
	reqs  []Requirement
	text  []byte
	// scratch holds the working buffers of arenas that sealed, for the
	// next collection's arena: what an arena gathers is copied into the
	// slab's chunks when it seals, and its buffers would otherwise be
	// garbage, one pair for every collection of the scan.
	scratch []arenaScratch
}

// arenaScratch is an arena's working buffers, empty.
type arenaScratch struct {
	buf    []byte
	fixups []fixup
}

// getScratch returns working buffers for an arena, with room for n bytes
// of text.
func (s *Slab) getScratch(n int) arenaScratch {
	s.mu.Lock()
	var sc arenaScratch
	if k := len(s.scratch); k > 0 {
		sc = s.scratch[k-1]
		s.scratch = s.scratch[:k-1]
	}
	s.mu.Unlock()
	if cap(sc.buf) < n {
		sc.buf = make([]byte, 0, n)
	}
	return sc
}

// putScratch takes back an arena's working buffers once it sealed.
func (s *Slab) putScratch(sc arenaScratch) {
	clear(sc.fixups) // they point into collections: keep none alive
	sc.buf, sc.fixups = sc.buf[:0], sc.fixups[:0]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scratch = append(s.scratch, sc)
}

// slabChunk is the least a chunk of a Slab holds.
const slabChunk = 64 << 10

// chunkOf returns room for n more values of chunk, from it, or from a new
// chunk of at least slabChunk bytes when it has none left.
func chunkOf[T any](chunk *[]T, n int) []T {
	if cap(*chunk)-len(*chunk) < n {
		var zero T
		*chunk = make([]T, 0, max(n, slabChunk/int(max(unsafe.Sizeof(zero), 1))))
	}
	start := len(*chunk)
	*chunk = (*chunk)[:start+n]
	return (*chunk)[start : start : start+n]
}

// take returns room for n more values from one of the slab's chunks (see
// chunkOf).
func take[T any](s *Slab, chunk *[]T, n int) []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return chunkOf(chunk, n)
}

// takeOne returns one zero value from one of the slab's chunks.
func takeOne[T any](s *Slab, chunk *[]T) *T { return &take(s, chunk, 1)[:1][0] }

// arena gathers the strings a collection keeps, for one string to hold
// them all.
type arena struct {
	buf    []byte
	fixups []fixup
	// slab, when set, gives the string its memory (see Slab); else it is
	// a string of its own.
	slab *Slab
	// then runs once the strings are in place: for what cannot point at
	// them before, the keys and values of a map.
	then []func()
}

// fixup is a kept string: where it goes, and where it is in arena.buf.
type fixup struct {
	dst      *string
	off, end int
}

// str records that *p is to be a substring of the arena's string, and
// returns where it starts in it.
func (a *arena) str(p *string) int {
	off := len(a.buf)
	if *p == "" {
		return off
	}
	a.buf = append(a.buf, *p...)
	a.fixups = append(a.fixups, fixup{dst: p, off: off, end: len(a.buf)})
	return off
}

// part records that *p, found at byte at of a string the arena holds from
// off, is to be that part of the arena's string.
func (a *arena) part(p *string, off, at int) {
	if *p != "" {
		a.fixups = append(a.fixups, fixup{dst: p, off: off + at, end: off + at + len(*p)})
	}
}

// seal makes the one string, points every recorded string into it, and
// runs what waited for them.
func (a *arena) seal() {
	defer func() {
		for _, f := range a.then {
			f()
		}
		a.then = nil
	}()
	if len(a.fixups) == 0 {
		if a.slab != nil {
			a.slab.putScratch(arenaScratch{buf: a.buf, fixups: a.fixups})
		}
		a.buf, a.fixups = nil, nil
		return
	}
	var all string
	if a.slab != nil {
		// The slab's bytes are written here once and never again: a
		// string may be made over them.
		b := append(take(a.slab, &a.slab.text, len(a.buf)), a.buf...)
		all = unsafe.String(unsafe.SliceData(b), len(b))
	} else {
		all = string(a.buf)
	}
	for _, f := range a.fixups {
		*f.dst = all[f.off:f.end]
	}
	if a.slab != nil {
		a.slab.putScratch(arenaScratch{buf: a.buf, fixups: a.fixups})
	}
	a.buf, a.fixups = nil, nil
}

// isPlainBrief reports one of the shared brief Facts of files that say
// nothing (see plainBrief).
func isPlainBrief(f *Facts) bool {
	if f.mentions < 0 || f.mentions > 1 {
		return false
	}
	for i := range plainBriefs {
		if f == &plainBriefs[i][f.mentions] {
			return true
		}
	}
	return false
}

// compact moves what c keeps into a few objects (see above), taken from
// slab when it is not nil, and returns the collection: c, or its copy in
// the slab. The Loader calls it for collections of brief Facts, once they
// are loaded whole, before any other code sees them.
func (c *Collection) compact(slab *Slab) *Collection {
	kept := func(f *Facts) bool { return f != nil && f.brief && !isPlainBrief(f) }
	own := []*string{&c.Name, &c.Version, &c.Description, &c.Problem, &c.Degraded}
	dirs := []*string{&c.Pyproject, &c.Base, &c.Dir, &c.RealDir}
	var n, refs, blocks, text int
	for _, p := range slices.Concat(own, dirs) {
		text += len(*p)
	}
	for p, f := range c.Facts {
		text += len(p)
		if kept(f) {
			n++
			refs += len(f.Agents)
			if f.Extends != nil {
				refs++
			}
			blocks += len(f.blocks)
			text += len(f.Name) + len(f.Description) + 64*len(f.Agents)
		}
	}
	a := arena{slab: slab}
	if slab != nil {
		sc := slab.getScratch(text + len(c.Pyproject))
		a.buf, a.fixups = sc.buf, sc.fixups
	} else {
		a.buf = make([]byte, 0, text+len(c.Pyproject))
	}
	var facts []Facts
	var agents []Ref
	if slab != nil {
		facts, agents = take(slab, &slab.facts, n), take(slab, &slab.refs, refs)
	} else {
		facts = make([]Facts, 0, n)
		if refs > 0 {
			agents = make([]Ref, 0, refs)
		}
	}
	var blockBuf []byte
	if blocks > 0 && slab != nil {
		// Written below once and never again, like the slab's text.
		blockBuf = take(slab, &slab.text, blocks)
	} else if blocks > 0 {
		blockBuf = make([]byte, 0, blocks)
	}
	moved := make(map[string]*Facts, len(c.Facts))
	for p, f := range c.Facts {
		if !kept(f) {
			moved[p] = f
			continue
		}
		facts = append(facts, *f)
		g := &facts[len(facts)-1]
		a.str(&g.Name)
		a.str(&g.Description)
		g.Kind, g.AgentsMode = internKind(g.Kind), internMode(g.AgentsMode)
		if f.Extends != nil {
			agents = append(agents, *f.Extends)
			g.Extends = &agents[len(agents)-1]
			a.str(&g.Extends.Value)
		}
		if f.Agents != nil {
			start := len(agents)
			agents = append(agents, f.Agents...)
			g.Agents = agents[start:len(agents):len(agents)]
			for i := range g.Agents {
				a.str(&g.Agents[i].Value)
			}
		}
		if f.blocks != nil {
			start := len(blockBuf)
			blockBuf = append(blockBuf, f.blocks...)
			g.blocks = blockBuf[start:len(blockBuf):len(blockBuf)]
		}
		if f.Metadata != nil {
			m := f.Metadata.compact(&a, slab)
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
		a.str(p)
	}
	// The resources, in a slice of their own size (the loader's grew by
	// appending), and their paths, each once: a resource's Name and Rel
	// are parts of its Path, and a file's key in Facts is its path.
	if slab != nil {
		c.Resources = append(take(slab, &slab.res, len(c.Resources)), c.Resources...)
	} else if cap(c.Resources) > len(c.Resources) {
		c.Resources = slices.Clip(slices.Clone(c.Resources))
	}
	keys := make(map[string]*string, len(c.Facts))
	for i := range c.Resources {
		r := &c.Resources[i]
		name, rel := strings.LastIndex(r.Path, r.Name), len(r.Path)-len(r.Rel)
		off := a.str(&r.Path)
		if r.Name != "" && name >= 0 {
			a.part(&r.Name, off, name)
		} else {
			a.str(&r.Name)
		}
		if rel >= 0 && r.Path[rel:] == r.Rel {
			a.part(&r.Rel, off, rel)
		} else {
			a.str(&r.Rel)
		}
		keys[r.Path] = &r.Path
	}
	// Its paths, joined one by one, are most often prefixes of one another:
	// its pyproject.toml's, the resources' base, the directory and its real
	// path. Each is a part of one written before when it can be.
	type written struct {
		s   string
		off int
	}
	var anchors []written
	for _, p := range dirs {
		if *p == "" {
			continue
		}
		if i := slices.IndexFunc(anchors, func(w written) bool { return strings.HasPrefix(w.s, *p) }); i >= 0 {
			a.part(p, anchors[i].off, 0)
			continue
		}
		anchors = append(anchors, written{*p, a.str(p)})
	}
	if c.Pyproject != "" {
		keys[c.Pyproject] = &c.Pyproject
	}
	others := make([]string, 0, len(moved))
	for p := range moved {
		if keys[p] == nil {
			others = append(others, p)
		}
	}
	for i := range others {
		keys[others[i]] = &others[i]
		a.str(&others[i])
	}
	// The keys point at the strings that seal will replace: take the
	// values (Facts) by the old key, put them under the new one after.
	type pair struct {
		key *string
		f   *Facts
	}
	pairs := make([]pair, 0, len(moved))
	for p, f := range moved {
		pairs = append(pairs, pair{keys[p], f})
	}
	a.seal()
	c.Facts = make(map[string]*Facts, len(pairs))
	for _, kv := range pairs {
		c.Facts[*kv.key] = kv.f
	}
	if slab == nil {
		return c
	}
	// The collection itself, made before its files were read, amid their
	// garbage.
	d := takeOne(slab, &slab.cols)
	c.copyTo(d)
	return d
}

// compact returns a copy of m whose strings the arena holds, itself from
// slab when it is not nil.
func (m *Metadata) compact(a *arena, slab *Slab) *Metadata {
	var c *Metadata
	if slab != nil {
		c = takeOne(slab, &slab.metas)
	} else {
		c = new(Metadata)
	}
	*c = *m
	a.str(&c.Name)
	a.str(&c.Version)
	a.str(&c.Description)
	a.str(&c.Author)
	if m.URLs != nil {
		// A map's keys and values cannot be pointed at: they go through a
		// list, and into the map once sealed.
		pairs := make([]string, 0, 2*len(m.URLs))
		for k, v := range m.URLs {
			pairs = append(pairs, k, v)
		}
		for i := range pairs {
			a.str(&pairs[i])
		}
		urls := make(map[string]string, len(m.URLs))
		c.URLs = urls
		a.then = append(a.then, func() {
			for i := 0; i < len(pairs); i += 2 {
				urls[pairs[i]] = pairs[i+1]
			}
		})
	}
	if len(m.Capabilities) > 0 {
		if slab != nil {
			c.Capabilities = append(take(slab, &slab.strs, len(m.Capabilities)), m.Capabilities...)
		} else {
			c.Capabilities = slices.Clone(m.Capabilities)
		}
		for i := range c.Capabilities {
			a.str(&c.Capabilities[i])
		}
	}
	if len(m.Requires) > 0 {
		if slab != nil {
			c.Requires = append(take(slab, &slab.reqs, len(m.Requires)), m.Requires...)
		} else {
			c.Requires = slices.Clone(m.Requires)
		}
		for i := range c.Requires {
			a.str(&c.Requires[i].Name)
			a.str(&c.Requires[i].Constraint)
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
