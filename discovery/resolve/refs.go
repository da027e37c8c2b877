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
	"github.com/amplidex/amplidex/discovery/schema"
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
// name that resolves or that from requires.
func (s *Set) unresolvedCollection(name string, from *discovery.Collection) string {
	msg := fmt.Sprintf("collection %q does not resolve", name)
	if from.Requires(name) {
		msg += fmt.Sprintf(": %s requires it, but it is not installed", from.Name)
	}
	if why := s.skipped(name); why != "" {
		return msg + ": " + why
	}
	if from.Requires(name) {
		return msg
	}
	if near := s.suggestRequired(name, from); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return msg
}

// notInstalled reports whether c requires name and no collection resolves
// under it. References of c into such a collection are not checked: one
// CodeDepNotInstalled at the requires entry says so, instead of an error
// per reference, so that the answer does not depend on what happens to
// be installed beside the collection checked.
func (s *Set) notInstalled(c *discovery.Collection, name string) bool {
	return c.Requires(name) && s.Lookup(name) == nil
}

// suggestRequired returns the name that name most likely misspells among
// those that resolve and those from requires, or "". Of two as near, one
// that resolves wins.
func (s *Set) suggestRequired(name string, from *discovery.Collection) string {
	near := s.suggestCollection(name)
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

// skipped says which directory that answers to name is skipped, and why;
// "" when none is.
func (s *Set) skipped(name string) string {
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

// suggestCollection returns the winning collection name that name most
// likely misspells, or "".
func (s *Set) suggestCollection(name string) string {
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

// unknownAgent says why the agent name written in collection from does
// not resolve, with the nearest name that does.
func (s *Set) unknownAgent(name string, from *discovery.Collection) string {
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
func (s *Set) ResolveMention(m syntax.Mention) (string, error) { return s.resolveMentionFrom(m, nil) }

// resolveMentionFrom is ResolveMention for a mention written in
// collection from (nil when there is none), whose requires the message
// of a collection that does not resolve takes into account.
func (s *Set) resolveMentionFrom(m syntax.Mention, from *discovery.Collection) (string, error) {
	p, c, miss := s.resolveMention(m)
	switch miss {
	case mentionResolves:
		return p, nil
	case mentionEscapes:
		return "", errEscapes
	case mentionNoCollection:
		return "", errors.New(s.unresolvedCollection(m.Collection, from))
	}
	msg := fmt.Sprintf("no %s in collection %s (%s)", m.Path, c.Name, c.Base)
	if near := suggestResource(c, "", m.Path); near != "" {
		msg += fmt.Sprintf("; did you mean @%s:%s?", c.Name, near)
	}
	return "", errors.New(msg)
}

// mentionMiss is why a mention does not resolve.
type mentionMiss int

const (
	mentionResolves     mentionMiss = iota
	mentionEscapes                  // its path leaves the collection
	mentionNoCollection             // no collection resolves under its name
	mentionNoFile                   // the collection has no such file
)

// resolveMention resolves m without saying why it does not: the file and
// its collection, or why not (the collection when it has no such file).
func (s *Set) resolveMention(m syntax.Mention) (string, *discovery.Collection, mentionMiss) {
	return s.resolveMentionStat(m, nil)
}

// resolveMentionStat is resolveMention, setting *statted (when not nil)
// when the answer came from asking the file system whether a file that
// is not a resource exists.
func (s *Set) resolveMentionStat(m syntax.Mention, statted *bool) (string, *discovery.Collection, mentionMiss) {
	if escapes(m.Path) {
		return "", nil, mentionEscapes
	}
	c := s.Lookup(m.Collection)
	if c == nil {
		return "", nil, mentionNoCollection
	}
	if p, ok := c.ResourcePath(m.Path); ok {
		return p, c, mentionResolves
	}
	if statted != nil {
		*statted = true
	}
	for _, dir := range []string{c.Base, c.Dir} {
		p := filepath.Join(dir, filepath.FromSlash(m.Path))
		if s.exists(p) {
			return p, c, mentionResolves
		}
	}
	return "", c, mentionNoFile
}

var errEscapes = errors.New("path leaves its collection")

// constraint parses a version constraint, once per set. The set's lock
// is held only to look the answer up and to keep it: two checks may parse
// one text at once, and agree.
func (s *Set) constraint(text string) (*syntax.Constraint, error) {
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

// Check returns the cross-reference diagnostics of every collection in the
// set: extends that do not resolve or that cycle, unknown agent names,
// unresolved or escaping @mentions, unmet requires, and shadowing.
func (s *Set) Check() []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, c := range s.Collections() {
		out = append(out, s.CheckCollection(c)...)
	}
	out = append(out, s.shadowDiagnostics()...)
	return out
}

// CheckCollection returns the cross-reference diagnostics of one
// collection's files: of each file, at most diag.MaxPerArea of an
// area, and then one CodeTooManyDiagnostics. What is past the limit is
// counted, not made: a file of half a million mentions that do not
// resolve costs their lookups, not their messages.
func (s *Set) CheckCollection(c *discovery.Collection) []diag.Diagnostic {
	ds, _ := s.CheckCollectionStat(c)
	return ds
}

// CheckCollectionStat is CheckCollection, and also reports whether its
// answer depends on more than the Set: on whether a file that is not a
// resource exists (a mention of a document outside the resource
// directories), which only the file system says. Such an answer cannot be
// kept across runs without asking again.
func (s *Set) CheckCollectionStat(c *discovery.Collection) (_ []diag.Diagnostic, statted bool) {
	return s.checkCollection(c, mentionsOf)
}

// CheckWithNames is CheckCollectionStat and RefNames at once: the mentions
// of each file, read from the index when its Facts are brief, are read
// once for both.
func (s *Set) CheckWithNames(c *discovery.Collection) (diags []diag.Diagnostic, names []string, statted bool) {
	read := map[string][]syntax.Mention{}
	mentions := func(c *discovery.Collection, p string, f *discovery.Facts) []syntax.Mention {
		ms, ok := read[p]
		if !ok {
			ms = mentionsOf(c, p, f)
			read[p] = ms
		}
		return ms
	}
	names = s.refNames(c, mentions)
	diags, statted = s.checkCollection(c, mentions)
	return diags, names, statted
}

// checkCollection is CheckCollectionStat, with the mentions of c's files
// from mentions.
func (s *Set) checkCollection(c *discovery.Collection, mentions mentionsFunc) (_ []diag.Diagnostic, statted bool) {
	var out []diag.Diagnostic
	var limit diag.Limit
	// add makes a diagnostic of the file at path unless it is past the
	// limit; msg is called only when it is not.
	add := func(code, path string, r diag.Range, msg func() string) {
		if limit.Allow(code, diag.SeverityError, r) {
			out = append(out, diag.Diagnostic{Code: code, Severity: diag.SeverityError, Path: path, Range: r,
				Message: msg(), Collection: c.Name})
		}
	}
	for _, res := range c.Resources {
		f := c.Facts[res.Path]
		if f == nil {
			continue
		}
		limit = diag.Limit{}
		if f.Extends != nil && !s.notInstalled(c, refCollection(f.Extends.Value)) {
			ext := f.Extends
			if _, err := s.ResolveProfile(ext.Value, c); err != nil {
				add(diag.CodeExtendsUnresolved, res.Path, ext.Range, func() string {
					return fmt.Sprintf("extends %q does not resolve: %v", ext.Value, err)
				})
			} else if chain := s.Chain(ProfileRef{Collection: c, Path: res.Path}); s.cycle(chain) != "" {
				add(diag.CodeExtendsCycle, res.Path, ext.Range, func() string { return "inheritance cycle: " + s.cycle(chain) })
			} else if s.tooDeep(chain) {
				add(diag.CodeExtendsTooDeep, res.Path, ext.Range, func() string {
					return fmt.Sprintf("the extends chain is longer than %d profiles; it is not followed further", MaxExtendsDepth)
				})
			} else if missing, ids := s.mergedMissing(chain); missing != "" {
				add(diag.CodeRequiredKey, res.Path, ext.Range, func() string {
					return fmt.Sprintf("after its extends chain (%s) the profile has no %s", ids, missing)
				})
			}
		}
		for _, a := range f.Agents {
			if _, _, ok := s.ResolveAgent(a.Value, c); !ok && !s.notInstalled(c, refCollection(a.Value)) {
				add(diag.CodeAgentUnknown, res.Path, a.Range, func() string { return s.unknownAgent(a.Value, c) })
			}
		}
		for _, m := range mentions(c, res.Path, f) {
			switch _, _, miss := s.resolveMentionStat(m, &statted); {
			case miss == mentionResolves:
			case miss == mentionNoCollection && s.notInstalled(c, m.Collection):
			case miss == mentionEscapes:
				add(diag.CodeMentionEscapes, res.Path, m.Range, func() string {
					return fmt.Sprintf("@%s leaves collection %s (\"..\" is not allowed)", m.Text(), m.Collection)
				})
			default:
				add(diag.CodeMentionUnresolved, res.Path, m.Range, func() string {
					_, err := s.resolveMentionFrom(m, c)
					return fmt.Sprintf("@%s does not resolve: %v", m.Text(), err)
				})
			}
		}
		out = append(out, limit.Summaries(res.Path, c.Name)...)
	}
	if c.Valid && c.Metadata != nil {
		out = append(out, s.checkRequires(c)...)
	}
	return out, statted
}

// checkRequires checks each requires entry against the collection that
// resolves under its name: one that none does is not installed (a
// warning, which says how to provide it); one that does must meet the
// constraint.
func (s *Set) checkRequires(c *discovery.Collection) []diag.Diagnostic {
	var out []diag.Diagnostic
	var limit diag.Limit
	for _, req := range c.Metadata.Requires {
		dep := s.Lookup(req.Name)
		if dep == nil {
			if limit.Allow(diag.CodeDepNotInstalled, diag.SeverityWarning, req.Range) {
				out = append(out, diag.Diagnostic{Code: diag.CodeDepNotInstalled, Severity: diag.SeverityWarning, Path: c.Pyproject,
					Range: req.Range, Collection: c.Name, Message: s.notInstalledMessage(c, req)})
			}
			continue
		}
		con, err := s.constraint(req.Constraint)
		if err != nil {
			continue // reported with the metadata
		}
		if !schema.IsCollectionVersion(dep.Version) {
			// The dependency's own pyproject.toml says its version is
			// invalid; the constraint cannot be checked against it.
			continue
		}
		if ok, err := con.Check(dep.Version); (err != nil || !ok) && limit.Allow(diag.CodeDepUnsatisfied, diag.SeverityError, req.Range) {
			out = append(out, diag.Diagnostic{Code: diag.CodeDepUnsatisfied, Severity: diag.SeverityError, Path: c.Pyproject,
				Range: req.Range, Collection: c.Name,
				Message: fmt.Sprintf("requires %s %s, but %s %s is installed at %s", req.Name, req.Constraint, req.Name, dep.Version, dep.Dir)})
		}
	}
	return append(out, limit.Summaries(c.Pyproject, c.Name)...)
}

// notInstalledMessage is the message of CodeDepNotInstalled for the
// requires entry req of c: what is not installed, why when a directory of
// that name is skipped, the nearest name installed, and how to provide
// it.
func (s *Set) notInstalledMessage(c *discovery.Collection, req discovery.Requirement) string {
	msg := fmt.Sprintf("requires %s %s, but no collection %s is installed", req.Name, req.Constraint, req.Name)
	if why := s.skipped(req.Name); why != "" {
		msg += ": " + why
	} else if near := s.suggestCollection(req.Name); near != "" && !c.Requires(near) {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return msg + "; references into it are not checked until it is: set AMPLIDEX_BUNDLED or [roots] bundled to a directory that holds it, install it in a collections root, or pass check --with DIR"
}

// mergedMissing checks the effective profile of a child profile whose
// extends chain (see Chain) resolves to its root: it must have
// session.orchestrator and session.context, each naming a module. It
// returns the first missing key and the chain, or "".
func (s *Set) mergedMissing(chain []ProfileRef) (string, string) {
	if len(chain) < 2 {
		return "", ""
	}
	last := chain[len(chain)-1]
	if f := last.Collection.Facts[last.Path]; f == nil || f.Extends != nil {
		return "", "" // the chain stops early: reported as unresolved
	}
	merged, ok := s.effectiveSession(chain)
	if !ok {
		return "", ""
	}
	session, _ := merged.(*syntax.Map)
	for _, slot := range []string{"orchestrator", "context"} {
		entry, _ := session.Value(slot).(*syntax.Map)
		if id, _ := entry.Value("module").(string); id == "" {
			ids := make([]string, len(chain))
			for i, p := range chain {
				ids[i] = p.ID()
			}
			return "session." + slot + ".module", strings.Join(ids, " → ")
		}
	}
	return "", ""
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
func (s *Set) tooDeep(chain []ProfileRef) bool {
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
func (s *Set) cycle(chain []ProfileRef) string {
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

// refCollection returns the collection a reference "coll:rest" names, or
// "" for a bare name.
func refCollection(ref string) string {
	coll, _, ok := strings.Cut(ref, ":")
	if !ok {
		return ""
	}
	return coll
}

// mentionsFunc returns the mentions of the file at p of c, whose Facts
// are f.
type mentionsFunc func(c *discovery.Collection, p string, f *discovery.Facts) []syntax.Mention

// mentionsOf returns the mentions of the file at p of c, whose Facts are f
// (see Collection.MentionsOf).
func mentionsOf(c *discovery.Collection, p string, f *discovery.Facts) []syntax.Mention {
	return c.MentionsOf(p, f)
}
