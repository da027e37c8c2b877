package resolve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// ProfileRef names a profile: its collection and its file.
type ProfileRef struct {
	Collection *discovery.Collection
	Path       string
}

// ID returns "collection:name" for the profile.
func (p ProfileRef) ID() string {
	return p.Collection.Name + ":" + strings.TrimSuffix(filepath.Base(p.Path), ".md")
}

// ResolveProfile resolves a profile reference written in collection from
// (nil when there is none): "coll:name", "coll:profiles/x.md", or a bare
// name in from. It returns why when it does not resolve.
func (s *Set) ResolveProfile(ref string, from *discovery.Collection) (ProfileRef, error) {
	collName, rest, qualified := strings.Cut(ref, ":")
	if !qualified {
		rest = ref
	}
	c := from
	if qualified {
		c = s.Lookup(collName)
		if c == nil {
			return ProfileRef{}, errors.New(s.unresolvedCollection(collName, from))
		}
	} else if c == nil {
		return ProfileRef{}, fmt.Errorf("bare profile name %q needs a collection: write collection:%s", ref, ref)
	}
	if rest == "" {
		return ProfileRef{}, fmt.Errorf("empty profile name in %q", ref)
	}
	var rel string
	if strings.Contains(rest, "/") || strings.HasSuffix(rest, ".md") {
		if escapes(rest) {
			return ProfileRef{}, fmt.Errorf("profile path %q leaves collection %s", rest, c.Name)
		}
		rel = rest
	} else {
		rel = "profiles/" + rest + ".md"
	}
	if r, ok := c.ResourceAt(rel); ok && r.Kind == discovery.KindProfile {
		return ProfileRef{Collection: c, Path: r.Path}, nil
	}
	where := "collection " + c.Name
	if !qualified {
		where = "its own collection (" + c.Name + "); a bare name is looked up there only"
	}
	msg := fmt.Sprintf("no profile %s in %s", rel, where)
	if near := suggestResource(c, discovery.KindProfile, rel); near != "" {
		if qualified {
			near = c.Name + ":" + near
		}
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return ProfileRef{}, errors.New(msg)
}

// unresolvedCollection says why name, written in collection from (nil
// when there is none), resolves to no collection: from requires it but it
// is not installed; the directories that answer to it are skipped, and
// why (no pyproject.toml, TOML that does not parse, …); else the nearest
// name that resolves or that from requires; else how to make it resolve,
// as CodeDepNotInstalled says it (a check under --isolated reads no
// installed collection: it is the usual case there).
func (s *Set) unresolvedCollection(name string, from *discovery.Collection) string {
	msg := fmt.Sprintf("collection %q does not resolve", name)
	if from.Requires(name) {
		msg += fmt.Sprintf(": %s requires it, but it is not installed", from.Name)
	}
	if why := s.Skipped(name); why != "" {
		return msg + ": " + why
	}
	if from.Requires(name) {
		return msg
	}
	if near := s.suggestRequired(name, from); near != "" {
		return msg + fmt.Sprintf("; did you mean %q?", near)
	}
	if from != nil && from.Pyproject != "" {
		return msg + fmt.Sprintf(": none is installed; declare it in requires ([tool.amplifier.collection.requires] in %s's pyproject.toml), "+
			"install it in a collections root, or pass check --with DIR", from.Name)
	}
	return msg + ": none is installed; install it in a collections root, or pass check --with DIR"
}

// NotInstalled reports whether c requires name and no collection resolves
// under it. References of c into such a collection are not checked: one
// CodeDepNotInstalled at the requires entry says so, instead of an error
// per reference, so that the answer does not depend on what happens to
// be installed beside the collection checked.
func (s *Set) NotInstalled(c *discovery.Collection, name string) bool {
	return c.Requires(name) && s.Lookup(name) == nil
}

// suggestRequired returns the name that name most likely misspells among
// those that resolve and those from requires, or "". Of two as near, one
// that resolves wins.
func (s *Set) suggestRequired(name string, from *discovery.Collection) string {
	near := s.SuggestCollection(name)
	if from == nil || from.Metadata == nil || len(from.Metadata.Requires) == 0 {
		return near
	}
	return diag.SuggestFrom(name, func(yield func(string) bool) {
		if near != "" && !yield(near) {
			return
		}
		for _, r := range from.Metadata.Requires {
			if !yield(r.Name) {
				return
			}
		}
	})
}

// Skipped says which directory that answers to name is skipped, and why;
// "" when none is.
func (s *Set) Skipped(name string) string {
	r := s.Resolve(name)
	if len(r.Skipped) == 0 {
		return ""
	}
	c := r.Skipped[0]
	why := c.Problem
	if why == "" {
		why = "not a usable collection"
	}
	msg := fmt.Sprintf("%s is skipped (%s)", c.Dir, why)
	if n := len(r.Skipped) - 1; n > 0 {
		msg += fmt.Sprintf(", and %d more", n)
	}
	return msg
}

// SuggestCollection returns the name of a winning collection that name
// most likely misspells, or "", as the diagnostics of check suggest it.
func (s *Set) SuggestCollection(name string) string {
	c := s.suggested
	if c == nil {
		c = &diag.Suggestions{} // a Set not made by NewSet or Apply
	}
	return c.Answer(name, func(yield func(string) bool) {
		for n := range s.winner.All() {
			if !yield(n) {
				return
			}
		}
	})
}

// SuggestResource returns the reference to a resource of kind k that
// ref, which resolves to none, most likely misspells, or "": for
// "collection:name", the nearest name in that collection, or the same
// name in the nearest collection when the collection resolves nowhere;
// for a bare name, the nearest name among the winning collections'.
func (s *Set) SuggestResource(k discovery.Kind, ref string) string {
	if coll, name, ok := strings.Cut(ref, ":"); ok {
		c := s.Lookup(coll)
		if c == nil {
			if near := s.SuggestCollection(coll); near != "" {
				return near + ":" + name
			}
			return ""
		}
		rel := name
		if !strings.Contains(name, "/") && !strings.HasSuffix(name, ".md") {
			rel = k.Dir() + "/" + name + ".md"
		}
		if near := suggestResource(c, k, rel); near != "" {
			return coll + ":" + near
		}
		return ""
	}
	return diag.SuggestFrom(ref, func(yield func(string) bool) {
		for _, c := range s.Winners() {
			for _, r := range c.Resources {
				if r.Kind == k && !yield(r.Name) {
					return
				}
			}
		}
	})
}

// suggestResource returns the name (for a profile or agent whose rel is
// kind's directory/name.md) or the path of the resource of c that rel
// most likely misspells, or "".
func suggestResource(c *discovery.Collection, k discovery.Kind, rel string) string {
	dir := k.Dir() + "/"
	name, byName := strings.CutPrefix(rel, dir)
	if byName {
		name, byName = strings.CutSuffix(name, ".md")
		byName = byName && !strings.Contains(name, "/")
	}
	key := rel
	if byName {
		key = name
	}
	return diag.SuggestFrom(key, func(yield func(string) bool) {
		for _, r := range c.Resources {
			if k != "" && r.Kind != k {
				continue
			}
			cand := r.Rel
			if byName {
				cand = r.Name
			}
			if !yield(cand) {
				return
			}
		}
	})
}

// escapes reports whether a slash-separated relative path leaves its base.
func escapes(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	for part := range strings.SplitSeq(p, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// ResolveAgent resolves an agent name written in collection from: a bare
// name is looked up in from first, then in every winning collection in name
// order; "coll:name" in that collection only.
func (s *Set) ResolveAgent(name string, from *discovery.Collection) (discovery.Resource, *discovery.Collection, bool) {
	if coll, n, ok := strings.Cut(name, ":"); ok {
		if c := s.Lookup(coll); c != nil {
			if r, ok := c.Resource(discovery.KindAgent, n); ok {
				return r, c, true
			}
		}
		return discovery.Resource{}, nil, false
	}
	if from != nil {
		if r, ok := from.Resource(discovery.KindAgent, name); ok {
			return r, from, true
		}
	}
	if c := s.agentCollection(name); c != nil {
		r, _ := c.Resource(discovery.KindAgent, name)
		return r, c, true
	}
	return discovery.Resource{}, nil, false
}

// UnknownAgent says why the agent name written in collection from does
// not resolve, with the nearest name that does.
func (s *Set) UnknownAgent(name string, from *discovery.Collection) string {
	if coll, n, ok := strings.Cut(name, ":"); ok {
		c := s.Lookup(coll)
		if c == nil {
			return fmt.Sprintf("agent %q does not resolve: %s", name, s.unresolvedCollection(coll, from))
		}
		msg := fmt.Sprintf("agent %q does not exist: collection %s has no agents/%s.md", name, coll, n)
		if near := suggestResource(c, discovery.KindAgent, "agents/"+n+".md"); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", coll+":"+near)
		}
		return msg
	}
	msg := fmt.Sprintf("agent %q does not exist in %s or any collection", name, from.Name)
	near := suggestResource(from, discovery.KindAgent, "agents/"+name+".md")
	if near == "" {
		near = diag.SuggestFrom(name, func(yield func(string) bool) {
			for a := range s.holders.All() {
				if !yield(a) {
					return
				}
			}
		})
	}
	if near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return msg
}

// ResolveMention returns the file an @collection:path mention names.
func (s *Set) ResolveMention(m syntax.Mention) (string, error) { return s.ResolveMentionFrom(m, nil) }

// ResolveMentionFrom is ResolveMention for a mention written in
// collection from (nil when there is none), whose requires the message
// of a collection that does not resolve takes into account.
func (s *Set) ResolveMentionFrom(m syntax.Mention, from *discovery.Collection) (string, error) {
	p, c, miss := s.resolveMention(m)
	switch miss {
	case MentionResolves:
		return p, nil
	case MentionEscapes:
		return "", errEscapes
	case MentionNoCollection:
		return "", errors.New(s.unresolvedCollection(m.Collection, from))
	}
	msg := fmt.Sprintf("no %s in collection %s (%s)", m.Path, c.Name, c.Base)
	if near := suggestResource(c, "", m.Path); near != "" {
		msg += fmt.Sprintf("; did you mean @%s:%s?", c.Name, near)
	}
	return "", errors.New(msg)
}

// MentionMiss is why a mention does not resolve.
type MentionMiss int

const (
	MentionResolves     MentionMiss = iota
	MentionEscapes                  // its path leaves the collection
	MentionNoCollection             // no collection resolves under its name
	MentionNoFile                   // the collection has no such file
)

// resolveMention resolves m without saying why it does not: the file and
// its collection, or why not (the collection when it has no such file).
func (s *Set) resolveMention(m syntax.Mention) (string, *discovery.Collection, MentionMiss) {
	return s.ResolveMentionStat(m, nil)
}

// ResolveMentionStat is resolveMention, setting *statted (when not nil)
// when the answer came from asking the file system whether a file that
// is not a resource exists.
func (s *Set) ResolveMentionStat(m syntax.Mention, statted *bool) (string, *discovery.Collection, MentionMiss) {
	if escapes(m.Path) {
		return "", nil, MentionEscapes
	}
	c := s.Lookup(m.Collection)
	if c == nil {
		return "", nil, MentionNoCollection
	}
	if p, ok := c.ResourcePath(m.Path); ok {
		return p, c, MentionResolves
	}
	if statted != nil {
		*statted = true
	}
	for _, dir := range []string{c.Base, c.Dir} {
		p := filepath.Join(dir, filepath.FromSlash(m.Path))
		if s.exists(p) {
			return p, c, MentionResolves
		}
	}
	return "", c, MentionNoFile
}

var errEscapes = errors.New("path leaves its collection")

// constraint parses a version constraint, once per set. The set's lock
// is held only to look the answer up and to keep it: two checks may parse
// one text at once, and agree.
func (s *Set) Constraint(text string) (*syntax.Constraint, error) {
	s.statMu.Lock()
	c, ok := s.constraints[text]
	s.statMu.Unlock()
	if ok {
		return c, nil
	}
	c, err := syntax.ParseConstraint(text)
	if err == nil {
		s.statMu.Lock()
		if s.constraints == nil {
			s.constraints = map[string]*syntax.Constraint{}
		}
		s.constraints[text] = c
		s.statMu.Unlock()
	}
	return c, err
}

// exists reports whether p exists, asking the file system once per set.
// The set's lock is held only to look the answer up and to keep it, never
// while the file system is asked: a slow stat holds back no other check.
func (s *Set) exists(p string) bool {
	s.statMu.Lock()
	ok, seen := s.stats[p]
	s.statMu.Unlock()
	if seen {
		return ok
	}
	_, err := os.Stat(p)
	ok = err == nil
	s.statMu.Lock()
	if s.stats == nil {
		s.stats = map[string]bool{}
	}
	s.stats[p] = ok
	s.statMu.Unlock()
	return ok
}

// MaxExtendsDepth is the most profiles an extends chain is followed
// through, the profile itself included. Real chains have a handful; the
// bound keeps the work of checking a collection of chained profiles
// linear in their number.
const MaxExtendsDepth = 32

// Chain returns the profiles start extends, in order, starting with start,
// stopping at the first that does not resolve or would repeat, and after
// MaxExtendsDepth profiles.
func (s *Set) Chain(start ProfileRef) []ProfileRef {
	chain := []ProfileRef{start}
	cur := start
	for len(chain) < MaxExtendsDepth {
		f := cur.Collection.Facts[cur.Path]
		if f == nil || f.Extends == nil {
			return chain
		}
		next, err := s.ResolveProfile(f.Extends.Value, cur.Collection)
		if err != nil || slices.ContainsFunc(chain, func(p ProfileRef) bool { return p.Path == next.Path }) {
			return chain
		}
		chain = append(chain, next)
		cur = next
	}
	return chain
}

// tooDeep reports whether an extends chain (see Chain) goes on past
// MaxExtendsDepth profiles without repeating.
func (s *Set) TooDeep(chain []ProfileRef) bool {
	if len(chain) < MaxExtendsDepth {
		return false
	}
	last := chain[len(chain)-1]
	f := last.Collection.Facts[last.Path]
	if f == nil || f.Extends == nil {
		return false
	}
	next, err := s.ResolveProfile(f.Extends.Value, last.Collection)
	return err == nil && !slices.ContainsFunc(chain, func(p ProfileRef) bool { return p.Path == next.Path })
}

// cycle returns the chain "a:x → b:y → a:x" when following the extends
// chain (see Chain) from its start comes back to it, or "" when it does
// not.
func (s *Set) Cycle(chain []ProfileRef) string {
	start := chain[0]
	last := chain[len(chain)-1]
	f := last.Collection.Facts[last.Path]
	if f == nil || f.Extends == nil {
		return ""
	}
	next, err := s.ResolveProfile(f.Extends.Value, last.Collection)
	if err != nil || next.Path != start.Path {
		return ""
	}
	ids := make([]string, 0, len(chain)+1)
	for _, p := range chain {
		ids = append(ids, p.ID())
	}
	return strings.Join(append(ids, start.ID()), " → ")
}
