package analysis

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/query"
)

// definition returns the file an extends value, an agent name, an
// @collection:path mention or a requires entry at pos points to.
func (w *Workspace) definition(ctx context.Context, base *catalog.View, path string, text []byte, overlay map[string][]byte, pos diag.Position) []query.Location {
	v := w.layer(ctx, base, path, text, overlay)
	ref, ok := w.findRef(v, path, text, pos)
	if !ok {
		return nil
	}
	target, err := v.target(ref)
	if err != nil || target == "" {
		return nil
	}
	return []query.Location{{Path: target}}
}

// target returns the file ref resolves to.
func (v *layered) target(ref refAt) (string, error) {
	switch ref.kind {
	case "extends":
		p, err := v.set.ResolveProfile(unquote(ref.value), v.own)
		return p.Path, err
	case "agent":
		r, _, ok := v.set.ResolveAgent(ref.value, v.own)
		if !ok {
			return "", fmt.Errorf("agent %q does not exist", ref.value)
		}
		return r.Path, nil
	case "mention":
		return v.set.ResolveMention(ref.m)
	case "requires":
		c := v.set.Lookup(ref.value)
		if c == nil {
			return "", fmt.Errorf("collection %q does not resolve", ref.value)
		}
		if c.Pyproject != "" {
			return c.Pyproject, nil
		}
		return c.Dir, nil
	}
	return "", fmt.Errorf("unknown reference kind %q", ref.kind)
}

// hover describes the collection reference at pos: what it names, where it
// resolves, what the winning collection shadows, and the whole extends
// chain of the profile. Elsewhere on a key of a schema, it describes the
// key.
func (w *Workspace) hover(ctx context.Context, base *catalog.View, path string, text []byte, overlay map[string][]byte, pos diag.Position) (string, bool) {
	v := w.layer(ctx, base, path, text, overlay)
	ref, ok := w.findRef(v, path, text, pos)
	if !ok {
		return keyHover(path, text, pos)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** `%s`\n\n", ref.kind, unquote(ref.value))
	target, err := v.target(ref)
	if err != nil {
		fmt.Fprintf(&b, "Does not resolve: %v\n", err)
	} else {
		fmt.Fprintf(&b, "Resolves to `%s`\n", target)
	}
	coll := ref.coll
	if coll == "" && v.own != nil && (ref.kind == "extends" || err == nil && v.own.Facts[keyIn(v.own, target)] != nil) {
		coll = v.own.Name
	}
	if coll == "" && ref.kind == "agent" && err == nil {
		_, c, _ := v.set.ResolveAgent(ref.value, v.own)
		if c != nil {
			coll = c.Name
		}
	}
	if coll != "" {
		describeResolution(&b, v.set.Resolve(coll))
	}
	if ref.kind == "extends" && err == nil {
		if pr, err := v.set.ResolveProfile(unquote(ref.value), v.own); err == nil {
			if v.own != nil && v.own.Facts[v.key] != nil {
				pr = resolve.ProfileRef{Collection: v.own, Path: v.key}
			}
			chain := v.set.Chain(pr)
			if len(chain) > 1 {
				ids := make([]string, len(chain))
				for i, p := range chain {
					ids[i] = p.ID()
				}
				fmt.Fprintf(&b, "\nInherits: %s\n", strings.Join(ids, " → "))
			}
		}
	}
	return b.String(), true
}

// describeResolution writes where a collection name resolves and what it
// shadows, as Markdown.
func describeResolution(b *strings.Builder, r resolve.Resolution) {
	if r.Winner == nil {
		fmt.Fprintf(b, "\nCollection `%s` resolves in no root.\n", r.Name)
	} else {
		fmt.Fprintf(b, "\nCollection `%s` %s from the %s: `%s`\n", r.Name, r.Winner.Version, rootLabel(r.Winner), r.Winner.Dir)
	}
	if len(r.Shadowed) > 0 {
		b.WriteString("\nShadows:\n")
		for _, c := range r.Shadowed {
			fmt.Fprintf(b, "- `%s` %s in the %s: `%s`\n", c.Name, c.Version, rootLabel(c), c.Dir)
		}
	}
	if len(r.Skipped) > 0 {
		b.WriteString("\nSkipped:\n")
		for _, c := range r.Skipped {
			fmt.Fprintf(b, "- `%s` (%s): %s\n", filepath.Base(c.Dir), c.Dir, c.Problem)
		}
	}
}

func rootLabel(c *discovery.Collection) string {
	if c.Root.Kind == discovery.RootArgument {
		return "working copy"
	}
	return string(c.Root.Kind) + " root"
}
