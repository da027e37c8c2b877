package discovery

import "strings"

// Checker computes the cross-reference diagnostics of successive sets,
// recomputing only what a change can affect: the collections that are new
// or were reloaded (a reloaded collection is a new value), and those whose
// references name a collection, or a bare agent, that came, went or
// changed. Everything else is taken from the previous set.
//
// A Checker is for one goroutine at a time; the sets it checks are not
// modified.
type Checker struct {
	diags map[*Collection][]Diagnostic
	deps  map[*Collection][]string
	prev  map[*Collection]bool
	// last is the previous set.
	last *Set
	// Rechecked counts the collections the last Check computed afresh.
	Rechecked int
}

// Check returns every cross-reference diagnostic of s, as s.Check does.
func (k *Checker) Check(s *Set) []Diagnostic {
	if k.diags == nil {
		k.diags, k.deps, k.prev = map[*Collection][]Diagnostic{}, map[*Collection][]string{}, map[*Collection]bool{}
	}
	cur := make(map[*Collection]bool, s.Len())
	for _, c := range s.Collections() {
		cur[c] = true
	}
	// What changed: collections that left or arrived, by name and by the
	// bare agent names they hold.
	touched := map[string]bool{}
	mark := func(c *Collection) {
		touched[c.Name] = true
		touched[dirName(c.Dir)] = true
		if k.last == nil || (k.last.Lookup(c.Name) == nil) != (s.Lookup(c.Name) == nil) {
			touched[NamesDep] = true
		}
		// A bare agent name changes meaning only when the collection it
		// resolves to (the first winner holding it) is another one.
		for _, r := range c.Resources {
			if r.Kind != KindAgent {
				continue
			}
			was, is := (*Collection)(nil), s.agentCollection(r.Name)
			if k.last != nil {
				was = k.last.agentCollection(r.Name)
			}
			if k.last == nil || was != is {
				touched[AgentDep+r.Name] = true
			}
			if k.last == nil || (was == nil) != (is == nil) {
				touched[AnyAgentDep] = true
			}
		}
	}
	for c := range k.prev {
		if !cur[c] {
			mark(c)
			delete(k.diags, c)
			delete(k.deps, c)
		}
	}
	for c := range cur {
		if !k.prev[c] {
			mark(c)
		}
	}
	k.Rechecked = 0
	var out []Diagnostic
	for _, c := range s.Collections() {
		ds, ok := k.diags[c]
		if !ok || dependsOn(k.deps[c], touched) {
			ds = s.CheckCollection(c)
			k.diags[c] = ds
			k.deps[c] = s.RefNames(c)
			k.Rechecked++
		}
		out = append(out, ds...)
	}
	k.prev, k.last = cur, s
	return append(out, s.shadowDiagnostics()...)
}

// AgentDep prefixes a bare agent name among a collection's dependencies
// (see RefNames).
const AgentDep = "agent:"

// Dependencies that no one name stands for (see RefNames). A reference
// that does not resolve suggests the nearest name that does, so its
// message changes when any name starts or stops resolving.
const (
	// NamesDep is the set of collection names that resolve: a
	// collection with a collection reference that does not resolve
	// depends on it. SetDelta.Names holds it when that set changed.
	NamesDep = "\x00names"
	// AnyAgentDep is the set of bare agent names that resolve: a
	// collection with a bare agent name that does not resolve depends on
	// it. SetDelta.Agents holds anyAgent when that set changed.
	AnyAgentDep = AgentDep + anyAgent
	anyAgent    = "\x00any"
)

func dependsOn(deps []string, touched map[string]bool) bool {
	for _, d := range deps {
		if touched[d] {
			return true
		}
	}
	return false
}

func dirName(dir string) string {
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		return dir[i+1:]
	}
	return dir
}

// RefNames returns what c's cross-references depend on: the collections
// its extends chains pass through (and the one each stops
// at), the collections its mentions, qualified agent names and requires
// name (its own name included: another collection of that name may win),
// and its bare agent names (prefixed with AgentDep); NamesDep when one of
// its collection references does not resolve, and AnyAgentDep when one of
// its bare agent names does not (their messages suggest near names). When
// none of these resolves differently, c's cross-reference diagnostics stay
// as they are.
func (s *Set) RefNames(c *Collection) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	// addColl adds a collection name, and NamesDep when it resolves to
	// none.
	addColl := func(n string) {
		add(n)
		if !seen[NamesDep] && s.Lookup(n) == nil {
			add(NamesDep)
		}
	}
	for _, res := range c.Resources {
		f := c.Facts[res.Path]
		if f == nil {
			continue
		}
		if f.Extends != nil {
			for _, p := range s.Chain(ProfileRef{Collection: c, Path: res.Path}) {
				add(p.Collection.Name)
				if pf := p.Collection.Facts[p.Path]; pf != nil && pf.Extends != nil {
					if coll, _, ok := strings.Cut(pf.Extends.Value, ":"); ok {
						addColl(coll)
					}
				}
			}
		}
		for _, a := range f.Agents {
			if coll, _, ok := strings.Cut(a.Value, ":"); ok {
				addColl(coll)
			} else {
				add(AgentDep + a.Value)
				if _, _, ok := s.ResolveAgent(a.Value, c); !ok {
					add(AnyAgentDep)
				}
			}
		}
		for _, m := range f.Mentions {
			addColl(m.Collection)
		}
	}
	if c.Metadata != nil {
		for _, r := range c.Metadata.Requires {
			addColl(r.Name)
		}
	}
	return out
}
