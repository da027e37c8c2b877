package resolve

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/internal/pmap"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Set is every collection of every root, resolved by name: project over
// user over bundled, and within one root a flat layout over a nested one,
// then path order.
//
// A Set is immutable. Apply returns a new Set with some collections taken
// out and others put in; it shares everything else with the old one, which
// stays valid, so a change costs what it changes, not what the Set holds.
type Set struct {
	// Roots are the roots in precedence order.
	Roots []discovery.Root
	// rootIdx maps each root to its index in Roots; shared by every Set
	// derived from one NewSet.
	rootIdx map[discovery.Root]int
	inRoot  []pmap.Map[string, *discovery.Collection] // by inRootKey, one map per root
	// byName holds, for each name, every collection that answers to it,
	// in precedence order: valid ones by metadata name, unusable ones by
	// directory name too.
	byName pmap.Map[string, []*discovery.Collection]
	winner pmap.Map[string, *discovery.Collection]
	// holders maps a bare agent name to the names of the winning
	// collections that have it.
	holders pmap.Map[string, pmap.Map[string, struct{}]]
	// byDir maps a collection's directory, real directory and resource
	// base to the collections there, in precedence order.
	byDir pmap.Map[string, []*discovery.Collection]

	// Built when first asked for.
	allOnce     sync.Once
	all         []*discovery.Collection
	winnersOnce sync.Once
	winners     []*discovery.Collection

	// stats remembers, for the life of the set, whether a path that is not
	// a resource exists (mentions of docs and the like).
	statMu      sync.Mutex // guards stats and constraints; held only to read or write them
	stats       map[string]bool
	constraints map[string]*syntax.Constraint
	// suggested remembers the near name of each unresolved collection
	// name asked about; Sets derived by Apply share it for as long as the
	// names that have a winner stay the same.
	suggested *diag.Suggestions
	// sessions remembers the effective session block of parent profiles
	// (see EffectiveSession), by ProfileRef.
	sessions sync.Map
}

// Resolution is what a name resolves to.
type Resolution struct {
	Name string `json:"name"`
	// Winner is nil when the name resolves nowhere.
	Winner *discovery.Collection `json:"winner"`
	// Shadowed are valid collections of the same name that lose.
	Shadowed []*discovery.Collection `json:"shadowed"`
	// Skipped are unusable directories that would have matched the name.
	Skipped []*discovery.Collection `json:"skipped"`
}

// resolve.Delta says what an Apply changed: the names whose candidates changed
// (a collection of that name came, went or was replaced), and the bare
// agent names that now resolve to another collection (not to the same one
// read again). Names also holds
// NamesDep when a name started or stopped resolving, and Agents the
// agent of AnyAgentDep (without AgentDep) when a bare agent name did:
// references that do not resolve suggest near names, so their messages
// depend on those sets.
type Delta struct {
	Names  []string
	Agents []string
}

// AgentDep prefixes a bare agent name among a collection's dependencies
// (see check.RefNames).
const AgentDep = "agent:"

// Dependencies that no one name stands for (see check.RefNames). A reference
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

// NewSet resolves the collections found in roots, given highest precedence
// first; cols[i] are the collections of roots[i].
func NewSet(roots []discovery.Root, cols [][]*discovery.Collection) *Set {
	s := &Set{Roots: roots, rootIdx: make(map[discovery.Root]int, len(roots)), inRoot: make([]pmap.Map[string, *discovery.Collection], len(roots)),
		suggested: &diag.Suggestions{}}
	for i, r := range roots {
		if _, dup := s.rootIdx[r]; !dup {
			s.rootIdx[r] = i
		}
	}
	byName := map[string][]*discovery.Collection{}
	byDir := map[string][]*discovery.Collection{}
	for i := range roots {
		if i >= len(cols) {
			break
		}
		s.inRoot[i] = pmap.Build(sortedEntries(inRootKeys(cols[i])))
		for _, c := range s.inRoot[i].All() {
			for _, n := range c.AnswersTo() {
				byName[n] = append(byName[n], c)
			}
			for _, d := range dirsOf(c) {
				byDir[d] = append(byDir[d], c)
			}
		}
	}
	s.byName = pmap.Build(sortedEntries(packLists(byName)))
	s.byDir = pmap.Build(sortedEntries(packLists(byDir)))
	winners := map[string]*discovery.Collection{}
	holders := map[string][]string{}
	for n, cs := range s.byName.All() {
		if w := pickWinner(n, cs); w != nil {
			winners[n] = w
			for _, a := range agentNames(w) {
				holders[a] = append(holders[a], n) // names come in order
			}
		}
	}
	s.winner = pmap.Build(sortedEntries(winners))
	hs := make(map[string]pmap.Map[string, struct{}], len(holders))
	for a, names := range holders {
		hs[a] = pmap.Build(func(yield func(string, struct{}) bool) {
			for _, n := range names {
				if !yield(n, struct{}{}) {
					return
				}
			}
		})
	}
	s.holders = pmap.Build(sortedEntries(hs))
	return s
}

// sortedEntries yields the entries of m in key order.
func sortedEntries[V any](m map[string]V) func(func(string, V) bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return func(yield func(string, V) bool) {
		for _, k := range keys {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}

// A Set keeps what NewSet builds for its life, and the Sets derived from
// it share most of it: its keys and lists are made in one object each,
// not one per collection among the garbage of building them.

// packLists moves the lists of m into one slice, each a part of it clipped
// to its length, and returns m.
func packLists[V any](m map[string][]V) map[string][]V {
	n := 0
	for _, l := range m {
		n += len(l)
	}
	all := make([]V, 0, n)
	for k, l := range m {
		start := len(all)
		all = append(all, l...)
		m[k] = all[start:len(all):len(all)]
	}
	return m
}

// inRootKeys returns the collections of group by inRootKey, the keys parts
// of one string.
func inRootKeys(group []*discovery.Collection) map[string]*discovery.Collection {
	keys := make([]string, len(group))
	size := 0
	for i, c := range group {
		keys[i] = inRootKey(c)
		size += len(keys[i])
	}
	var text strings.Builder
	text.Grow(size)
	keyed := make(map[string]*discovery.Collection, len(group))
	for i, c := range group {
		start := text.Len()
		text.WriteString(keys[i])
		keyed[text.String()[start:]] = c
	}
	return keyed
}

// inRootKey orders the collections of one root as resolution takes them:
// flat (and hybrid) layouts before nested ones, then component-wise by
// path. A path separator sorts before every other byte, so byte order of
// the key is component order of the path.
func inRootKey(c *discovery.Collection) string {
	flag := "0"
	if c.Layout == discovery.LayoutNested {
		flag = "1"
	}
	return flag + strings.ReplaceAll(filepath.ToSlash(c.Dir), "/", "\x00")
}

// dirsOf returns the directories that hold c's files, without repeats.
func dirsOf(c *discovery.Collection) []string {
	out := []string{c.Dir}
	for _, d := range []string{c.RealDir, c.Base} {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// pickWinner returns the first valid candidate whose metadata name is n.
func pickWinner(n string, cs []*discovery.Collection) *discovery.Collection {
	for _, c := range cs {
		if c.Valid && c.Name == n {
			return c
		}
	}
	return nil
}

func agentNames(c *discovery.Collection) []string {
	var out []string
	for _, r := range c.Resources {
		if r.Kind == discovery.KindAgent {
			out = append(out, r.Name)
		}
	}
	return out
}

// RootIndex returns the index of r in s.Roots, or -1.
func (s *Set) RootIndex(r discovery.Root) int {
	if i, ok := s.rootIdx[r]; ok {
		return i
	}
	return -1
}

// precedes reports whether a comes before b in precedence order.
func (s *Set) precedes(a, b *discovery.Collection) bool {
	ia, ib := s.rootIdx[a.Root], s.rootIdx[b.Root]
	if ia != ib {
		return ia < ib
	}
	return inRootKey(a) < inRootKey(b)
}

// WithFront returns the Set with the roots front, holding nothing yet,
// ahead of every root of s: roots of higher precedence, for collections
// checked before they are installed (see Apply to put them in). It
// costs what the roots number, not what the Set holds; s is left as it
// is.
func (s *Set) WithFront(front []discovery.Root) *Set {
	if len(front) == 0 {
		return s
	}
	roots := append(slices.Clone(front), s.Roots...)
	t := &Set{Roots: roots, rootIdx: make(map[discovery.Root]int, len(roots)),
		inRoot: append(make([]pmap.Map[string, *discovery.Collection], len(front)), s.inRoot...),
		byName: s.byName, winner: s.winner, holders: s.holders, byDir: s.byDir, suggested: s.suggested}
	for i, r := range roots {
		if _, dup := t.rootIdx[r]; !dup {
			t.rootIdx[r] = i
		}
	}
	return t
}

// Holding returns the collections whose directory or real directory is
// dir, in precedence order.
func (s *Set) Holding(dir string) []*discovery.Collection {
	var out []*discovery.Collection
	for _, c := range s.byDir.Value(dir) {
		if c.Dir == dir || c.RealDir == dir {
			out = append(out, c)
		}
	}
	return out
}

// Apply returns the Set without the collections in removed and with those
// in added, and what changed. A collection read again is removed (its old
// value) and added (its new one) in the same call. Collections of a root
// the Set does not have are ignored.
func (s *Set) Apply(removed, added []*discovery.Collection) (*Set, Delta) {
	t := &Set{Roots: s.Roots, rootIdx: s.rootIdx, inRoot: slices.Clone(s.inRoot),
		byName: s.byName, winner: s.winner, holders: s.holders, byDir: s.byDir}
	touched := map[string]bool{}
	for _, c := range removed {
		i, ok := s.rootIdx[c.Root]
		if !ok || t.inRoot[i].Value(inRootKey(c)) != c {
			continue
		}
		t.inRoot[i] = t.inRoot[i].Delete(inRootKey(c))
		for _, n := range c.AnswersTo() {
			touched[n] = true
			t.byName = without(t.byName, n, c)
		}
		for _, d := range dirsOf(c) {
			t.byDir = without(t.byDir, d, c)
		}
	}
	for _, c := range added {
		i, ok := s.rootIdx[c.Root]
		if !ok {
			continue
		}
		if old := t.inRoot[i].Value(inRootKey(c)); old != nil {
			// Added without removing the old value: replace it.
			t, _ = t.Apply([]*discovery.Collection{old}, nil)
			for _, n := range old.AnswersTo() {
				touched[n] = true
			}
		}
		t.inRoot[i] = t.inRoot[i].Set(inRootKey(c), c)
		for _, n := range c.AnswersTo() {
			touched[n] = true
			t.byName = t.with(t.byName, n, c)
		}
		for _, d := range dirsOf(c) {
			t.byDir = t.with(t.byDir, d, c)
		}
	}
	var delta Delta
	agents := map[string]bool{}
	namesChanged := false
	for n := range touched {
		delta.Names = append(delta.Names, n)
		old := t.winner.Value(n)
		w := pickWinner(n, t.byName.Value(n))
		if old == w {
			continue
		}
		if (old == nil) != (w == nil) {
			namesChanged = true
		}
		if w == nil {
			t.winner = t.winner.Delete(n)
		} else {
			t.winner = t.winner.Set(n, w)
		}
		if old != nil {
			for _, a := range agentNames(old) {
				agents[a] = true
				if hs := t.holders.Value(a).Delete(n); hs.Len() == 0 {
					t.holders = t.holders.Delete(a)
				} else {
					t.holders = t.holders.Set(a, hs)
				}
			}
		}
		if w != nil {
			for _, a := range agentNames(w) {
				agents[a] = true
				t.holders = t.holders.Set(a, t.holders.Value(a).Set(n, struct{}{}))
			}
		}
	}
	anyAgentChanged := false
	for a := range agents {
		if was, is := s.agentCollection(a), t.agentCollection(a); !sameDir(was, is) {
			delta.Agents = append(delta.Agents, a)
			if (was == nil) != (is == nil) {
				anyAgentChanged = true
			}
		}
	}
	if namesChanged {
		delta.Names = append(delta.Names, NamesDep)
	}
	changed := map[string]bool{}
	for n := range touched {
		if wins := t.winner.Has(n); s.winner.Has(n) != wins {
			changed[n] = wins
		}
	}
	t.suggested = s.suggested
	if len(changed) > 0 {
		if s.suggested == nil {
			t.suggested = &diag.Suggestions{}
		} else {
			t.suggested = s.suggested.After(changed)
		}
	}
	if anyAgentChanged {
		delta.Agents = append(delta.Agents, anyAgent)
	}
	sort.Strings(delta.Names)
	sort.Strings(delta.Agents)
	return t, delta
}

// sameDir reports whether a and b are both nil or are the same directory
// of the same root: a collection read again is another value, not another
// collection.
func sameDir(a, b *discovery.Collection) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Root == b.Root && a.Dir == b.Dir
}

// without returns m with c taken out of the list at key k.
func without(m pmap.Map[string, []*discovery.Collection], k string, c *discovery.Collection) pmap.Map[string, []*discovery.Collection] {
	cs := m.Value(k)
	i := slices.Index(cs, c)
	if i < 0 {
		return m
	}
	if len(cs) == 1 {
		return m.Delete(k)
	}
	return m.Set(k, slices.Delete(slices.Clone(cs), i, i+1))
}

// with returns m with c put into the list at key k, in precedence order.
func (s *Set) with(m pmap.Map[string, []*discovery.Collection], k string, c *discovery.Collection) pmap.Map[string, []*discovery.Collection] {
	cs := m.Value(k)
	if slices.Contains(cs, c) {
		return m
	}
	i := 0
	for i < len(cs) && s.precedes(cs[i], c) {
		i++
	}
	return m.Set(k, slices.Insert(slices.Clone(cs), i, c))
}

// Collections returns every collection, roots in precedence order and
// each root's in resolution order. The slice is built once per Set and
// shared: do not modify it.
func (s *Set) Collections() []*discovery.Collection {
	s.allOnce.Do(func() {
		n := 0
		for _, m := range s.inRoot {
			n += m.Len()
		}
		s.all = make([]*discovery.Collection, 0, n)
		for _, m := range s.inRoot {
			s.all = append(s.all, m.Values()...)
		}
	})
	return s.all
}

// Len returns how many collections the set holds.
func (s *Set) Len() int {
	n := 0
	for _, m := range s.inRoot {
		n += m.Len()
	}
	return n
}

// InRoot returns the collections of Roots[i] in resolution order.
func (s *Set) InRoot(i int) []*discovery.Collection {
	if i < 0 || i >= len(s.inRoot) {
		return nil
	}
	return s.inRoot[i].Values()
}

// Collection returns the collection whose directory is dir in root r, or
// nil.
func (s *Set) Collection(r discovery.Root, dir string) *discovery.Collection {
	for _, c := range s.byDir.Value(dir) {
		if c.Root == r && c.Dir == dir {
			return c
		}
	}
	return nil
}

// At returns the collection whose directory is dir, in whichever root;
// of two, the one of higher precedence. It returns nil when there is none.
func (s *Set) At(dir string) *discovery.Collection {
	for _, c := range s.byDir.Value(dir) {
		if c.Dir == dir {
			return c
		}
	}
	return nil
}

// Around returns, once each and in no promised order, the collections
// whose directory, real directory or resource base is path, lies above it
// or lies below it: every collection that can hold a file at or under
// path. Its cost grows with path's depth and with the number it returns,
// not with the Set.
func (s *Set) Around(path string) []*discovery.Collection {
	var out []*discovery.Collection
	seen := map[*discovery.Collection]bool{}
	add := func(cs []*discovery.Collection) {
		for _, c := range cs {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	for d := path; ; {
		add(s.byDir.Value(d))
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	below := path + string(filepath.Separator)
	if strings.HasSuffix(path, string(filepath.Separator)) {
		below = path // a volume's root: "/"
	}
	for d, cs := range s.byDir.From(below) {
		if !strings.HasPrefix(d, below) {
			break
		}
		add(cs)
	}
	return out
}

// Resolve returns what name resolves to.
func (s *Set) Resolve(name string) Resolution {
	r := Resolution{Name: name, Shadowed: []*discovery.Collection{}, Skipped: []*discovery.Collection{}}
	for _, c := range s.byName.Value(name) {
		switch {
		case !c.Valid:
			r.Skipped = append(r.Skipped, c)
		case r.Winner == nil && c.Name == name:
			r.Winner = c
		case c.Name == name:
			r.Shadowed = append(r.Shadowed, c)
		}
	}
	return r
}

// Lookup returns the winning collection of name, or nil.
func (s *Set) Lookup(name string) *discovery.Collection { return s.winner.Value(name) }

// Names returns every name some collection answers to, in order.
func (s *Set) Names() []string {
	out := make([]string, 0, s.byName.Len())
	for n := range s.byName.All() {
		out = append(out, n)
	}
	return out
}

// Winners returns the winning collection of every name, in name order.
// The slice is built once per Set and shared: do not modify it.
func (s *Set) Winners() []*discovery.Collection {
	s.winnersOnce.Do(func() { s.winners = s.winner.Values() })
	return s.winners
}

// agentCollection returns the first winning collection, in name order,
// that has an agent of this bare name, or nil.
func (s *Set) agentCollection(name string) *discovery.Collection {
	if n, _, ok := s.holders.Value(name).Min(); ok {
		return s.winner.Value(n)
	}
	return nil
}

// Owner returns the collection holding path, if any: the one whose
// directory, real directory or base contains it (deepest first; of two
// at the same depth, the one of higher precedence).
func (s *Set) Owner(path string) *discovery.Collection {
	for p := filepath.Clean(path); ; {
		if cs := s.byDir.Value(p); len(cs) > 0 {
			return cs[0]
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}
