package discovery_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/amplidex/amplidex/discovery"
)

// randomFront returns front matter that exercises what the session block
// merges and what can remove it: module entries with and without ids,
// other session keys, excludes of "all" or of lists, a session that is not
// a mapping, and module lists beside it.
func randomFront(r *rand.Rand) *discovery.Map {
	entry := func() any {
		switch r.IntN(4) {
		case 0:
			return "a string"
		case 1:
			return mapOf("config", mapOf("k", r.IntN(3)))
		}
		return mapOf("module", []string{"m1", "m2"}[r.IntN(2)], "config", mapOf(fmt.Sprint("k", r.IntN(3)), r.IntN(3)))
	}
	front := mapOf("profile", mapOf("name", "p"))
	switch r.IntN(6) {
	case 0:
	case 1:
		front.Set("session", []any{"odd"})
	default:
		session := &discovery.Map{}
		for _, k := range []string{"orchestrator", "context", "provider", "ui"} {
			if r.IntN(2) == 0 {
				session.Set(k, entry())
			}
		}
		front.Set("session", session)
	}
	switch r.IntN(5) {
	case 0:
		front.Set("exclude", mapOf("session", "all"))
	case 1:
		front.Set("exclude", mapOf("session", []any{"odd", "m1"}, "tools", "all"))
	case 2:
		front.Set("exclude", mapOf("tools", []any{"t1"}))
	}
	if r.IntN(2) == 0 {
		front.Set("tools", []any{mapOf("module", "t1"), mapOf("module", fmt.Sprint("t", r.IntN(4)))})
	}
	return front
}

// TestEffectiveSessionMatchesEffective: the session block the check
// merges on its own is the one Effective gives, on random chains.
func TestEffectiveSessionMatchesEffective(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for iter := 0; iter < 200; iter++ {
		c := &discovery.Collection{Name: "c", Valid: true, Dir: "/c", Base: "/c", Facts: map[string]*discovery.Facts{}}
		n := 1 + r.IntN(8)
		for i := 0; i < n; i++ {
			path := fmt.Sprintf("/c/profiles/p%d.md", i)
			c.Resources = append(c.Resources, discovery.Resource{Kind: discovery.KindProfile, Name: fmt.Sprint("p", i), Path: path, Rel: fmt.Sprintf("profiles/p%d.md", i)})
			f := &discovery.Facts{Kind: discovery.KindProfile, Front: randomFront(r)}
			if i > 0 && r.IntN(6) > 0 {
				f.Extends = &discovery.Ref{Value: fmt.Sprintf("c:p%d", r.IntN(i))}
			}
			if r.IntN(20) == 0 {
				f.Front = nil
			}
			c.Facts[path] = f
		}
		root := discovery.Root{Kind: discovery.RootUser, Path: "/"}
		set := discovery.NewSet([]discovery.Root{root}, [][]*discovery.Collection{{c}})
		for _, res := range c.Resources {
			ref := discovery.ProfileRef{Collection: c, Path: res.Path}
			merged, _, err := set.Effective(ref)
			got, ok := discovery.EffectiveSession(set, ref)
			if ok != (err == nil) {
				t.Fatalf("%s: session ok %v, Effective error %v", res.Path, ok, err)
			}
			if ok && !reflect.DeepEqual(got, merged.Value("session")) {
				t.Fatalf("%s: session %s, Effective gives %s", res.Path, jsonText(t, got), jsonText(t, merged.Value("session")))
			}
		}
	}
}
