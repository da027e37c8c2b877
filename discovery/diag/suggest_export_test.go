package diag

import (
	"slices"
	"strings"
)

// SuggestionCache is the cache of a Set's "did you mean" answers.
type SuggestionCache struct{ c *Suggestions }

// NewSuggestionCache returns an empty cache.
func NewSuggestionCache() SuggestionCache { return SuggestionCache{&Suggestions{}} }

// Answer answers key over names, sorted, through the cache.
func (c SuggestionCache) Answer(key string, names []string) string {
	return c.c.Answer(key, slices.Values(names))
}

// After is the cache for names changed as changed says (see
// Suggestions.After).
func (c SuggestionCache) After(changed map[string]bool) SuggestionCache {
	return SuggestionCache{c.c.After(changed)}
}

// Cached returns the cached answer for key.
func (c SuggestionCache) Cached(key string) (near string, ok bool) {
	c.c.mu.Lock()
	defer c.c.mu.Unlock()
	n, ok := c.c.near[key]
	return n.name, ok
}

// BagDistance is bagDistance of key, lowercased as a suggester does it,
// and s.
func BagDistance(key, s string) int {
	low := strings.ToLower(key)
	bag := byteBag(low)
	return bagDistance(&bag, len(low), s)
}
