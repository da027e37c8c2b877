package discovery

import (
	"iter"
	"slices"
	"strings"
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
	if key == "" || len(key) > maxSuggestLen {
		return ""
	}
	folded := foldKey(key)
	lowKey := strings.ToLower(key)
	keyBag := byteBag(lowKey)
	best, bestDist := "", maxSuggestDistance+1
	foldHit := ""
	for c := range candidates {
		if c == key || len(c) > maxSuggestLen {
			continue
		}
		if foldHit == "" && foldsTo(c, folded) {
			foldHit = c
			continue
		}
		if foldHit != "" {
			continue
		}
		// A one-letter key is two edits from every two-letter key; only
		// suggest when the distance is small relative to the length.
		limit := maxSuggestDistance
		if n := min(len(key), len(c)); n <= 3 {
			limit = 1
		}
		if d := len(c) - len(key); d > limit || -d > limit {
			continue
		}
		// Each edit changes the bytes' counts by two at most: a candidate
		// whose counts differ more is too far, and costs no alignment.
		if bagDistance(keyBag, c) > 2*limit {
			continue
		}
		if d := editDistance(lowKey, strings.ToLower(c)); d <= limit && d < bestDist {
			best, bestDist = c, d
		}
	}
	if foldHit != "" {
		return foldHit
	}
	return best
}

// foldKey lowercases s and drops '-' and '_', so that "Default-Provider",
// "default_provider" and "defaultprovider" compare equal.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == '_':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		b.WriteByte(c)
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

// bagDistance is the size of the difference between the byte counts bag
// and those of s, lowercased: a lower bound of twice their edit distance.
func bagDistance(bag [256]int16, s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		bag[c]--
	}
	d := 0
	for _, n := range bag {
		if n < 0 {
			d -= int(n)
		} else {
			d += int(n)
		}
	}
	return d
}

// foldsTo reports whether foldKey(s) == folded, without building it.
func foldsTo(s, folded string) bool {
	j := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == '_':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		if j == len(folded) || folded[j] != c {
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
