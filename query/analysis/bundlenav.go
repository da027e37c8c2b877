package analysis

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
)

// Navigation in a bundle repository's documents: go to definition and
// hover on an include (the file it resolves to, and its namespace) and
// on an agent name (its agents/NAME.md), and completion of include
// sources and agent names. Every answer is read from the check of the
// repository over the buffers (the one diagnostics use), so that it
// follows unsaved edits.

// bundleRef is the include or agent name under the cursor, and where it
// resolves in the composition of the document.
type bundleRef struct {
	include bool   // an include; else an agent name
	source  string // as written
	path    string // the file it resolves to ("" when none)
	name    string // the included bundle's name
	status  compose.Status
	message string
}

// bundleRefAt returns the reference at pos in b, if any.
func (w *Workspace) bundleRefAt(b *bundleDoc, pos diag.Position) (bundleRef, *check.Result, bool) {
	f, err := b.files.Parse(b.path, b.kind)
	if err != nil || f.Bundle == nil {
		return bundleRef{}, nil, false
	}
	res := w.checkBundle(b)
	c := res.Compositions[b.path]
	for _, inc := range f.Bundle.Includes {
		if inc.Source == "" || !contains(inc.Range, pos) {
			continue
		}
		r := bundleRef{include: true, source: inc.Source}
		if c != nil {
			for _, n := range c.Includes.Includes {
				if n.Origin.Path == b.path && n.Origin.Line == inc.Range.Start.Line+1 && n.Source == inc.Source {
					r.path, r.name, r.status, r.message = n.Path, n.Name, n.Status, n.Message
					break
				}
			}
		}
		return r, res, true
	}
	for _, a := range f.Bundle.Agents {
		if !a.Included || !contains(a.Range, pos) {
			continue
		}
		r := bundleRef{source: a.Name}
		if c != nil {
			for _, ref := range c.Agents {
				if ref.Name == a.Name && ref.Origin.Path == b.path {
					r.path, r.message = ref.Path, ref.Problem
					break
				}
			}
		}
		return r, res, true
	}
	return bundleRef{}, res, false
}

// bundleDefinition returns the file an include or agent name at pos
// resolves to.
func (w *Workspace) bundleDefinition(b *bundleDoc, pos diag.Position) []query.Location {
	r, _, ok := w.bundleRefAt(b, pos)
	if !ok || r.path == "" {
		return nil
	}
	return []query.Location{{Path: r.path}}
}

// bundleHover describes the include or agent name at pos: the file it
// resolves to and the namespace that file is in.
func (w *Workspace) bundleHover(b *bundleDoc, pos diag.Position) (string, bool) {
	r, res, ok := w.bundleRefAt(b, pos)
	if !ok {
		return "", false
	}
	var sb strings.Builder
	what := "agent"
	if r.include {
		what = "include"
	}
	fmt.Fprintf(&sb, "**%s** `%s`\n\n", what, r.source)
	if r.path == "" {
		msg := r.message
		if msg == "" {
			msg = "resolves to no file"
		}
		fmt.Fprintf(&sb, "%s", msg)
		return sb.String(), true
	}
	fmt.Fprintf(&sb, "`%s`", r.path)
	if ns := namespaceOf(res.Compositions[b.path], r.path); ns != "" {
		fmt.Fprintf(&sb, " in namespace `%s`", ns)
	}
	if r.name != "" {
		fmt.Fprintf(&sb, "\n\nbundle `%s`", r.name)
	}
	if r.status != "" && r.status != compose.StatusLoaded {
		fmt.Fprintf(&sb, " (%s)", r.status)
	}
	return sb.String(), true
}

// namespaceOf returns the namespace a file p of c shares: that of the
// outermost directory of a namespace of c that holds it (a behavior
// shares its repository's root bundle's); "" when none does.
func namespaceOf(c *compose.Composition, p string) string {
	if c == nil {
		return ""
	}
	best, depth := "", -1
	for _, n := range c.Namespaces {
		if within(p, n.Dir) && (depth < 0 || len(n.Dir) < depth) {
			best, depth = n.Name, len(n.Dir)
		}
	}
	return best
}

// bundleComplete offers, at pos in b: include sources in an includes
// item (ns:path of the bundles of the repository and of every namespace
// the document's composition knows, the known bundles' names, and the
// repository's bundles relative to the document), and agent names in
// agents.include (ns:NAME of every agents/NAME.md of those namespaces);
// keys, context paths and module ids are bundleCompleteMore's.
func (w *Workspace) bundleComplete(b *bundleDoc, text []byte, pos diag.Position) []query.CompletionItem {
	if items, ok := w.bundleCompleteMore(b, text, pos); ok {
		return items
	}
	lines := syntax.NewLineIndex(text)
	if pos.Line < 0 || pos.Line >= lines.Lines() {
		return nil
	}
	first := 0
	if b.kind != bundle.KindRecipe && strings.EqualFold(filepath.Ext(b.path), ".md") {
		f, last, ok := frontLines(text, lines)
		if !ok || pos.Line < f || pos.Line >= last {
			return nil
		}
		first = f
	}
	line := lines.Line(pos.Line)
	cur := lines.PositionOffset(pos) - lines.LineStart(pos.Line)
	before := line[:cur]
	y := parseYAMLLine(before)
	if !y.item {
		return nil
	}
	path, ok := linePath(lines, first, pos.Line, y)
	if !ok {
		return nil
	}
	// The value typed so far: after "- ", or after "- bundle: ".
	rest := bytes.TrimLeft(before, " ")[1:]
	rest = bytes.TrimLeft(rest, " ")
	includes := slices.Equal(path, []string{"includes", schema.ItemStep})
	if includes {
		if k, v, ok := bytes.Cut(rest, []byte(":")); ok && string(k) == "bundle" {
			rest = v
		}
	}
	rest = bytes.TrimLeft(rest, " \"'")
	rng := diag.Range{Start: diag.Position{Line: pos.Line, Character: syntax.UTF16Len(before[:len(before)-len(rest)])}, End: pos}
	// The line being typed rarely parses ("- bundle: demo:" is a
	// mapping in YAML): the repository is checked without it.
	res := w.checkBundle(b.without(lines, pos.Line))
	nss := bundleNamespaces(res, b.path)
	var items []query.CompletionItem
	seen := map[string]bool{}
	add := func(label, detail string, kind query.CompletionKind) {
		if seen[label] {
			return
		}
		seen[label] = true
		r := rng
		items = append(items, query.CompletionItem{Label: label, Kind: kind, Detail: detail, Replace: &r})
	}
	switch {
	case includes:
		for _, n := range nss {
			for _, p := range bundleFiles(b.files, n.Dir) {
				rel, _ := filepath.Rel(n.Dir, p)
				add(n.Name+":"+strings.TrimSuffix(filepath.ToSlash(rel), filepath.Ext(rel)), p, query.CompletionReference)
			}
		}
		loc := compose.Locate(w.envFor(b.root), b.files)
		for _, f := range loc.Bundles(b.files) {
			name := f.Key
			if name == "" {
				name = f.Name
			}
			if name != "" && !strings.ContainsAny(name, "/\\") {
				add(name, f.Where, query.CompletionReference)
			}
		}
		for _, p := range bundleFiles(b.files, b.root) {
			if p == b.path {
				continue
			}
			if rel, err := filepath.Rel(filepath.Dir(b.path), p); err == nil {
				if !strings.HasPrefix(rel, "..") {
					rel = "./" + filepath.ToSlash(rel)
				}
				add(filepath.ToSlash(rel), p, query.CompletionFile)
			}
		}
	case slices.Equal(path, []string{"agents", "include", schema.ItemStep}):
		for _, n := range nss {
			names, _ := b.files.List(filepath.Join(n.Dir, "agents"))
			for _, name := range names {
				if strings.HasSuffix(name, ".md") && !strings.EqualFold(name, "README.md") {
					add(n.Name+":"+strings.TrimSuffix(name, ".md"), filepath.Join(n.Dir, "agents", name), query.CompletionReference)
				}
			}
		}
	default:
		return nil
	}
	return items
}

// without returns b with the line n of its text (indexed by lines)
// left blank.
func (b *bundleDoc) without(lines *syntax.LineIndex, n int) *bundleDoc {
	text := b.buffers[b.path]
	start, end := lines.LineStart(n), lines.LineStart(n)+len(lines.Line(n))
	blank := make([]byte, 0, len(text)-(end-start))
	blank = append(append(blank, text[:start]...), text[end:]...)
	buffers := maps.Clone(b.buffers)
	buffers[b.path] = blank
	return &bundleDoc{path: b.path, root: b.root, kind: b.kind, files: compose.NewOverlay(&compose.DiskFiles{}, buffers), buffers: buffers}
}

// bundleNamespaces returns the namespaces a document can name: those of
// its own composition, else of the repository's root bundle, else the
// repository's name; sorted by name.
func bundleNamespaces(res *check.Result, path string) []compose.Namespace {
	var out []compose.Namespace
	seen := map[string]bool{}
	add := func(n compose.Namespace) {
		if n.Name != "" && !seen[n.Name] {
			seen[n.Name] = true
			out = append(out, n)
		}
	}
	for _, p := range []string{path, res.Repo.RootBundle} {
		if c := res.Compositions[p]; c != nil {
			for _, n := range c.Namespaces {
				add(n)
			}
		}
	}
	add(compose.Namespace{Name: res.Repo.Name, Dir: res.Repo.Root})
	slices.SortFunc(out, func(a, b compose.Namespace) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// bundleFiles returns the bundles of behaviors/, providers/ and bundles/
// in dir, where includes point.
func bundleFiles(files compose.Files, dir string) []string {
	var out []string
	for _, sub := range []string{"behaviors", "providers", "bundles"} {
		names, _ := files.List(filepath.Join(dir, sub))
		for _, n := range names {
			switch strings.ToLower(filepath.Ext(n)) {
			case ".yaml", ".yml", ".md":
				if !strings.EqualFold(n, "README.md") {
					out = append(out, filepath.Join(dir, sub, n))
				}
			}
		}
	}
	return out
}
