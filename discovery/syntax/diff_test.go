package syntax_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// apply applies the hunks of a unified diff (no file headers) to a; it
// fails on a hunk whose header does not count its lines, or whose
// removed and kept lines are not a's.
func apply(a []string, diff string) ([]string, error) {
	var out []string
	next := 0 // the next line of a not yet copied
	lines := strings.SplitAfter(diff, "\n")
	for i := 0; i < len(lines) && lines[i] != ""; {
		h := lines[i]
		var oldStart, oc, nc int
		if !strings.HasPrefix(h, "@@ -") {
			return nil, fmt.Errorf("line %d: %q is no hunk header", i, h)
		}
		parts := strings.Fields(h)
		parse := func(s string) (int, int) {
			start, count, ok := strings.Cut(s[1:], ",")
			st, _ := strconv.Atoi(start)
			c := 1
			if ok {
				c, _ = strconv.Atoi(count)
			}
			return st, c
		}
		oldStart, oc = parse(parts[1])
		_, nc = parse(parts[2])
		from := oldStart - 1
		if oc == 0 {
			from = oldStart
		}
		if from < next {
			return nil, fmt.Errorf("hunk %q overlaps", h)
		}
		out = append(out, a[next:from]...)
		next = from
		i++
		gotOld, gotNew := 0, 0
		for i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			i++
			text := l[1:]
			if i < len(lines) && lines[i] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if next >= len(a) || a[next] != text {
					return nil, fmt.Errorf("hunk %q: line %d is %q, not %q", h, next, a[min(next, len(a)-1)], text)
				}
				next++
				gotOld++
				if l[0] == ' ' {
					out = append(out, text)
					gotNew++
				}
			case '+':
				out = append(out, text)
				gotNew++
			default:
				return nil, fmt.Errorf("hunk %q: line %q", h, l)
			}
		}
		if gotOld != oc || gotNew != nc {
			return nil, fmt.Errorf("hunk %q counts %d,%d; holds %d,%d", h, oc, nc, gotOld, gotNew)
		}
	}
	return append(out, a[next:]...), nil
}

// FuzzDiff: the diff between any two texts, applied to the first, gives
// the second.
func FuzzDiff(f *testing.F) {
	for _, s := range [][2]string{
		{"a\nb\nc\n", "a\nc\n"}, {"", "x\n"}, {"x\n", ""}, {"a\nb", "a\nb\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\nX\n4\n5\n6\n7\n8\nY\n10\n"},
		{"same\n", "same\n"}, {"a\na\na\n", "a\nb\na\n"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		al := slices.Collect(strings.Lines(a))
		d := syntax.UnifiedDiff([]byte(a), []byte(b))
		if a == b && d != "" {
			t.Fatalf("a diff of equal texts: %q", d)
		}
		got, err := apply(al, d)
		if err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
		if strings.Join(got, "") != b {
			t.Fatalf("applied: %q, want %q\n%s", strings.Join(got, ""), b, d)
		}
	})
}

// TestUnifiedDiff: hunks, their context and the marker of a text that
// does not end in a newline, as git writes them.
func TestUnifiedDiff(t *testing.T) {
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
			got := syntax.UnifiedDiff([]byte(tc.a), []byte(tc.b))
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
