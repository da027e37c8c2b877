package config

import (
	"path"
	"strings"
	"testing"
	"time"
)

// refMatch is the plain definition of a per-path glob's match, by
// backtracking over components: exponential in the number of `**`, so
// only for small inputs.
func refMatch(pattern, rel string) bool {
	g, err := ParseGlob(pattern)
	if err != nil {
		return false
	}
	parts := strings.Split(rel, "/")
	if g.base {
		for _, p := range parts {
			if ok, _ := path.Match(g.parts[0], p); ok {
				return true
			}
		}
		return false
	}
	for n := len(parts); n > 0; n-- {
		if refMatchParts(g.parts, parts[:n]) {
			return true
		}
	}
	return false
}

func refMatchParts(pat, parts []string) bool {
	if len(pat) == 0 {
		return len(parts) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(parts); i++ {
			if refMatchParts(pat[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], parts[0])
	return ok && refMatchParts(pat[1:], parts[1:])
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, rel string
		want         bool
	}{
		{"*.md", "a/b/c.md", true},
		{"*.md", "a/b/c.txt", false},
		{"b", "a/b/c.md", true}, // a base-name pattern matches a directory too
		{"agents/*.md", "agents/x.md", true},
		{"agents/*.md", "c/agents/x.md", false},
		{"**/agents/*.md", "c/agents/x.md", true},
		{"**/agents/*.md", "agents/x.md", true},
		{"**/agents/*.md", "c/d/agents/x.md", true},
		{"**/agents/*.md", "c/d/agents/sub/x.md", false},
		{"a/**", "a", true},
		{"a/**", "a/b/c", true},
		{"a/**", "b/a", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/b/z.md", true}, // below a matched directory
		{"a/**/b", "a/x/y/c", false},
		{"**/**/b", "b", true},
		{"**/**/b", "x/y/b/c", true},
		{"./a/b", "a/b/c", true},
		{"a/b/", "a/b/c", true},
		{"a/?/c", "a/b/c", true},
		{"a/?/c", "a/bb/c", false},
		{"a/[bc]/d", "a/c/d", true},
		{"a/[^bc]/d", "a/c/d", false},
		{"a/*/d", "a//d", true},
		{"**/x", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+" "+tc.rel, func(t *testing.T) {
			g, err := ParseGlob(tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Match(tc.rel); got != tc.want {
				t.Errorf("match(%q, %q) = %v, want %v", tc.pattern, tc.rel, got, tc.want)
			}
			if ref := refMatch(tc.pattern, tc.rel); ref != tc.want {
				t.Errorf("reference match(%q, %q) = %v, want %v", tc.pattern, tc.rel, ref, tc.want)
			}
		})
	}
}

// TestGlobPathological: a glob of many `**` and stars against a deep path
// is answered in time linear in their product, and rightly. Matching by
// backtracking took longer than ten minutes; the test's deadline is far
// above what a linear match takes and far below that.
func TestGlobPathological(t *testing.T) {
	pattern := strings.Repeat("**/", 40) + "a" + strings.Repeat("*a", 40) + "*b"
	g, err := ParseGlob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat(strings.Repeat("a", 60)+"/", 20)
	cases := []struct {
		rel  string
		want bool
	}{
		{deep + "x.md", false},
		{deep + strings.Repeat("a", 50) + "b/x.md", true},
		{deep + strings.Repeat("a", 30) + "b", false}, // too few a's for 41 of them
	}
	done := make(chan []bool, 1)
	go func() {
		var got []bool
		for _, c := range cases {
			got = append(got, g.Match(c.rel))
		}
		done <- got
	}()
	select {
	case got := <-done:
		for i, c := range cases {
			if got[i] != c.want {
				t.Errorf("match(%q) = %v, want %v", c.rel, got[i], c.want)
			}
		}
	case <-time.After(time.Minute):
		t.Fatal("a pathological glob is still matching after a minute")
	}
}

// FuzzGlobMatch compares the glob matcher with the backtracking
// definition on small inputs.
func FuzzGlobMatch(f *testing.F) {
	f.Add("**/agents/*.md", "c/agents/x.md")
	f.Add("a/**/b", "a/x/b/c")
	f.Add("**/**/b", "b")
	f.Add("*.md", "a/b.md")
	f.Add("a/[b-d]/?", "a/c/e")
	f.Add("**", "a/b")
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		if strings.Count(pattern, "/") > 8 || strings.Count(rel, "/") > 8 || len(pattern) > 64 || len(rel) > 64 {
			return
		}
		g, err := ParseGlob(pattern)
		if err != nil {
			return
		}
		if got, want := g.Match(rel), refMatch(pattern, rel); got != want {
			t.Errorf("match(%q, %q) = %v, reference %v", pattern, rel, got, want)
		}
	})
}
