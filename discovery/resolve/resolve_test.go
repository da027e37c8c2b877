package resolve_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/resolve"
)

// describe renders everything a Set answers about names, agents and
// owners, for comparing two sets.
func describe(s *resolve.Set, names, agents, paths []string) string {
	var b []byte
	dir := func(c *discovery.Collection) string {
		if c == nil {
			return "-"
		}
		return c.Dir
	}
	for _, c := range s.Collections() {
		b = fmt.Appendf(b, "col %s\n", c.Dir)
	}
	for _, c := range s.Winners() {
		b = fmt.Appendf(b, "win %s %s\n", c.Name, c.Dir)
	}
	for _, n := range names {
		r := s.Resolve(n)
		b = fmt.Appendf(b, "resolve %s: %s", n, dir(r.Winner))
		for _, c := range r.Shadowed {
			b = fmt.Appendf(b, " shadows %s", c.Dir)
		}
		for _, c := range r.Skipped {
			b = fmt.Appendf(b, " skips %s", c.Dir)
		}
		b = append(b, '\n')
	}
	for _, a := range agents {
		_, c, _ := s.ResolveAgent(a, nil)
		b = fmt.Appendf(b, "agent %s: %s\n", a, dir(c))
	}
	for _, p := range paths {
		b = fmt.Appendf(b, "owner %s: %s\n", p, dir(s.Owner(p)))
	}
	return string(b)
}

// TestSetApplyMatchesNewSet applies random changes to a Set and compares
// every answer with a Set built from scratch of the same collections.
func TestSetApplyMatchesNewSet(t *testing.T) {
	roots := []discovery.Root{{Kind: discovery.RootProject, Path: "/p"}, {Kind: discovery.RootUser, Path: "/u"}, {Kind: discovery.RootBundled, Path: "/b"}}
	names := []string{"alpha", "beta", "gamma", "delta"}
	agents := []string{"a1", "a2", "a3"}
	r := rand.New(rand.NewPCG(7, 9))
	gen := 0
	newCollection := func(root discovery.Root, dir string) *discovery.Collection {
		gen++
		c := &discovery.Collection{Name: names[r.IntN(len(names))], Root: root, Dir: dir, RealDir: dir, Base: dir,
			Layout: discovery.LayoutFlat, Valid: r.IntN(5) != 0, Version: fmt.Sprint(gen)}
		if r.IntN(3) == 0 {
			c.Layout = discovery.LayoutNested
			c.Base = dir + "/pkg"
		}
		if !c.Valid && r.IntN(2) == 0 {
			c.Name = dir[len(root.Path)+1:]
		}
		for _, a := range agents {
			if r.IntN(2) == 0 {
				c.Resources = append(c.Resources, discovery.Resource{Kind: discovery.KindAgent, Name: a, Path: c.Base + "/agents/" + a + ".md"})
			}
		}
		return c
	}
	cur := map[string]*discovery.Collection{} // by dir
	set := resolve.NewSet(roots, nil)
	var paths []string
	var allNames []string
	for _, root := range roots {
		for i := range 6 {
			dir := fmt.Sprintf("%s/d%d", root.Path, i)
			paths = append(paths, dir+"/pkg/agents/a1.md", dir+"/x")
			allNames = append(allNames, fmt.Sprintf("d%d", i))
		}
	}
	allNames = append(allNames, names...)
	for step := range 400 {
		var removed, added []*discovery.Collection
		touched := map[string]bool{}
		for range 1 + r.IntN(3) {
			root := roots[r.IntN(len(roots))]
			dir := fmt.Sprintf("%s/d%d", root.Path, r.IntN(6))
			if touched[dir] {
				continue
			}
			touched[dir] = true
			if old := cur[dir]; old != nil {
				removed = append(removed, old)
				delete(cur, dir)
			}
			if r.IntN(4) != 0 {
				c := newCollection(root, dir)
				added = append(added, c)
				cur[dir] = c
			}
		}
		set, _ = set.Apply(removed, added)
		cols := make([][]*discovery.Collection, len(roots))
		for i, root := range roots {
			for _, c := range cur {
				if c.Root == root {
					cols[i] = append(cols[i], c)
				}
			}
		}
		want := describe(resolve.NewSet(roots, cols), allNames, agents, paths)
		if got := describe(set, allNames, agents, paths); got != want {
			t.Fatalf("step %d: Apply gives\n%s\nNewSet gives\n%s", step, got, want)
		}
	}
}

// TestSetApplyDelta checks what Apply says changed.
func TestSetApplyDelta(t *testing.T) {
	user := discovery.Root{Kind: discovery.RootUser, Path: "/u"}
	mk := func(name, dir string, agents ...string) *discovery.Collection {
		c := &discovery.Collection{Name: name, Root: user, Dir: dir, RealDir: dir, Base: dir, Layout: discovery.LayoutFlat, Valid: true}
		for _, a := range agents {
			c.Resources = append(c.Resources, discovery.Resource{Kind: discovery.KindAgent, Name: a, Path: dir + "/agents/" + a + ".md"})
		}
		return c
	}
	a := mk("aa", "/u/aa", "helper")
	b := mk("bb", "/u/bb", "helper", "solo")
	set := resolve.NewSet([]discovery.Root{user}, [][]*discovery.Collection{{a, b}})
	anyAgent := strings.TrimPrefix(resolve.AnyAgentDep, resolve.AgentDep)
	// Replacing bb by a version without "solo" changes bb's candidates and
	// the resolution of the bare agent "solo", which resolves nowhere now
	// (the set of agent names that resolve changed), but not of "helper",
	// which aa (first in name order) keeps.
	b2 := mk("bb", "/u/bb", "helper")
	_, d := set.Apply([]*discovery.Collection{b}, []*discovery.Collection{b2})
	if !slices.Equal(d.Names, []string{"bb"}) || !slices.Equal(d.Agents, []string{anyAgent, "solo"}) {
		t.Fatalf("delta = %+v, want names [bb] agents [any solo]", d)
	}
	// Removing aa moves "helper" to bb; the name aa resolves nowhere now.
	_, d = set.Apply([]*discovery.Collection{a}, nil)
	if !slices.Equal(d.Names, []string{resolve.NamesDep, "aa"}) || !slices.Equal(d.Agents, []string{"helper"}) {
		t.Fatalf("delta = %+v, want names [names aa] agents [helper]", d)
	}
	// aa read again, the same collection in a new value: "helper" still
	// resolves to it, so nothing that names "helper" bare needs a new
	// check (with many collections naming it, a save would otherwise
	// check them all).
	a2 := mk("aa", "/u/aa", "helper")
	_, d = set.Apply([]*discovery.Collection{a}, []*discovery.Collection{a2})
	if !slices.Equal(d.Names, []string{"aa"}) || len(d.Agents) != 0 {
		t.Fatalf("delta = %+v, want names [aa] and no agents", d)
	}
}
