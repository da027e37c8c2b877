package config

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
)

// severities are the values of --severity and [check] severity, highest
// first; "warn" is taken for "warning".
var severities = []string{"error", "warning", "info"}

// Rank orders severities: info < warning < error.
func Rank(s diag.Severity) int {
	switch s {
	case diag.SeverityError:
		return 2
	case diag.SeverityWarning:
		return 1
	}
	return 0
}

// MinRank is the rank of the lowest severity kept by --severity or
// [check] severity: "error", "warning" (or "warn") or "info".
func MinRank(severity string) (int, error) {
	switch severity {
	case "", "info":
		return 0, nil
	case "warning", "warn":
		return 1, nil
	case "error":
		return 2, nil
	}
	return 0, fmt.Errorf("%q is not a severity: want error, warning or info%s", severity, didYouMean(severity, severities))
}

// SplitCodes splits comma-separated lists ("schema/,ref/") and drops
// blanks.
func SplitCodes(list []string) []string {
	var out []string
	for _, item := range list {
		for _, c := range strings.Split(item, ",") {
			if c = strings.TrimSpace(c); c != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

// CheckCodes returns an error naming the first selector that matches
// no diagnostic code, with the code or area it most likely misspells.
func CheckCodes(sels []string) error {
	for _, s := range SplitCodes(sels) {
		if err := CheckCode(s); err != nil {
			return err
		}
	}
	return nil
}

// CheckCode returns nil when pattern selects a diagnostic code or area,
// and otherwise an error naming the nearest: diag.CheckCodePattern's,
// or, when it finds none, the code whose beginning pattern misspells
// ("schema/unknwn" → "schema/unknown-key").
func CheckCode(pattern string) error {
	err := diag.CheckCodePattern(pattern)
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		return err
	}
	if near := suggestCode(pattern); len(near) > 0 {
		quoted := make([]string, len(near))
		for i, n := range near {
			quoted[i] = strconv.Quote(n)
		}
		return fmt.Errorf("%v; did you mean %s?", err, oneOf(quoted))
	}
	return err
}

// suggestCode returns the codes that pattern most likely starts to
// spell, or none: a code written without its area (unknown-key) is each
// code of that name (metadata/unknown-key, schema/unknown-key), or of the
// nearest such name; else one code.
func suggestCode(pattern string) []string {
	if !strings.Contains(pattern, "/") {
		var names []string
		codes := map[string][]string{}
		for _, c := range diag.Codes {
			_, name, _ := strings.Cut(c.Code, "/")
			if _, seen := codes[name]; !seen {
				names = append(names, name)
			}
			codes[name] = append(codes[name], c.Code)
		}
		if cs, ok := codes[pattern]; ok {
			return cs
		}
		if near := diag.Suggest(pattern, names); near != "" {
			return codes[near]
		}
	}
	var prefixes []string
	owner := map[string]string{}
	for _, c := range diag.Codes {
		for n := len(pattern) - 1; n <= len(pattern)+1; n++ {
			if n <= 0 || n > len(c.Code) {
				continue
			}
			p := c.Code[:n]
			if _, seen := owner[p]; !seen {
				owner[p] = c.Code
				prefixes = append(prefixes, p)
			}
		}
	}
	if p := diag.Suggest(pattern, prefixes); p != "" && strings.Contains(p, "/") {
		return []string{owner[p]}
	}
	return nil
}

// Glob is a path pattern of slash-separated components: `*`, `?` and
// `[…]` match within a component, `**` matches any number of components.
// A pattern without a slash matches a file's base name in any directory;
// one with a slash matches the whole relative path. A pattern that
// matches a directory matches every file below it.
type Glob struct {
	parts []string
	base  bool // match the base name only
}

// ParseGlob reads a glob of [check.per-path] (see Glob).
func ParseGlob(pattern string) (Glob, error) {
	p := strings.TrimSuffix(filepath.ToSlash(pattern), "/")
	if p == "" {
		return Glob{}, errors.New("empty glob")
	}
	g := Glob{parts: strings.Split(strings.TrimPrefix(p, "./"), "/"), base: !strings.Contains(p, "/")}
	for _, part := range g.parts {
		if part == "**" {
			continue
		}
		if _, err := path.Match(part, ""); err != nil {
			return Glob{}, fmt.Errorf("bad glob %q: %v", pattern, err)
		}
	}
	return g, nil
}

// Match reports whether the slash-separated path rel, or a directory
// above it, matches. The pattern runs as an automaton over the path's
// components, each state a position in the pattern: a `**` loops on any
// component and may be passed by, another part moves on when path.Match
// (linear, as it never backtracks) accepts the component. The work is at
// most one component match per part of the pattern and component of the
// path, whatever the stars.
func (g Glob) Match(rel string) bool {
	if g.base {
		for rest, more := rel, true; more; {
			var c string
			c, rest, more = strings.Cut(rest, "/")
			if ok, _ := path.Match(g.parts[0], c); ok {
				return true
			}
		}
		return false
	}
	n := len(g.parts)
	cur, next := make([]bool, n+1), make([]bool, n+1)
	cur[0] = true
	g.pass(cur)
	for rest, more := rel, true; more; {
		var c string
		c, rest, more = strings.Cut(rest, "/")
		clear(next)
		live := false
		for i, p := range g.parts {
			switch {
			case !cur[i]:
			case p == "**":
				next[i], live = true, true
			default:
				if ok, _ := path.Match(p, c); ok {
					next[i+1], live = true, true
				}
			}
		}
		if !live {
			return false
		}
		g.pass(next)
		// The whole pattern matched the components so far: the rest of
		// the path lies below a match.
		if next[n] {
			return true
		}
		cur, next = next, cur
	}
	return false
}

// pass adds to the states s those reached by passing a `**` that matches
// no component.
func (g Glob) pass(s []bool) {
	for i, p := range g.parts {
		if s[i] && p == "**" {
			s[i+1] = true
		}
	}
}
