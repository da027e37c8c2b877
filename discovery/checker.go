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
		// A bare agent name changes meaning only when the collection it
		// resolves to (the first winner holding it) is another one.
		for _, r := range c.Resources {
			if r.Kind == KindAgent && (k.last == nil || k.last.agentCollection(r.Name) != s.agentCollection(r.Name)) {
				touched[AgentDep+r.Name] = true
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
// and its bare agent names (prefixed with AgentDep). When none of these
// names resolves differently, c's cross-reference diagnostics stay as they
// are.
func (s *Set) RefNames(c *Collection) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
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
						add(coll)
					}
				}
			}
		}
		for _, a := range f.Agents {
			if coll, _, ok := strings.Cut(a.Value, ":"); ok {
				add(coll)
			} else {
				add(AgentDep + a.Value)
			}
		}
		for _, m := range f.Mentions {
			add(m.Collection)
		}
	}
	if c.Metadata != nil {
		for _, r := range c.Metadata.Requires {
			add(r.Name)
		}
	}
	return out
}
