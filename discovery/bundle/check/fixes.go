package check

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
)

// nameFixes returns the fixes of the misspelt names of f, composed as c,
// whose diagnostics are ds: an agents.include name ns:name that resolves
// to no agent, or an include ns:path that resolves to no bundle, is
// replaced by the one name near it in its namespace (or, for an include
// whose namespace no bundle has, by the same path in the one namespace
// whose name is near). Where two names are near, the choice is the
// author's: no fix.
func nameFixes(files compose.Files, f *bundle.File, c *compose.Composition, ds []diag.Diagnostic) []bundle.Fix {
	ns := namespaces(c)
	at := func(code string, line int) (diag.Range, bool) {
		for _, d := range ds {
			if d.Code == code && d.Path == f.Path && d.Range.Start.Line == line {
				return d.Range, true
			}
		}
		return diag.Range{}, false
	}
	var out []bundle.Fix
	for _, a := range f.Bundle.Agents {
		name, n, ok := strings.Cut(a.Name, ":")
		dir := ns[name]
		if !a.Included || !ok || dir == "" || !agentUnresolved(c, f.Path, a.Name) {
			continue
		}
		r, ok := at(bundle.CodeAgentUnresolved, a.Range.Start.Line)
		if !ok {
			continue
		}
		var agents []string
		list, _ := files.List(filepath.Join(dir, "agents"))
		for _, e := range list {
			if strings.HasSuffix(e, ".md") && !strings.EqualFold(e, "README.md") {
				agents = append(agents, strings.TrimSuffix(e, ".md"))
			}
		}
		if s := uniqueNear(n, agents); s != "" {
			if x, ok := replaceName(f, bundle.CodeAgentUnresolved, r, a.Range, a.Name, name+":"+s); ok {
				out = append(out, x)
			}
		}
	}
	for _, inc := range f.Bundle.Includes {
		name, p, ok := strings.Cut(inc.Source, ":")
		if !ok || strings.ContainsAny(name, "/.+") || bundleAt(files, ns[name], p) {
			continue
		}
		r, ok := at(bundle.CodeIncludeUnresolved, inc.Range.Start.Line)
		if !ok {
			continue
		}
		var to string
		if dir := ns[name]; dir != "" {
			if s := uniqueNear(p, bundlesIn(files, dir, filepath.Ext(p) != "")); s != "" {
				to = name + ":" + s
			}
		} else if s := uniqueNear(name, slices.Sorted(maps.Keys(ns))); s != "" && bundleAt(files, ns[s], p) {
			to = s + ":" + p
		}
		if to == "" {
			continue
		}
		if x, ok := replaceName(f, bundle.CodeIncludeUnresolved, r, inc.Range, inc.Source, to); ok {
			out = append(out, x)
		}
	}
	return out
}

// agentUnresolved reports whether c found no file for the agent name
// that the file at path includes.
func agentUnresolved(c *compose.Composition, path, name string) bool {
	for _, a := range c.Agents {
		if a.Name == name && a.Origin.Path == path {
			return a.Problem != "" && !a.UnknownNamespace
		}
	}
	return false
}

// bundleExts are the extensions an include's path is tried with.
var bundleExts = []string{".yaml", ".yml", ".md"}

// bundlesIn returns the bundles of behaviors/, providers/ and bundles/
// in dir, as an include names them: relative, slash separated, without
// their extension unless ext.
func bundlesIn(files compose.Files, dir string, ext bool) []string {
	var out []string
	for _, sub := range []string{"behaviors", "providers", "bundles"} {
		list, _ := files.List(filepath.Join(dir, sub))
		for _, e := range list {
			if x := filepath.Ext(e); slices.Contains(bundleExts, x) && !strings.EqualFold(e, "README.md") {
				if !ext {
					e = strings.TrimSuffix(e, x)
				}
				out = append(out, sub+"/"+e)
			}
		}
	}
	return out
}

// bundleAt reports whether p, as an include's path, names a bundle file
// in dir.
func bundleAt(files compose.Files, dir, p string) bool {
	if dir == "" || p == "" {
		return false
	}
	base := filepath.Join(dir, filepath.FromSlash(p))
	if files.Stat(base) == compose.RegularFile {
		return true
	}
	for _, x := range bundleExts {
		if files.Stat(base+x) == compose.RegularFile {
			return true
		}
	}
	return false
}

// uniqueNear returns the candidate near key (diag.Suggest) when no other
// is; "" when none is, or two are.
func uniqueNear(key string, candidates []string) string {
	s := diag.Suggest(key, candidates)
	if s == "" {
		return ""
	}
	rest := slices.DeleteFunc(slices.Clone(candidates), func(c string) bool { return c == s })
	if diag.Suggest(key, rest) != "" {
		return ""
	}
	return s
}

// replaceName returns the fix of the diagnostic of code at at that
// writes to in place of the name written at r in f (inside its quotes,
// when it is quoted).
func replaceName(f *bundle.File, code string, at, r diag.Range, name, to string) (bundle.Fix, bool) {
	lines, text := f.Lines(), f.Text()
	start, end := lines.PositionOffset(r.Start), lines.PositionOffset(r.End)
	if start < 0 || end > len(text) || start > end {
		return bundle.Fix{}, false
	}
	if s := string(text[start:end]); len(s) == len(name)+2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		start, end = start+1, end-1
	}
	if string(text[start:end]) != name || strings.ContainsAny(to, "\"'\\") {
		return bundle.Fix{}, false
	}
	return bundle.Fix{Code: code, At: at, Start: start, End: end, Text: to}, true
}
