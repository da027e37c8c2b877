package main

import (
	"strings"
	"testing"
)

// TestUnifiedHunks: changes far apart are hunks of their own, changes
// whose context touches are one, and a last line without a newline says
// so.
func TestUnifiedHunks(t *testing.T) {
	lines := func(n int, change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				b.WriteString(s + "\n")
			} else {
				b.WriteString("l" + string(rune('0'+i%10)) + "\n")
			}
		}
		return b.String()
	}
	tests := []struct {
		name string
		a, b string
		want string
	}{
		{"same", "x\ny\n", "x\ny\n", ""},
		{"first line", "x\ny\n", "X\ny\n", "@@ -1,2 +1,2 @@\n-x\n+X\n y\n"},
		{"two hunks", lines(20, nil), lines(20, map[int]string{2: "A", 18: "B"}),
			"@@ -1,5 +1,5 @@\n l1\n-l2\n+A\n l3\n l4\n l5\n@@ -15,6 +15,6 @@\n l5\n l6\n l7\n-l8\n+B\n l9\n l0\n"},
		{"one hunk when the context touches", lines(12, nil), lines(12, map[int]string{3: "A", 9: "B"}),
			"@@ -1,12 +1,12 @@\n l1\n l2\n-l3\n+A\n l4\n l5\n l6\n l7\n l8\n-l9\n+B\n l0\n l1\n l2\n"},
		{"no newline at the end", "x\ny", "x\nY", "@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+Y\n\\ No newline at end of file\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := unifiedHunks(splitLines([]byte(tc.a)), splitLines([]byte(tc.b)))
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
