package main

import (
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
	case "warning":
		s.minRank = 1
	case "error":
		s.minRank = 2
	default:
		return nil, exitf(exitUsage, "--severity %q: want error, warning or info", severity)
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

// keep reports whether d is reported.
func (s *selection) keep(d discovery.Diagnostic) bool {
	if rank(d.Severity) < s.minRank {
		return false
	}
	if len(s.selects) > 0 && !matchAny(s.selects, d.Code) {
		return false
	}
	if matchAny(s.ignores, d.Code) {
		return false
	}
	if len(s.perPath) > 0 {
		rel := s.relPath(d.Path)
		for _, r := range s.perPath {
			if r.glob.match(rel) && matchAny(r.codes, d.Code) {
				return false
			}
		}
	}
	return true
}

// filter returns the diagnostics of ds that are kept.
func (s *selection) filter(ds []discovery.Diagnostic) []discovery.Diagnostic {
	out := ds[:0:0]
	for _, d := range ds {
		if s.keep(d) {
			out = append(out, d)
		}
	}
	return out
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
// above it, matches.
func (g glob) match(rel string) bool {
	parts := strings.Split(rel, "/")
	if g.base {
		for _, p := range parts {
			if ok, _ := path.Match(g.parts[0], p); ok {
				return true
			}
		}
		return false
	}
	// A match of a leading run of the path: the rest lies below a match.
	for n := len(parts); n > 0; n-- {
		if matchParts(g.parts, parts[:n]) {
			return true
		}
	}
	return false
}

func matchParts(pat, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if matchParts(pat[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], parts[0]); !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
	}
	return len(parts) == 0
}
