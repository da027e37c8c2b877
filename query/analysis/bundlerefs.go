package analysis

import (
	"context"
	"slices"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
)

// bundleReferences returns where, in the bundles of b's repository, the
// file the include or agent name at pos resolves to is named, else b's
// own file: every include that resolves to it (who includes this
// behavior), and every agents.include name that resolves to it (who
// uses this agent), as the check of the repository over the buffers
// resolves them. With includeDeclaration, the file itself comes first.
func (w *Workspace) bundleReferences(ctx context.Context, b *bundleDoc, pos diag.Position, includeDeclaration bool) []query.Location {
	target := b.path
	r, res, ok := w.bundleRefAt(b, pos)
	if ok && r.path != "" {
		target = r.path
	}
	if res == nil {
		res = w.checkBundle(b)
	}
	if ctx.Err() != nil {
		return nil
	}
	out := bundleRefsTo(res, target)
	if includeDeclaration {
		out = append([]query.Location{{Path: target}}, out...)
	}
	return out
}

// bundleRefsTo returns the includes and agent names of the bundles res
// checked that resolve to target, sorted by path and position.
func bundleRefsTo(res *check.Result, target string) []query.Location {
	var out []query.Location
	seen := map[query.Location]bool{}
	add := func(p string, r diag.Range) {
		loc := query.Location{Path: p, Range: r}
		if !seen[loc] {
			seen[loc] = true
			out = append(out, loc)
		}
	}
	for _, f := range res.Files {
		c := res.Compositions[f.Path]
		if f.Bundle == nil || c == nil {
			continue
		}
		for _, inc := range f.Bundle.Includes {
			if n := includeNode(c, f.Path, inc); n != nil && n.Path == target {
				add(f.Path, inc.Range)
			}
		}
		for _, a := range f.Bundle.Agents {
			if !a.Included {
				continue
			}
			for _, ref := range c.Agents {
				if ref.Name == a.Name && ref.Origin.Path == f.Path && ref.Path == target {
					add(f.Path, a.Range)
					break
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b query.Location) int {
		if c := diag.ComparePaths(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line - b.Range.Start.Line
		}
		return a.Range.Start.Character - b.Range.Start.Character
	})
	return out
}

// includeNode returns the node of c, the composition of the file at
// path, that the include inc of that file loaded: the one written on its
// line, with its source; nil when c did not load it.
func includeNode(c *compose.Composition, path string, inc bundle.Include) *compose.IncludeNode {
	for _, n := range c.Includes.Includes {
		if n.Origin.Path == path && n.Origin.Line == inc.Range.Start.Line+1 && n.Source == inc.Source {
			return n
		}
	}
	return nil
}
