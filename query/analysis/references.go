package analysis

import (
	"context"
	"sort"

	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
)

// references returns where a file is referred to from, over the View with
// the buffers laid over it: the profiles that extend it, the profiles
// whose agents lists name it, the @mentions that resolve to it, and, for
// a collection's pyproject.toml, the requires entries that name the
// collection. The file is the one the reference at pos names, else the
// file asked about. With includeDeclaration, the file itself comes first.
func (w *Workspace) references(ctx context.Context, base *catalog.View, path string, text []byte, overlay map[string][]byte, pos diag.Position, includeDeclaration bool) []query.Location {
	l := w.layer(ctx, base, path, text, overlay)
	if ctx.Err() != nil {
		return nil
	}
	target := l.key
	if ref, ok := w.findRef(l, path, text, pos); ok {
		if t, err := l.target(ref); err == nil && t != "" {
			target = t
		}
	}
	owner := l.set.Owner(target)
	var out []query.Location
	seen := map[query.Location]bool{}
	add := func(p string, r diag.Range) {
		loc := query.Location{Path: p, Range: r}
		if !seen[loc] {
			seen[loc] = true
			out = append(out, loc)
		}
	}
	for _, c := range l.set.Collections() {
		if ctx.Err() != nil {
			return nil
		}
		for _, r := range c.Resources {
			f := c.Facts[r.Path]
			if f == nil {
				continue
			}
			if f.Extends != nil {
				if p, err := l.set.ResolveProfile(unquote(f.Extends.Value), c); err == nil && p.Path == target {
					add(r.Path, f.Extends.Range)
				}
			}
			for _, a := range f.Agents {
				if res, _, ok := l.set.ResolveAgent(a.Value, c); ok && res.Path == target {
					add(r.Path, a.Range)
				}
			}
			for _, m := range f.Mentions {
				if p, err := l.set.ResolveMention(m); err == nil && p == target {
					add(r.Path, m.Range)
				}
			}
		}
		if owner != nil && target == owner.Pyproject && c != owner && c.Metadata != nil {
			for _, req := range c.Metadata.Requires {
				if l.set.Lookup(req.Name) == owner {
					add(c.Pyproject, req.Range)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Path != b.Path {
			return diag.ComparePaths(a.Path, b.Path) < 0
		}
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line < b.Range.Start.Line
		}
		return a.Range.Start.Character < b.Range.Start.Character
	})
	if includeDeclaration {
		out = append([]query.Location{{Path: target}}, out...)
	}
	return out
}
