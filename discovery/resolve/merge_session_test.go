package resolve_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// randomFront returns front matter that exercises what the session block
// merges and what can remove it: module entries with and without ids,
// other session keys, excludes of "all" or of lists, a session that is not
// a mapping, and module lists beside it.
func randomFront(r *rand.Rand) *syntax.Map {
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
		session := &syntax.Map{}
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
// merges on its own is the one Effective gives, on random chains, within
// one collection and across collections (where the Set remembers the
// sessions of parents, asked about in random order).
func TestEffectiveSessionMatchesEffective(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for iter := 0; iter < 400; iter++ {
		spread := iter%2 == 1 // one collection per profile
		var cols []*discovery.Collection
		colOf := func(i int) *discovery.Collection {
			if !spread {
				i = 0
			}
			for len(cols) <= i {
				dir := fmt.Sprintf("/c%d", len(cols))
				cols = append(cols, &discovery.Collection{Name: fmt.Sprintf("c%d", len(cols)), Valid: true, Dir: dir, Base: dir, Facts: map[string]*discovery.Facts{}})
			}
			return cols[i]
		}
		var refs []resolve.ProfileRef
		n := 1 + r.IntN(8)
		for i := 0; i < n; i++ {
			c := colOf(i)
			path := fmt.Sprintf("%s/profiles/p%d.md", c.Dir, i)
			c.Resources = append(c.Resources, discovery.Resource{Kind: discovery.KindProfile, Name: fmt.Sprint("p", i), Path: path, Rel: fmt.Sprintf("profiles/p%d.md", i)})
			f := &discovery.Facts{Kind: discovery.KindProfile, Front: randomFront(r)}
			if i > 0 && r.IntN(6) > 0 {
				j := r.IntN(i)
				if spread && r.IntN(4) == 0 {
					j = (i + 1 + r.IntN(n)) % n // may come later, may make a cycle
				}
				f.Extends = &syntax.Ref{Value: fmt.Sprintf("c%d:p%d", j, j)}
				if !spread {
					f.Extends.Value = fmt.Sprintf("c0:p%d", j)
				}
			}
			if r.IntN(20) == 0 {
				f.Front = nil
			}
			c.Facts[path] = f
			refs = append(refs, resolve.ProfileRef{Collection: c, Path: path})
		}
		root := discovery.Root{Kind: discovery.RootUser, Path: "/"}
		set := resolve.NewSet([]discovery.Root{root}, [][]*discovery.Collection{cols})
		for _, k := range r.Perm(len(refs)) {
			ref := refs[k]
			merged, _, err := set.Effective(ref)
			got, ok := resolve.EffectiveSession(set, ref)
			if ok != (err == nil) {
				t.Fatalf("%s: session ok %v, Effective error %v", ref.Path, ok, err)
			}
			if ok && !reflect.DeepEqual(got, merged.Value("session")) {
				t.Fatalf("%s: session %s, Effective gives %s", ref.Path, jsonText(t, got), jsonText(t, merged.Value("session")))
			}
		}
	}
}

// TestEffectiveSessionOfACycle: in a cycle of profiles of three
// collections, each profile's chain is the cycle read from it, so what
// one chain merged for a profile is not that profile's own session, and
// the Set must not remember it.
func TestEffectiveSessionOfACycle(t *testing.T) {
	var cols []*discovery.Collection
	var refs []resolve.ProfileRef
	for i := range 3 {
		dir := fmt.Sprintf("/c%d", i)
		path := dir + "/profiles/p.md"
		c := &discovery.Collection{Name: fmt.Sprintf("c%d", i), Valid: true, Dir: dir, Base: dir,
			Resources: []discovery.Resource{{Kind: discovery.KindProfile, Name: "p", Path: path, Rel: "profiles/p.md"}},
			Facts: map[string]*discovery.Facts{path: {Kind: discovery.KindProfile,
				Extends: &syntax.Ref{Value: fmt.Sprintf("c%d:p", (i+1)%3)},
				Front:   mapOf("profile", mapOf("name", "p"), "session", mapOf("ui", mapOf(fmt.Sprint("k", i), i)))}}}
		cols = append(cols, c)
		refs = append(refs, resolve.ProfileRef{Collection: c, Path: path})
	}
	set := resolve.NewSet([]discovery.Root{{Kind: discovery.RootUser, Path: "/"}}, [][]*discovery.Collection{cols})
	for _, ref := range refs {
		merged, _, err := set.Effective(ref)
		got, ok := resolve.EffectiveSession(set, ref)
		if err != nil || !ok || !reflect.DeepEqual(got, merged.Value("session")) {
			t.Fatalf("%s: session %s (%v), Effective gives %s (%v)", ref.ID(), jsonText(t, got), ok, jsonText(t, merged.Value("session")), err)
		}
	}
}

// jsonText is v as JSON, for messages.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	return string(b)
}

// mapOf builds a Map from keys and values, in order.
func mapOf(kv ...any) *syntax.Map {
	m := syntax.NewMap(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		m.Set(kv[i].(string), kv[i+1])
	}
	return m
}
