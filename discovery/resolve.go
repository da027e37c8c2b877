package discovery

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Set is every collection of every root, resolved by name: project over
// user over bundled, and within one root a flat layout over a nested one,
// then path order. A Set is immutable once built.
type Set struct {
	Roots       []Root
	Collections []*Collection // every one found, roots in precedence order
	byName      map[string][]*Collection
	winners     []*Collection // the winner of every name, in name order
	winner      map[string]*Collection
	// agents maps an agent name to the first winning collection (in name
	// order) that has it.
	agents map[string]*Collection
	// stats remembers, for the life of the set, whether a path that is not
	// a resource exists (mentions of docs and the like).
	statMu      sync.Mutex // guards stats and constraints
	stats       map[string]bool
	constraints map[string]*Constraint
}

// Resolution is what a name resolves to.
type Resolution struct {
	Name string `json:"name"`
	// Winner is nil when the name resolves nowhere.
	Winner *Collection `json:"winner"`
	// Shadowed are valid collections of the same name that lose.
	Shadowed []*Collection `json:"shadowed"`
	// Skipped are unusable directories that would have matched the name.
	Skipped []*Collection `json:"skipped"`
}

// NewSet resolves the collections found in roots, given highest precedence
// first; cols[i] are the collections of roots[i].
func NewSet(roots []Root, cols [][]*Collection) *Set {
	s := &Set{Roots: roots, byName: map[string][]*Collection{},
		winner: map[string]*Collection{}, agents: map[string]*Collection{},
		stats: map[string]bool{}, constraints: map[string]*Constraint{}}
	for i := range roots {
		group := cols[i]
		if !slices.IsSortedFunc(group, compareInRoot) {
			group = slices.Clone(group)
			slices.SortStableFunc(group, compareInRoot)
		}
		for _, c := range group {
			s.Collections = append(s.Collections, c)
			s.byName[c.Name] = append(s.byName[c.Name], c)
			if dn := filepath.Base(c.Dir); dn != c.Name {
				// The directory name is only a fast path: it finds skipped
				// directories whose metadata could not name them.
				if !c.Valid {
					s.byName[dn] = append(s.byName[dn], c)
				}
			}
		}
	}
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, c := range s.byName[n] {
			if c.Valid && c.Name == n {
				s.winner[n] = c
				s.winners = append(s.winners, c)
				break
			}
		}
	}
	for _, w := range s.winners {
		for _, r := range w.Resources {
			if r.Kind == KindAgent {
				if _, ok := s.agents[r.Name]; !ok {
					s.agents[r.Name] = w
				}
			}
		}
	}
	return s
}

// compareInRoot orders the collections of one root as resolution takes
// them: flat (and hybrid) layouts before nested ones, then by path.
func compareInRoot(a, b *Collection) int {
	fa, fb := a.Layout != LayoutNested, b.Layout != LayoutNested
	if fa != fb {
		if fa {
			return -1
		}
		return 1
	}
	return ComparePaths(filepath.ToSlash(a.Dir), filepath.ToSlash(b.Dir))
}

// SortInRoot sorts the collections of one root in the order NewSet takes
// them, so that NewSet need not copy and sort them again.
func SortInRoot(cols []*Collection) { slices.SortStableFunc(cols, compareInRoot) }

// Resolve returns what name resolves to.
func (s *Set) Resolve(name string) Resolution {
	r := Resolution{Name: name, Shadowed: []*Collection{}, Skipped: []*Collection{}}
	for _, c := range s.byName[name] {
		switch {
		case !c.Valid:
			r.Skipped = append(r.Skipped, c)
		case r.Winner == nil:
			r.Winner = c
		default:
			r.Shadowed = append(r.Shadowed, c)
		}
	}
	return r
}

// Lookup returns the winning collection of name, or nil.
func (s *Set) Lookup(name string) *Collection { return s.winner[name] }

// Winners returns the winning collection of every name, in name order.
// The slice is shared: do not modify it.
func (s *Set) Winners() []*Collection { return s.winners }

// Owner returns the collection holding path, if any: the one whose
// directory, real directory or base contains it (deepest first).
func (s *Set) Owner(path string) *Collection {
	var best *Collection
	bestLen := -1
	for _, c := range s.Collections {
		for _, d := range []string{c.Dir, c.RealDir, c.Base} {
			if within(path, d) && len(d) > bestLen {
				best, bestLen = c, len(d)
			}
		}
	}
	return best
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// shadowDiagnostics reports every valid collection that loses to another of
// its name, as information on its pyproject.toml.
func (s *Set) shadowDiagnostics() []Diagnostic {
	var out []Diagnostic
	for _, c := range s.Collections {
		if !c.Valid {
			continue
		}
		w := s.Lookup(c.Name)
		if w == nil || w == c {
			continue
		}
		code, sev, msg := CodeShadowed, SeverityInfo, fmt.Sprintf("collection %s is shadowed by %s (%s root)", c.Name, w.Dir, w.Root.Kind)
		if w.Root == c.Root {
			code, sev = CodeDuplicateName, SeverityWarning
			msg = fmt.Sprintf("collection %s is defined twice in the %s root; %s wins", c.Name, c.Root.Kind, w.Dir)
		}
		out = append(out, Diagnostic{Code: code, Severity: sev, Path: c.Pyproject, Message: msg, Collection: c.Name})
	}
	return out
}
