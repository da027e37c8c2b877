package resolve

import (
	"fmt"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// moduleLists are the profile sections that hold module entries.
var moduleLists = []string{"providers", "tools", "hooks"}

// Effective returns the profile at ref after its extends chain, merged the
// way the reference loader merges, root-most ancestor first:
//
//   - providers, tools and hooks are merged by module id: an entry whose id
//     the parent has is merged into the parent's entry in the parent's
//     position (config deep-merged, source inherited when absent); new ids
//     are appended in the child's order;
//   - session.orchestrator and session.context are merged the same way when
//     the module id is the same or absent, and replaced when it differs;
//   - mappings (config, session, ui, task, …) are deep-merged; scalars and
//     every other list are replaced by the child's;
//   - a child's exclude removes inherited entries before its own are merged:
//     per section, "all" or a list of module ids (agent names for agents);
//   - the profile block is the child's own, and exclude is not inherited.
//
// Keys keep the authors' order, as overlaying a child on its parent gives
// it: at every level of mappings, the parent's keys in the parent's order,
// then the keys only the child has in the child's order. A key the child
// sets again stays in the parent's place; a section a child's exclude
// removes with "all" and sets again goes last.
//
// It also returns the chain, child first.
func (s *Set) Effective(ref ProfileRef) (*syntax.Map, []ProfileRef, error) {
	chain := s.Chain(ref)
	var merged *syntax.Map
	for i := len(chain) - 1; i >= 0; i-- {
		p := chain[i]
		f := p.Collection.FullFacts(p.Path)
		if f == nil || f.Front == nil {
			return nil, chain, fmt.Errorf("profile %s has no usable front matter", p.Path)
		}
		merged = MergeProfile(merged, f.Front)
	}
	return merged, chain, nil
}

// EffectiveSession returns the "session" block of the profile whose
// extends chain (child first) is chain, as Effective merges it, without
// merging the other blocks, which may be large: nil when it has none. ok
// is false where Effective fails.
//
// When the chain ends at a root profile, every tail of it is the chain of
// its first profile, and the Set remembers the session of each profile of
// another collection than chain[0]'s: the parents many collections extend
// (a foundation's) are merged once per Set, not once per child.
func (s *Set) EffectiveSession(chain []ProfileRef) (session any, ok bool) {
	if len(chain) == 0 {
		return nil, true
	}
	last := chain[len(chain)-1]
	rooted := last.Collection.Facts[last.Path] != nil && last.Collection.Facts[last.Path].Extends == nil
	out := &syntax.Map{}
	from := len(chain) - 1
	if rooted {
		for i := 1; i < len(chain); i++ {
			if v, ok := s.sessions.Load(chain[i]); ok {
				if v != nil {
					out.Set("session", v)
				}
				from = i - 1
				break
			}
		}
	}
	for i := from; i >= 0; i-- {
		p := chain[i]
		f := p.Collection.Facts[p.Path]
		if f == nil {
			return nil, false
		}
		session, exclude, ok := f.ProfileBlocks()
		if !ok {
			return nil, false
		}
		// As MergeProfile does, on the one block.
		if exclude != nil {
			applyExclude(out, exclude)
		}
		if session != nil {
			out.Set("session", mergeSession(out.Value("session"), session))
		}
		if rooted && i > 0 && p.Collection != chain[0].Collection {
			// Shared from now on: merges copy it, nothing changes it.
			s.sessions.Store(p, out.Value("session"))
		}
	}
	return out.Value("session"), true
}

// MergeProfile overlays child on parent (nil for none) and returns a new
// Map; neither argument is modified. Keys are ordered as Effective says.
func MergeProfile(parent, child *syntax.Map) *syntax.Map {
	out, _ := deepCopy(parent).(*syntax.Map)
	if out == nil {
		out = &syntax.Map{}
	}
	out.Delete("exclude")
	if ex, ok := child.Value("exclude").(*syntax.Map); ok {
		applyExclude(out, ex)
	}
	for k, cv := range child.All() {
		switch {
		case k == "exclude":
			continue
		case k == "profile":
			out.Set(k, deepCopy(cv))
		case isModuleList(k):
			out.Set(k, mergeModuleList(out.Value(k), cv))
		case k == "session":
			out.Set(k, mergeSession(out.Value(k), cv))
		default:
			out.Set(k, mergeValue(out.Value(k), cv))
		}
	}
	return out
}

func isModuleList(k string) bool {
	for _, m := range moduleLists {
		if k == m {
			return true
		}
	}
	return false
}

// applyExclude removes inherited entries named by a child's exclude block.
func applyExclude(out *syntax.Map, ex *syntax.Map) {
	for section, what := range ex.All() {
		if s, ok := what.(string); ok && s == "all" {
			out.Delete(section)
			continue
		}
		ids := map[string]bool{}
		if list, ok := what.([]any); ok {
			for _, v := range list {
				if s, ok := v.(string); ok {
					ids[s] = true
				}
			}
		}
		list, ok := out.Value(section).([]any)
		if !ok {
			continue
		}
		kept := []any{}
		for _, item := range list {
			id := moduleID(item)
			if id == "" {
				id, _ = item.(string)
			}
			if !ids[id] {
				kept = append(kept, item)
			}
		}
		out.Set(section, kept)
	}
}

// moduleID returns the module id of a module entry, or "".
func moduleID(v any) string {
	m, ok := v.(*syntax.Map)
	if !ok {
		return ""
	}
	id, _ := m.Value("module").(string)
	return id
}

// mergeModuleList merges child's module entries into parent's by id.
func mergeModuleList(parent, child any) any {
	cl, ok := child.([]any)
	if !ok {
		return deepCopy(child)
	}
	pl, _ := deepCopy(parent).([]any)
	out := append([]any{}, pl...)
	// Where the first entry of each id is, so that merging a long list
	// into another costs time linear in their lengths.
	at := make(map[string]int, len(out))
	for i, pe := range out {
		if id := moduleID(pe); id != "" {
			if _, ok := at[id]; !ok {
				at[id] = i
			}
		}
	}
	for _, ce := range cl {
		id := moduleID(ce)
		if i, ok := at[id]; ok && id != "" {
			out[i] = mergeModuleEntry(out[i], ce)
			continue
		}
		out = append(out, deepCopy(ce))
		if id != "" {
			at[id] = len(out) - 1
		}
	}
	return out
}

// mergeModuleEntry merges one module entry: config deep-merged, source
// inherited when the child has none, other keys replaced.
func mergeModuleEntry(parent, child any) any {
	pm, ok1 := parent.(*syntax.Map)
	cm, ok2 := child.(*syntax.Map)
	if !ok1 || !ok2 {
		return deepCopy(child)
	}
	if cid, pid := moduleID(cm), moduleID(pm); cid != "" && cid != pid {
		return deepCopy(child)
	}
	out := deepCopy(pm).(*syntax.Map)
	for k, v := range cm.All() {
		if k == "config" {
			out.Set(k, mergeValue(out.Value(k), v))
		} else {
			out.Set(k, deepCopy(v))
		}
	}
	return out
}

// mergeSession merges the session block: orchestrator and context are
// module entries, the rest is deep-merged.
func mergeSession(parent, child any) any {
	pm, ok1 := parent.(*syntax.Map)
	cm, ok2 := child.(*syntax.Map)
	if !ok1 || !ok2 {
		return deepCopy(child)
	}
	out := deepCopy(pm).(*syntax.Map)
	for k, v := range cm.All() {
		switch k {
		case "orchestrator", "context", "provider":
			if _, isMap := v.(*syntax.Map); isMap {
				out.Set(k, mergeModuleEntry(out.Value(k), v))
			} else {
				out.Set(k, deepCopy(v))
			}
		default:
			out.Set(k, mergeValue(out.Value(k), v))
		}
	}
	return out
}

// mergeValue deep-merges mappings; anything else is replaced by child.
func mergeValue(parent, child any) any {
	pm, ok1 := parent.(*syntax.Map)
	cm, ok2 := child.(*syntax.Map)
	if !ok1 || !ok2 {
		return deepCopy(child)
	}
	out := deepCopy(pm).(*syntax.Map)
	for k, v := range cm.All() {
		out.Set(k, mergeValue(out.Value(k), v))
	}
	return out
}

// deepCopy copies mappings and lists so merged results share nothing with
// the cached front matter.
func deepCopy(v any) any {
	switch t := v.(type) {
	case *syntax.Map:
		if t == nil {
			return t
		}
		out := syntax.NewMap(t.Len())
		for k, e := range t.All() {
			out.Set(k, deepCopy(e))
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
