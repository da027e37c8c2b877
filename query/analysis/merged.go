package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/bits"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
)

// MergedProfile returns the effective profile of the profile at path,
// given its unsaved text and the other open buffers: its whole extends
// chain merged, a comment on each key naming the profiles that set it.
// It is nil only when ctx is done.
func (w *Workspace) MergedProfile(ctx context.Context, path string, text []byte, overlay map[string][]byte) *query.MergedProfile {
	v := w.viewOf(ctx, path)
	if v == nil {
		return nil
	}
	return w.mergedProfile(ctx, v, path, text, overlay)
}

// chainLink is one profile of the chain being merged.
type chainLink struct {
	id    string
	path  string
	facts *discovery.Facts // nil when the file has none
}

// mergedProfile computes the effective profile of the profile at path
// over v with the buffers laid over it: the chain as the collection
// holding the file resolves it, or, for a profile in no collection, its
// qualified extends.
func (w *Workspace) mergedProfile(ctx context.Context, v *catalog.View, path string, text []byte, overlay map[string][]byte) *query.MergedProfile {
	l := w.layer(ctx, v, path, text, overlay)
	if ctx.Err() != nil {
		return nil
	}
	var links []chainLink
	var problem string
	add := func(chain []resolve.ProfileRef) {
		for _, p := range chain {
			links = append(links, chainLink{id: p.ID(), path: p.Path, facts: p.Collection.FullFacts(p.Path)})
		}
		last := chain[len(chain)-1]
		if f := last.Collection.Facts[last.Path]; f != nil && f.Extends != nil {
			problem = chainEnd(l.set, last, f.Extends.Value, links)
		}
	}
	if l.own != nil && l.own.Facts[l.key] != nil {
		add(l.set.Chain(resolve.ProfileRef{Collection: l.own, Path: l.key}))
		links[0].path = path
	} else {
		f := discovery.AnalyzeFile(path, text, discovery.KindProfile, w.schema)
		links = []chainLink{{id: strings.TrimSuffix(filepath.Base(path), ".md"), path: path, facts: f}}
		if f.Extends != nil {
			pr, err := l.set.ResolveProfile(unquote(f.Extends.Value), nil)
			if err != nil {
				problem = fmt.Sprintf("extends %q of %s does not resolve: %v", f.Extends.Value, links[0].id, err)
			} else {
				add(l.set.Chain(pr))
			}
		}
	}
	return renderMerged(links, problem)
}

// chainEnd says why a chain stops at last, whose extends is value: it does
// not resolve, it goes back into the chain, or the chain is too deep.
func chainEnd(set *resolve.Set, last resolve.ProfileRef, value string, links []chainLink) string {
	next, err := set.ResolveProfile(unquote(value), last.Collection)
	if err != nil {
		return fmt.Sprintf("extends %q of %s does not resolve: %v", value, last.ID(), err)
	}
	for _, l := range links {
		if l.path == next.Path {
			return fmt.Sprintf("extends %q of %s makes a cycle", value, last.ID())
		}
	}
	return fmt.Sprintf("the extends chain is longer than %d profiles", resolve.MaxExtendsDepth)
}

// renderMerged merges the chain (child first), root-most first, and
// writes it with its sources.
func renderMerged(links []chainLink, problem string) *query.MergedProfile {
	out := &query.MergedProfile{Complete: problem == "", Problem: problem, Chain: make([]query.ChainLink, len(links))}
	ids := make([]string, len(links))
	for i, l := range links {
		ids[i] = l.id
		out.Chain[i] = query.ChainLink{ID: l.id, Path: l.path}
	}
	var head strings.Builder
	fmt.Fprintf(&head, "# Effective profile of %s, unsaved edits included.\n", ids[0])
	fmt.Fprintf(&head, "# extends chain: %s\n", strings.Join(ids, " → "))
	if problem != "" {
		out.Complete = false
		fmt.Fprintf(&head, "# INCOMPLETE: %s;\n# this merges only what resolved and is not the effective profile.\n", oneLine(problem))
	}
	fronts := make([]*syntax.Map, len(links))
	for i, l := range links {
		if l.facts == nil || l.facts.Front == nil {
			out.Complete = false
			if out.Problem == "" {
				out.Problem = fmt.Sprintf("%s has no usable front matter", l.id)
			}
			fmt.Fprintf(&head, "# %s has no usable front matter (see its diagnostics); nothing to merge.\n", l.id)
			out.Text = head.String()
			return out
		}
		fronts[i] = l.facts.Front
	}
	var merged *syntax.Map
	for i := len(fronts) - 1; i >= 0; i-- {
		merged = resolve.MergeProfile(merged, fronts[i])
	}
	body, sources, err := annotate(merged, fronts, ids)
	if err != nil {
		fmt.Fprintf(&head, "# cannot write the merged profile: %v\n", oneLine(err.Error()))
		out.Text = head.String()
		return out
	}
	offset := strings.Count(head.String(), "\n") + 1 // the opening ---
	for i := range sources {
		sources[i].Line += offset
	}
	out.Text = head.String() + "---\n" + body + "---\n"
	out.Sources = sources
	return out
}

// oneLine keeps a message on one comment line.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// sourceSet is a set of indices into the chain (at most
// resolve.MaxExtendsDepth+1 of them), the profile asked about being 0.
type sourceSet uint64

// childMost returns the set of the lowest index of s: of the profiles
// that set a value replaced whole, the one nearest the profile asked
// about wins.
func (s sourceSet) childMost() sourceSet { return s & -s }

// annotator walks the YAML of a merged profile beside the chain's front
// matter, noting the sources of each key.
type annotator struct {
	ids   []string
	notes []note
}

// note is the sources of one key, set as the line comment of node.
type note struct {
	node *yaml.Node
	key  []string
	from []string
}

// annotate writes merged as YAML with a comment on each key naming the
// profiles that set it, aligned in one column, and returns the sources
// with their lines in that text.
func annotate(merged *syntax.Map, fronts []*syntax.Map, ids []string) (string, []query.KeySource, error) {
	root, err := merged.MarshalYAML()
	if err != nil {
		return "", nil, err
	}
	node := root.(*yaml.Node)
	plain, err := encodeYAML(node)
	if err != nil {
		return "", nil, err
	}
	a := &annotator{ids: ids}
	a.mapping(node, merged, fronts, nil, true)
	notes := a.notes[:0]
	for _, n := range a.notes {
		if n.node != nil {
			n.node.LineComment = "from " + strings.Join(n.from, ", ")
			notes = append(notes, n)
		}
	}
	commented, err := encodeYAML(node)
	if err != nil {
		return "", nil, err
	}
	// The comments add nothing but a tail to their lines: a line that
	// differs is its plain line, a space and the comment. The notes come
	// in the order of the text, one comment each.
	pl := strings.Split(plain, "\n")
	cl := strings.Split(commented, "\n")
	if len(pl) != len(cl) {
		return plain, nil, nil // no comments rather than misplaced ones
	}
	width := 0
	for i := range pl {
		if pl[i] != cl[i] {
			width = max(width, min(utf8.RuneCountInString(pl[i]), 60))
		}
	}
	var b strings.Builder
	var sources []query.KeySource
	k := 0
	for i := range pl {
		line := cl[i]
		if pl[i] != line && strings.HasPrefix(line, pl[i]+" #") && k < len(notes) {
			pad := max(width-utf8.RuneCountInString(pl[i]), 0) + 2
			line = pl[i] + strings.Repeat(" ", pad) + strings.TrimPrefix(line, pl[i]+" ")
			sources = append(sources, query.KeySource{Line: i, Key: notes[k].key, From: notes[k].from})
			k++
		}
		b.WriteString(line)
		if i < len(pl)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String(), sources, nil
}

func encodeYAML(n *yaml.Node) (string, error) {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// mapping notes the keys of the mapping m (node n) and returns the union
// of their sources. fronts are the mappings at the same path in each
// profile of the chain (nil where a profile has none).
func (a *annotator) mapping(n *yaml.Node, m *syntax.Map, fronts []*syntax.Map, path []string, top bool) sourceSet {
	var all sourceSet
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		k := kn.Value
		val, ok := m.Get(k)
		if !ok {
			continue
		}
		key := append(path[:len(path):len(path)], k)
		sub := make([]any, len(fronts))
		var has sourceSet
		for j, f := range fronts {
			if v, ok := f.Get(k); ok {
				sub[j], has = v, has|1<<j
			}
		}
		// The note goes before those of the keys below, in the order of
		// the text; it is filled once they are known.
		at := len(a.notes)
		a.notes = append(a.notes, note{})
		var s sourceSet
		switch v := val.(type) {
		case *syntax.Map:
			if v.Len() > 0 {
				maps := make([]*syntax.Map, len(sub))
				for j, e := range sub {
					maps[j], _ = e.(*syntax.Map)
				}
				s = a.mapping(vn, v, maps, key, false)
			}
		case []any:
			if top && isModuleSection(k) && len(v) > 0 {
				s = a.moduleList(vn, v, sub, key)
			}
		}
		if s == 0 {
			s = has.childMost()
		}
		if s != 0 {
			target := kn
			if (vn.Kind == yaml.MappingNode || vn.Kind == yaml.SequenceNode) && len(vn.Content) == 0 {
				target = vn // the encoder writes {} and [] with the comment of the value
			}
			a.notes[at] = note{node: target, key: key, from: a.names(s)}
		}
		all |= s
	}
	return all
}

// moduleList notes the keys of the entries of a merged providers, tools
// or hooks list: an entry with a module id beside the entries of that id
// in the chain, one without beside the profile whose list holds it.
func (a *annotator) moduleList(n *yaml.Node, items []any, fronts []any, path []string) sourceSet {
	var all sourceSet
	for i, item := range items {
		if i >= len(n.Content) {
			break
		}
		var s sourceSet
		id := moduleIDOf(item)
		m, isMap := item.(*syntax.Map)
		switch {
		case id != "" && isMap:
			entries := make([]*syntax.Map, len(fronts))
			for j, f := range fronts {
				list, _ := f.([]any)
				for _, e := range list {
					if moduleIDOf(e) == id {
						entries[j], _ = e.(*syntax.Map)
						break
					}
				}
			}
			s = a.mapping(n.Content[i], m, entries, append(path[:len(path):len(path)], id), false)
		default:
			for j, f := range fronts {
				list, _ := f.([]any)
				if containsEqual(list, item) {
					s = 1 << j
					break
				}
			}
		}
		all |= s
	}
	return all
}

// names returns the IDs of the profiles in s, the profile asked about
// first.
func (a *annotator) names(s sourceSet) []string {
	out := make([]string, 0, bits.OnesCount64(uint64(s)))
	for s != 0 {
		j := bits.TrailingZeros64(uint64(s))
		if j < len(a.ids) {
			out = append(out, a.ids[j])
		}
		s &^= 1 << j
	}
	return out
}

// isModuleSection reports the top-level keys merged by module id.
func isModuleSection(k string) bool { return k == "providers" || k == "tools" || k == "hooks" }

// moduleIDOf returns the module id of a module entry, or "".
func moduleIDOf(v any) string {
	m, ok := v.(*syntax.Map)
	if !ok {
		return ""
	}
	id, _ := m.Value("module").(string)
	return id
}

// containsEqual reports whether list holds a value equal to v, compared
// by their JSON (Maps compare by keys and values in order).
func containsEqual(list []any, v any) bool {
	want, err := json.Marshal(v)
	if err != nil {
		return false
	}
	for _, e := range list {
		got, err := json.Marshal(e)
		if err == nil && bytes.Equal(got, want) {
			return true
		}
	}
	return false
}
