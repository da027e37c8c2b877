package discovery

import "strings"

// AgentDep prefixes a bare agent name among a collection's dependencies
// (see RefNames).
const AgentDep = "agent:"

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
		for _, m := range mentionsOf(c, res.Path, f) {
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
