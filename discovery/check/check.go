package check

import (
	"fmt"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// All returns the cross-reference diagnostics of every collection in the
// set: extends that do not resolve or that cycle, unknown agent names,
// unresolved or escaping @mentions, unmet requires, and shadowing.
func All(s *resolve.Set) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, c := range s.Collections() {
		out = append(out, Collection(s, c)...)
	}
	out = append(out, shadowed(s)...)
	return out
}

// Collection returns the cross-reference diagnostics of one
// collection's files: of each file, at most diag.MaxPerArea of an
// area, and then one CodeTooManyDiagnostics. What is past the limit is
// counted, not made: a file of half a million mentions that do not
// resolve costs their lookups, not their messages.
func Collection(s *resolve.Set, c *discovery.Collection) []diag.Diagnostic {
	ds, _ := CollectionStat(s, c)
	return ds
}

// CollectionStat is Collection, and also reports whether its
// answer depends on more than the Set: on whether a file that is not a
// resource exists (a mention of a document outside the resource
// directories), which only the file system says. Such an answer cannot be
// kept across runs without asking again.
func CollectionStat(s *resolve.Set, c *discovery.Collection) (_ []diag.Diagnostic, statted bool) {
	return checkCollection(s, c, mentionsOf)
}

// WithNames is CollectionStat and RefNames at once: the mentions
// of each file, read from the index when its Facts are brief, are read
// once for both.
func WithNames(s *resolve.Set, c *discovery.Collection) (diags []diag.Diagnostic, names []string, statted bool) {
	read := map[string][]syntax.Mention{}
	mentions := func(c *discovery.Collection, p string, f *discovery.Facts) []syntax.Mention {
		ms, ok := read[p]
		if !ok {
			ms = mentionsOf(c, p, f)
			read[p] = ms
		}
		return ms
	}
	names = refNames(s, c, mentions)
	diags, statted = checkCollection(s, c, mentions)
	return diags, names, statted
}

// checkCollection is CollectionStat, with the mentions of c's files
// from mentions.
func checkCollection(s *resolve.Set, c *discovery.Collection, mentions mentionsFunc) (_ []diag.Diagnostic, statted bool) {
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
		if f.Extends != nil && !s.NotInstalled(c, refCollection(f.Extends.Value)) {
			ext := f.Extends
			if _, err := s.ResolveProfile(ext.Value, c); err != nil {
				add(diag.CodeExtendsUnresolved, res.Path, ext.Range, func() string {
					return fmt.Sprintf("extends %q does not resolve: %v", ext.Value, err)
				})
			} else if chain := s.Chain(resolve.ProfileRef{Collection: c, Path: res.Path}); s.Cycle(chain) != "" {
				add(diag.CodeExtendsCycle, res.Path, ext.Range, func() string { return "inheritance cycle: " + s.Cycle(chain) })
			} else if s.TooDeep(chain) {
				add(diag.CodeExtendsTooDeep, res.Path, ext.Range, func() string {
					return fmt.Sprintf("the extends chain is longer than %d profiles; it is not followed further", resolve.MaxExtendsDepth)
				})
			} else if missing, ids := mergedMissing(s, chain); missing != "" {
				add(diag.CodeRequiredKey, res.Path, ext.Range, func() string {
					return fmt.Sprintf("after its extends chain (%s) the profile has no %s", ids, missing)
				})
			}
		}
		for _, a := range f.Agents {
			if _, _, ok := s.ResolveAgent(a.Value, c); !ok && !s.NotInstalled(c, refCollection(a.Value)) {
				add(diag.CodeAgentUnknown, res.Path, a.Range, func() string { return s.UnknownAgent(a.Value, c) })
			}
		}
		for _, m := range mentions(c, res.Path, f) {
			switch _, _, miss := s.ResolveMentionStat(m, &statted); {
			case miss == resolve.MentionResolves:
			case miss == resolve.MentionNoCollection && s.NotInstalled(c, m.Collection):
			case miss == resolve.MentionEscapes:
				add(diag.CodeMentionEscapes, res.Path, m.Range, func() string {
					return fmt.Sprintf("@%s leaves collection %s (\"..\" is not allowed)", m.Text(), m.Collection)
				})
			default:
				add(diag.CodeMentionUnresolved, res.Path, m.Range, func() string {
					_, err := s.ResolveMentionFrom(m, c)
					return fmt.Sprintf("@%s does not resolve: %v", m.Text(), err)
				})
			}
		}
		out = append(out, limit.Summaries(res.Path, c.Name)...)
	}
	if c.Valid && c.Metadata != nil {
		out = append(out, checkRequires(s, c)...)
	}
	return out, statted
}

// checkRequires checks each requires entry against the collection that
// resolves under its name: one that none does is not installed (a
// warning, which says how to provide it); one that does must meet the
// constraint.
func checkRequires(s *resolve.Set, c *discovery.Collection) []diag.Diagnostic {
	var out []diag.Diagnostic
	var limit diag.Limit
	for _, req := range c.Metadata.Requires {
		dep := s.Lookup(req.Name)
		if dep == nil {
			if limit.Allow(diag.CodeDepNotInstalled, diag.SeverityWarning, req.Range) {
				out = append(out, diag.Diagnostic{Code: diag.CodeDepNotInstalled, Severity: diag.SeverityWarning, Path: c.Pyproject,
					Range: req.Range, Collection: c.Name, Message: notInstalledMessage(s, c, req)})
			}
			continue
		}
		con, err := s.Constraint(req.Constraint)
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
func notInstalledMessage(s *resolve.Set, c *discovery.Collection, req discovery.Requirement) string {
	msg := fmt.Sprintf("requires %s %s, but no collection %s is installed", req.Name, req.Constraint, req.Name)
	if why := s.Skipped(req.Name); why != "" {
		msg += ": " + why
	} else if near := s.SuggestCollection(req.Name); near != "" && !c.Requires(near) {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return msg + "; references into it are not checked until it is: set AMPLIDEX_BUNDLED or [roots] bundled to a directory that holds it, install it in a collections root, or pass check --with DIR"
}

// mergedMissing checks the effective profile of a child profile whose
// extends chain (see Chain) resolves to its root: it must have
// session.orchestrator and session.context, each naming a module. It
// returns the first missing key and the chain, or "".
func mergedMissing(s *resolve.Set, chain []resolve.ProfileRef) (string, string) {
	if len(chain) < 2 {
		return "", ""
	}
	last := chain[len(chain)-1]
	if f := last.Collection.Facts[last.Path]; f == nil || f.Extends != nil {
		return "", "" // the chain stops early: reported as unresolved
	}
	merged, ok := s.EffectiveSession(chain)
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

// Shadowed reports c when it is valid and loses to another
// collection of its name: information on its pyproject.toml, or a warning
// when the winner is in the same root.
func Shadowed(s *resolve.Set, c *discovery.Collection) []diag.Diagnostic {
	if !c.Valid {
		return nil
	}
	w := s.Lookup(c.Name)
	if w == nil || w == c {
		return nil
	}
	code, sev, msg := diag.CodeShadowed, diag.SeverityInfo, fmt.Sprintf("collection %s is shadowed by %s (%s root)", c.Name, w.Dir, w.Root.Kind)
	if w.Root == c.Root {
		code, sev = diag.CodeDuplicateName, diag.SeverityWarning
		msg = fmt.Sprintf("collection %s is defined twice in the %s root; %s wins", c.Name, c.Root.Kind, w.Dir)
	}
	return []diag.Diagnostic{{Code: code, Severity: sev, Path: c.Pyproject, Message: msg, Collection: c.Name}}
}

// shadowed reports every valid collection that loses to another
// of its name.
func shadowed(s *resolve.Set) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, c := range s.Collections() {
		out = append(out, Shadowed(s, c)...)
	}
	return out
}
