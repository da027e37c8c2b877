package syntax

import (
	"fmt"
	"slices"
	"strings"
)

// maxEdits bounds the edit distance the diff looks for between two files;
// past it, the lines between their common start and end are shown removed
// and added whole.
const maxEdits = 1000

// diffContext is how many unchanged lines a hunk shows around a change.
const diffContext = 3

// op is one line of an edit script: kept (' '), removed ('-') or added
// ('+'), with its line in a (kept, removed) and in b (kept, added).
type op struct {
	kind byte
	a, b int
}

// UnifiedDiff returns the hunks of a unified diff from a to b (no file
// headers): a shortest edit script, each change with diffContext
// unchanged lines around it, changes whose context touches in one hunk,
// and the marker of a text that does not end in a newline, as git writes
// them. It is "" when a and b are equal.
func UnifiedDiff(a, b []byte) string {
	return unified(diffLines(a), diffLines(b))
}

// diffLines splits text into lines, each with its newline (the last may
// have none).
func diffLines(b []byte) []string {
	return slices.Collect(strings.Lines(string(b)))
}

// editScript returns a shortest edit script from a to b (Myers' greedy
// algorithm, after their common start and end).
func editScript(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []op
	for i := range pre {
		out = append(out, op{' ', i, i})
	}
	for _, o := range myers(a[pre:len(a)-suf], b[pre:len(b)-suf]) {
		out = append(out, op{o.kind, o.a + pre, o.b + pre})
	}
	for i := range suf {
		out = append(out, op{' ', len(a) - suf + i, len(b) - suf + i})
	}
	return out
}

// myers returns an edit script from a to b with the fewest removals and
// additions, or, when that needs more than maxEdits, all of a removed and
// all of b added.
func myers(a, b []string) []op {
	n, m := len(a), len(b)
	whole := func() []op {
		out := make([]op, 0, n+m)
		for i := range n {
			out = append(out, op{'-', i, 0})
		}
		for j := range m {
			out = append(out, op{'+', n, j})
		}
		return out
	}
	if n == 0 || m == 0 {
		return whole()
	}
	maxD := min(n+m, maxEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	// trace[d] holds v over k in [-d, d] after step d.
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, nil)
				return backtrack(trace, n, m)
			}
		}
		trace = append(trace, slices.Clone(v[off-d:off+d+1]))
	}
	return whole()
}

// backtrack walks the trace of myers back from (n, m) to the edit script.
func backtrack(trace [][]int, n, m int) []op {
	var out []op
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1]
		at := func(k int) int { return prev[k+d-1] }
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			out = append(out, op{' ', x - 1, y - 1})
			x--
			y--
		}
		if prevK == k+1 {
			out = append(out, op{'+', x, y - 1})
			y--
		} else {
			out = append(out, op{'-', x - 1, y})
			x--
		}
	}
	for x > 0 && y > 0 {
		out = append(out, op{' ', x - 1, y - 1})
		x--
		y--
	}
	slices.Reverse(out)
	return out
}

// unified returns the hunks of a unified diff from a to b, diffContext
// lines of context around each change.
func unified(a, b []string) string {
	script := editScript(a, b)
	var out strings.Builder
	for i := 0; i < len(script); {
		if script[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-diffContext)
		end := i // one past the last change of the hunk
		for j := i; j < len(script); j++ {
			if script[j].kind != ' ' {
				end = j + 1
			} else if j >= end+2*diffContext {
				break
			}
		}
		stop := min(len(script), end+diffContext)
		var body strings.Builder
		oldCount, newCount := 0, 0
		for _, o := range script[start:stop] {
			switch o.kind {
			case ' ':
				body.WriteString(" " + lineText(a[o.a]))
				oldCount++
				newCount++
			case '-':
				body.WriteString("-" + lineText(a[o.a]))
				oldCount++
			case '+':
				body.WriteString("+" + lineText(b[o.b]))
				newCount++
			}
		}
		first := script[start]
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(first.a, oldCount), hunkRange(first.b, newCount))
		out.WriteString(body.String())
		i = stop
	}
	return out.String()
}

// lineText is a line of a diff's body: with its newline, or with the
// marker of a file that does not end in one.
func lineText(l string) string {
	if strings.HasSuffix(l, "\n") {
		return l
	}
	return l + "\n\\ No newline at end of file\n"
}

// hunkRange writes a hunk's start (0-based here) and count as unified
// diffs do: 1-based, the count left out when it is 1, and the line before
// for an empty range.
func hunkRange(start, count int) string {
	switch count {
	case 1:
		return fmt.Sprint(start + 1)
	case 0:
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}
