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
func randomFront(r *rand.Rand) map[string]any {
	entry := func() any {
		switch r.IntN(4) {
		case 0:
			return "a string"
		case 1:
			return map[string]any{"config": map[string]any{"k": r.IntN(3)}}
		}
		return map[string]any{"module": []string{"m1", "m2"}[r.IntN(2)], "config": map[string]any{fmt.Sprint("k", r.IntN(3)): r.IntN(3)}}
	}
	front := map[string]any{"profile": map[string]any{"name": "p"}}
	switch r.IntN(6) {
	case 0:
	case 1:
		front["session"] = []any{"odd"}
	default:
		session := map[string]any{}
		for _, k := range []string{"orchestrator", "context", "provider", "ui"} {
			if r.IntN(2) == 0 {
				session[k] = entry()
			}
		}
		front["session"] = session
	}
	switch r.IntN(5) {
	case 0:
		front["exclude"] = map[string]any{"session": "all"}
	case 1:
		front["exclude"] = map[string]any{"session": []any{"odd", "m1"}, "tools": "all"}
	case 2:
		front["exclude"] = map[string]any{"tools": []any{"t1"}}
	}
	if r.IntN(2) == 0 {
		front["tools"] = []any{map[string]any{"module": "t1"}, map[string]any{"module": fmt.Sprint("t", r.IntN(4))}}
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
			if ok && !reflect.DeepEqual(got, merged["session"]) {
				t.Fatalf("%s: session %#v, Effective gives %#v", res.Path, got, merged["session"])
			}
		}
	}
}
