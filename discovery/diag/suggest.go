package diag

import (
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
)

// maxSuggestDistance is the largest edit distance at which a known key is
// offered as a "did you mean" hint for an unknown one.
const maxSuggestDistance = 2

// maxSuggestLen bounds the length of keys compared for hints, so that a
// pathological key costs nothing.
const maxSuggestLen = 64

// Suggest returns the candidate that key most likely misspells, or "" when
// none is close. A candidate is close when it differs from key only in case
// or in '-' versus '_' (or their absence), or when it is at most two edits
// away (insertions, deletions, substitutions and swaps of adjacent bytes).
// Ties go to the earlier candidate.
func Suggest(key string, candidates []string) string {
	if slices.Contains(candidates, key) {
		return ""
	}
	return SuggestFrom(key, slices.Values(candidates))
}

// SuggestFrom is Suggest over a sequence of candidates, key itself left
// out. A candidate whose length differs from key's by more than the edit
// budget is passed over without comparing it, so that a long sequence of
// names costs little.
func SuggestFrom(key string, candidates iter.Seq[string]) string {
	s := newSuggester(key)
	if s == nil {
		return ""
	}
	for c := range candidates {
		s.offer(c, false)
	}
	return s.near.name
}

// nearest is the best candidate a suggester was offered: a fold hit (one
// that differs from the key only in case or in '-' and '_') before any
// other, then the fewest edits. The sentinel none stands for no candidate
// at all.
type nearest struct {
	name string
	dist int
	fold bool
}

// none is the nearest of no candidate: every candidate ranks before it.
var none = nearest{dist: maxSuggestDistance + 1}

// before reports whether n ranks before m. Of two candidates that rank
// alike, the earlier offered stays, unless byName: then the smaller name
// ranks first, as it comes first in a walk of sorted names.
func (n nearest) before(m nearest, byName bool) bool {
	switch {
	case n.fold != m.fold:
		return n.fold
	case !n.fold && n.dist != m.dist:
		return n.dist < m.dist
	default:
		return byName && n.name < m.name
	}
}

// suggester finds the candidate that one key most likely misspells among
// those offered to it.
type suggester struct {
	key, folded, low string
	bag              [256]int16
	near             nearest // the best offered so far
}

// newSuggester returns a suggester for key, or nil when key gets no
// suggestion whatever is offered (it is empty or too long).
func newSuggester(key string) *suggester {
	if key == "" || len(key) > maxSuggestLen {
		return nil
	}
	low := strings.ToLower(key)
	return &suggester{key: key, folded: foldKey(key), low: low, bag: byteBag(low), near: none}
}

// offer takes c as a candidate: it becomes the suggestion when it ranks
// before the one so far (see nearest.before for byName).
func (s *suggester) offer(c string, byName bool) {
	if c == s.key || len(c) > maxSuggestLen {
		return
	}
	if foldsTo(c, s.folded) {
		if n := (nearest{name: c, fold: true}); n.before(s.near, byName) {
			s.near = n
		}
		return
	}
	if s.near.fold {
		return // no edit distance beats a fold hit
	}
	// A one-letter key is two edits from every two-letter key; only
	// suggest when the distance is small relative to the length.
	limit := maxSuggestDistance
	if n := min(len(s.key), len(c)); n <= 3 {
		limit = 1
	}
	if d := len(c) - len(s.key); d > limit || -d > limit {
		return
	}
	// Each edit changes the bytes' counts by two at most: a candidate
	// whose counts differ more is too far, and costs no alignment.
	if bagDistance(&s.bag, len(s.low), c) > 2*limit {
		return
	}
	if d := editDistance(s.low, strings.ToLower(c)); d <= limit {
		if n := (nearest{name: c, dist: d}); n.before(s.near, byName) {
			s.near = n
		}
	}
}

// foldKey lowercases s and drops '-' and '_', so that "Default-Provider",
// "default_provider" and "defaultprovider" compare equal.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '-' && c != '_' {
			b.WriteByte(lowerByte(c))
		}
	}
	return b.String()
}

// byteBag counts the bytes of s, lowercased.
func byteBag(s string) (bag [256]int16) {
	for i := 0; i < len(s); i++ {
		bag[s[i]]++
	}
	return bag
}

// bagDistance is the size of the difference between the byte counts of
// the key, bag (n bytes in all), and those of s, lowercased: a lower bound
// of twice their edit distance. It takes s's bytes out of bag one by one,
// each taking one off the difference while the key has more of that byte
// and adding one after, then puts them back: a few steps for each byte of
// s, however many byte values the bag counts.
func bagDistance(bag *[256]int16, n int, s string) int {
	d := n
	for i := 0; i < len(s); i++ {
		c := lowerByte(s[i])
		if bag[c] > 0 {
			d--
		} else {
			d++
		}
		bag[c]--
	}
	for i := 0; i < len(s); i++ {
		bag[lowerByte(s[i])]++
	}
	return d
}

// lowerByte is c lowercased, when it is an ASCII capital.
func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldsTo reports whether foldKey(s) == folded, without building it.
func foldsTo(s, folded string) bool {
	j := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' || c == '_' {
			continue
		}
		if j == len(folded) || folded[j] != lowerByte(c) {
			return false
		}
		j++
	}
	return j == len(folded)
}

// editDistance is the optimal-string-alignment distance between a and b,
// counted in bytes.
func editDistance(a, b string) int {
	// Three rows: the previous two and the current one.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Suggestions is a cache of "did you mean" answers over a set of names
// that changes: a resolved Set's winning collection names, for one Set or
// more (Sets that differ in no winning name share it). The zero value is
// empty and ready to use; it is safe for concurrent use.
type Suggestions struct {
	mu   sync.Mutex         // guards fields below
	near map[string]nearest // the answer for each key asked about
}

// maxSuggestMerge bounds the work After does for a Set that changed many
// names: past it, the answers are found again when asked.
const maxSuggestMerge = 1 << 16

// After returns the cache for a Set whose winning names are this one's
// changed: changed holds each name that won in one and not the other, and
// whether it wins now. An answer stays good unless its name itself, or
// the name it suggests, stopped winning (it is found again when asked);
// a name that wins now is offered to each answer as the next in sorted
// order would be, so that a batch of new collections costs no walk of
// every name for each unresolved one, as a full rescan would.
func (c *Suggestions) After(changed map[string]bool) *Suggestions {
	t := &Suggestions{near: map[string]nearest{}}
	// The answers are copied out, and merged without the lock: the Set
	// that holds c still answers while its successor is made.
	c.mu.Lock()
	answers := maps.Clone(c.near)
	c.mu.Unlock()
	if len(changed)*len(answers) > maxSuggestMerge {
		return t
	}
	for key, near := range answers {
		if _, ok := changed[key]; ok {
			continue
		}
		s := newSuggester(key)
		if s == nil {
			t.near[key] = near
			continue
		}
		s.near = near
		kept := true
		for name, wins := range changed {
			if wins {
				s.offer(name, true)
			} else if name == near.name {
				kept = false
				break
			}
		}
		if kept {
			t.near[key] = s.near
		}
	}
	return t
}

// Answer returns the name of names, which come sorted, that key most
// likely misspells, from the cache when it has the answer.
func (c *Suggestions) Answer(key string, names iter.Seq[string]) string {
	c.mu.Lock()
	near, ok := c.near[key]
	c.mu.Unlock()
	if ok {
		return near.name
	}
	near = none
	if sg := newSuggester(key); sg != nil {
		for n := range names {
			sg.offer(n, false)
		}
		near = sg.near
	}
	c.mu.Lock()
	if c.near == nil {
		c.near = map[string]nearest{}
	}
	c.near[key] = near
	c.mu.Unlock()
	return near.name
}
