package main

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/amplidex/amplidex/discovery"
)

// selection decides which diagnostics `check` reports: --select and
// [check] select keep only the codes named, --ignore, [check] ignore and
// [check.per-path] drop codes, and --severity drops what ranks below it.
// Codes are matched by discovery.MatchCode: a code, or an area such as
// "schema/".
type selection struct {
	selects []string
	ignores []string
	perPath []pathRule
	// minRank is the lowest severity kept (see rank).
	minRank int
	// base is the directory per-path globs are relative to.
	base string
}

// pathRule ignores codes in the files a glob matches.
type pathRule struct {
	glob  glob
	codes []string
}

// severities are the values of --severity and [check] severity, highest
// first; "warn" is taken for "warning".
var severities = []string{"error", "warning", "info"}

// rank orders severities: info < warning < error.
func rank(s discovery.Severity) int {
	switch s {
	case discovery.SeverityError:
		return 2
	case discovery.SeverityWarning:
		return 1
	}
	return 0
}

// newSelection combines the flags and the configuration: the flags' codes
// add to the configuration's. base is the project directory.
func newSelection(cfg *Config, selects, ignores []string, severity, base string) (*selection, error) {
	s := &selection{base: base}
	for _, list := range [][]string{cfg.Check.Select, selects} {
		s.selects = append(s.selects, splitCodes(list)...)
	}
	for _, list := range [][]string{cfg.Check.Ignore, ignores} {
		s.ignores = append(s.ignores, splitCodes(list)...)
	}
	if err := checkSelectors(splitCodes(selects)); err != nil {
		return nil, exitf(exitUsage, "--select: %v", err)
	}
	if err := checkSelectors(splitCodes(ignores)); err != nil {
		return nil, exitf(exitUsage, "--ignore: %v", err)
	}
	for pattern, codes := range cfg.Check.PerPath {
		g, err := parseGlob(pattern)
		if err != nil {
			return nil, exitf(exitUsage, "%s: check.per-path: %v", cfg.path, err)
		}
		s.perPath = append(s.perPath, pathRule{glob: g, codes: splitCodes(codes)})
	}
	switch severity {
	case "", "info":
	case "warning", "warn":
		s.minRank = 1
	case "error":
		s.minRank = 2
	default:
		return nil, exitf(exitUsage, "--severity %q: want error, warning or info%s", severity, didYouMean(severity, severities))
	}
	return s, nil
}

// splitCodes splits comma-separated lists ("schema/,ref/") and drops
// blanks.
func splitCodes(list []string) []string {
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

// checkSelectors returns an error naming the first selector that matches
// no diagnostic code.
func checkSelectors(sels []string) error {
	for _, s := range splitCodes(sels) {
		if err := discovery.CheckCodePattern(s); err != nil {
			return err
		}
	}
	return nil
}

// keep reports whether d is reported. ignored is the memory of filter:
// whether the per-path rules drop a code in a path.
func (s *selection) keep(d discovery.Diagnostic, ignored map[pathCode]bool) bool {
	if rank(d.Severity) < s.minRank {
		return false
	}
	if len(s.selects) > 0 && !matchAny(s.selects, d.Code) {
		return false
	}
	if matchAny(s.ignores, d.Code) {
		return false
	}
	if len(s.perPath) == 0 {
		return true
	}
	k := pathCode{d.Path, d.Code}
	drop, seen := ignored[k]
	if !seen {
		rel := s.relPath(d.Path)
		for _, r := range s.perPath {
			if matchAny(r.codes, d.Code) && r.glob.match(rel) {
				drop = true
				break
			}
		}
		ignored[k] = drop
	}
	return !drop
}

// pathCode is a diagnostic's path and code, which decide whether the
// per-path rules drop it.
type pathCode struct{ path, code string }

// filter returns the diagnostics of ds that are kept, or the context's
// error once it is cancelled.
func (s *selection) filter(ctx context.Context, ds []discovery.Diagnostic) ([]discovery.Diagnostic, error) {
	out := ds[:0:0]
	ignored := map[pathCode]bool{}
	for i, d := range ds {
		if i%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if s.keep(d, ignored) {
			out = append(out, d)
		}
	}
	return out, nil
}

// relPath is p relative to the base, slash-separated; p itself when it
// lies outside.
func (s *selection) relPath(p string) string {
	if rel, err := filepath.Rel(s.base, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(p)
}

func matchAny(patterns []string, code string) bool {
	for _, p := range patterns {
		if discovery.MatchCode(p, code) {
			return true
		}
	}
	return false
}

// glob is a path pattern of slash-separated components: `*`, `?` and
// `[…]` match within a component, `**` matches any number of components.
// A pattern without a slash matches a file's base name in any directory;
// one with a slash matches the whole relative path. A pattern that
// matches a directory matches every file below it.
type glob struct {
	parts []string
	base  bool // match the base name only
}

func parseGlob(pattern string) (glob, error) {
	p := strings.TrimSuffix(filepath.ToSlash(pattern), "/")
	if p == "" {
		return glob{}, errors.New("empty glob")
	}
	g := glob{parts: strings.Split(strings.TrimPrefix(p, "./"), "/"), base: !strings.Contains(p, "/")}
	for _, part := range g.parts {
		if part == "**" {
			continue
		}
		if _, err := path.Match(part, ""); err != nil {
			return glob{}, fmt.Errorf("bad glob %q: %v", pattern, err)
		}
	}
	return g, nil
}

// match reports whether the slash-separated path rel, or a directory
// above it, matches. The pattern runs as an automaton over the path's
// components, each state a position in the pattern: a `**` loops on any
// component and may be passed by, another part moves on when path.Match
// (linear, as it never backtracks) accepts the component. The work is at
// most one component match per part of the pattern and component of the
// path, whatever the stars.
func (g glob) match(rel string) bool {
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
func (g glob) pass(s []bool) {
	for i, p := range g.parts {
		if s[i] && p == "**" {
			s[i+1] = true
		}
	}
}
