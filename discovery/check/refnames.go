package check

import (
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/resolve"
)

// RefNames returns what c's cross-references depend on: the collections
// its extends chains pass through (and the one each stops
// at), the collections its mentions, qualified agent names and requires
// name (its own name included: another collection of that name may win),
// and its bare agent names (prefixed with resolve.AgentDep); resolve.NamesDep when one of
// its collection references does not resolve, and resolve.AnyAgentDep when one of
// its bare agent names does not (their messages suggest near names). When
// none of these resolves differently, c's cross-reference diagnostics stay
// as they are. (Whether a name c requires resolves decides whether c's
// references into it are checked at all, and whether the version of the
// collection that does meets the constraint; both are questions about
// names listed here, and c's own requires change only when c does.)
func RefNames(s *resolve.Set, c *discovery.Collection) []string { return refNames(s, c, mentionsOf) }

// refNames is RefNames, with the mentions of c's files from mentions.
func refNames(s *resolve.Set, c *discovery.Collection, mentions mentionsFunc) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	// addColl adds a collection name, and resolve.NamesDep when it resolves to
	// none.
	addColl := func(n string) {
		add(n)
		if !seen[resolve.NamesDep] && s.Lookup(n) == nil {
			add(resolve.NamesDep)
		}
	}
	for _, res := range c.Resources {
		f := c.Facts[res.Path]
		if f == nil {
			continue
		}
		if f.Extends != nil {
			for _, p := range s.Chain(resolve.ProfileRef{Collection: c, Path: res.Path}) {
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
				add(resolve.AgentDep + a.Value)
				if _, _, ok := s.ResolveAgent(a.Value, c); !ok {
					add(resolve.AnyAgentDep)
				}
			}
		}
		for _, m := range mentions(c, res.Path, f) {
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
