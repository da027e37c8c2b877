package resolve

import (
	"strings"

	"github.com/amplidex/amplidex/discovery"
)

// AgentDep prefixes a bare agent name among a collection's dependencies
// (see RefNames).
const AgentDep = "agent:"

// Dependencies that no one name stands for (see RefNames). A reference
// that does not resolve suggests the nearest name that does, so its
// message changes when any name starts or stops resolving.
const (
	// NamesDep is the set of collection names that resolve: a
	// collection with a collection reference that does not resolve
	// depends on it. resolve.Delta.Names holds it when that set changed.
	NamesDep = "\x00names"
	// AnyAgentDep is the set of bare agent names that resolve: a
	// collection with a bare agent name that does not resolve depends on
	// it. resolve.Delta.Agents holds anyAgent when that set changed.
	AnyAgentDep = AgentDep + anyAgent
	anyAgent    = "\x00any"
)

// RefNames returns what c's cross-references depend on: the collections
// its extends chains pass through (and the one each stops
// at), the collections its mentions, qualified agent names and requires
// name (its own name included: another collection of that name may win),
// and its bare agent names (prefixed with AgentDep); NamesDep when one of
// its collection references does not resolve, and AnyAgentDep when one of
// its bare agent names does not (their messages suggest near names). When
// none of these resolves differently, c's cross-reference diagnostics stay
// as they are. (Whether a name c requires resolves decides whether c's
// references into it are checked at all, and whether the version of the
// collection that does meets the constraint; both are questions about
// names listed here, and c's own requires change only when c does.)
func (s *Set) RefNames(c *discovery.Collection) []string { return s.refNames(c, mentionsOf) }

// refNames is RefNames, with the mentions of c's files from mentions.
func (s *Set) refNames(c *discovery.Collection, mentions mentionsFunc) []string {
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
