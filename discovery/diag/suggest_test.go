package diag_test

import (
	"maps"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
)

func TestSuggest(t *testing.T) {
	keys := []string{"profile", "session", "providers", "tools", "hooks", "agents", "default_provider", "ui", "task", "model", "model_role"}
	tests := []struct {
		key, want string
	}{
		{"sesion", "session"},      // deletion
		{"sessions", "session"},    // insertion
		{"tols", "tools"},          // deletion
		{"hokos", "hooks"},         // swap
		{"provdiers", "providers"}, // swap
		{"Tools", "tools"},         // case
		{"default-provider", "default_provider"},
		{"DefaultProvider", "default_provider"},
		{"modelrole", "model_role"},
		{"model-role", "model_role"},
		{"modle", "model"},
		{"ux", "ui"}, // short keys: one edit
		{"xy", ""},   // two edits from "ui": too far for a short key
		{"profiles", "profile"},
		{"agent", "agents"},
		{"tasks", "task"},
		{"model_temperature", ""},
		{"wibble", ""},
		{"", ""},
		{"tools", ""}, // a known key needs no hint
		{strings.Repeat("t", 100), ""},
	}
	for _, tc := range tests {
		if got := diag.Suggest(tc.key, keys); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

// TestSuggestionsAfterChanges holds the cache of suggestions, carried from
// one set of winning names to the next, to a fresh walk of the names after
// every change: names that differ by case, '-' or '_' and by an edit or
// two, so that fold hits, ties and removals of the answer all happen.
func TestSuggestionsAfterChanges(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	word := func() string {
		const letters = "abcA-_"
		b := make([]byte, 1+r.Intn(6))
		for i := range b {
			b[i] = letters[r.Intn(len(letters))]
		}
		return string(b)
	}
	names := map[string]bool{}
	for range 40 {
		names[word()] = true
	}
	var keys []string
	for range 30 {
		keys = append(keys, word())
	}
	sorted := func() []string { return slices.Sorted(maps.Keys(names)) }
	cache := diag.NewSuggestionCache()
	checked := 0
	for step := range 400 {
		all := sorted()
		for _, k := range keys[:1+r.Intn(len(keys))] {
			if !names[k] {
				cache.Answer(k, all)
			}
		}
		changed := map[string]bool{}
		for range 1 + r.Intn(5) {
			n := word()
			if names[n] {
				delete(names, n)
				changed[n] = false
			} else {
				names[n] = true
				changed[n] = true
			}
		}
		cache = cache.After(changed)
		all = sorted()
		for _, k := range keys {
			got, ok := cache.Cached(k)
			if !ok {
				continue
			}
			checked++
			if want := diag.SuggestFrom(k, slices.Values(all)); got != want {
				t.Fatalf("step %d: after %v the cache suggests %q for %q, a walk of the names %q", step, changed, got, k, want)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d cached answers checked", checked)
	}
}

// TestBagDistance holds bagDistance to the sum of the differences of two
// strings' byte counts, counted the long way: the key's lowercased as a
// suggester lowercases it, the other's ASCII capitals lowercased.
func TestBagDistance(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	word := func() string {
		const letters = "abAB-_é"
		b := make([]byte, r.Intn(9))
		for i := range b {
			b[i] = letters[r.Intn(len(letters))]
		}
		return string(b)
	}
	for range 5000 {
		key, s := word(), word()
		var counts [256]int
		for _, c := range []byte(strings.ToLower(key)) {
			counts[c]++
		}
		for _, c := range []byte(s) {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			counts[c]--
		}
		want := 0
		for _, n := range counts {
			want += max(n, -n)
		}
		if got := diag.BagDistance(key, s); got != want {
			t.Fatalf("BagDistance(%q, %q) = %d, want %d", key, s, got, want)
		}
	}
}
