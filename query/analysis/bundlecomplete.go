package analysis

import (
	"bytes"
	"cmp"
	"fmt"
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

// Completion in a bundle repository's documents beyond include sources
// and agent names: the keys the strict schema of the document's kind
// accepts in the mapping at the cursor, the context files of the
// repository (and of the bundles it includes) in context.include and
// after an @ in a Markdown body, and the module
// ids the repository's compositions know after module:. Like the rest
// of bundle completion, it reads the check of the repository over the
// buffers, the line being typed left out.

// bundleCompleteMore offers keys, context paths and module ids at pos in
// b; ok is false where it has nothing to say, for bundleComplete to go
// on.
func (w *Workspace) bundleCompleteMore(b *bundleDoc, text []byte, pos diag.Position) (items []query.CompletionItem, ok bool) {
	lines := syntax.NewLineIndex(text)
	if pos.Line < 0 || pos.Line >= lines.Lines() {
		return nil, false
	}
	first, last := 0, lines.Lines()
	if b.kind != bundle.KindRecipe && strings.EqualFold(filepath.Ext(b.path), ".md") {
		f, l, fm := frontLines(text, lines)
		if !fm || pos.Line < f || pos.Line >= l {
			if fm && pos.Line < f {
				return nil, false
			}
			return w.bundleMention(b, lines, pos)
		}
		first, last = f, l
	}
	before := lines.Line(pos.Line)[:lines.PositionOffset(pos)-lines.LineStart(pos.Line)]
	y := parseYAMLLine(before)
	if y.item {
		// An item of context.include; "- demo:" reads as a key.
		if path, ok := frontPath(lines, first, pos.Line, y.indent, true); ok && slices.Equal(path, []string{"context", "include", schema.ItemStep}) {
			value := bytes.TrimLeft(before[y.col:], "\"'")
			rng := diag.Range{Start: diag.Position{Line: pos.Line, Character: syntax.UTF16Len(before[:len(before)-len(value)])}, End: pos}
			return w.contextItems(b, lines, rng), true
		}
	}
	if y.key == "" {
		return w.bundleKey(b, lines, first, last, pos, before)
	}
	if y.key != "module" {
		return nil, false
	}
	path, found := linePath(lines, first, pos.Line, y)
	if !found {
		return nil, false
	}
	sec := moduleSection(path)
	if sec == "" {
		return nil, false
	}
	value := bytes.TrimLeft(y.rest, " \t\"'")
	rng := diag.Range{Start: diag.Position{Line: pos.Line, Character: syntax.UTF16Len(before[:len(before)-len(value)])}, End: pos}
	res := w.checkBundle(b.without(lines, pos.Line))
	for _, m := range knownModules(res, b.root)[sec] {
		r := rng
		items = append(items, query.CompletionItem{Label: m.id, Kind: query.CompletionModule, Detail: m.from, Replace: &r})
	}
	return items, true
}

// bundleKey offers, on a line with no key yet, the keys of the schema
// at the cursor's mapping that are not written in it.
func (w *Workspace) bundleKey(b *bundleDoc, lines *syntax.LineIndex, first, last int, pos diag.Position, before []byte) ([]query.CompletionItem, bool) {
	n := pos.Line
	// A key being typed: indentation, maybe a dash, then a word.
	word := len(before)
	for word > 0 && isKeyByte(before[word-1]) {
		word--
	}
	lead := before[:word]
	t := bytes.TrimLeft(lead, " ")
	item := len(t) > 0
	if item && (t[0] != '-' || len(t) == 1 || len(bytes.TrimLeft(t[1:], " ")) != 0) {
		return nil, false
	}
	col := len(lead)
	var path []string
	var ok bool
	if item {
		path, ok = frontPath(lines, first, n, len(lead)-len(t), true)
	} else {
		path, ok = frontPath(lines, first, n, col, false)
	}
	if !ok || item && slices.Equal(path, []string{"includes", schema.ItemStep}) {
		return nil, false // an include's source, or its bundle: key
	}
	keys := bundle.KeysAt(b.kind, path)
	if keys == nil {
		return nil, false
	}
	present := siblingKeys(lines, first, last, n, col, item)
	rng := diag.Range{Start: diag.Position{Line: n, Character: syntax.UTF16Len(before[:word])}, End: pos}
	var items []query.CompletionItem
	for _, k := range keys {
		if present[k] {
			continue
		}
		r := rng
		items = append(items, query.CompletionItem{Label: k, InsertText: k + ": ", Kind: query.CompletionProperty,
			Detail: b.kind.String() + ": " + dotted(append(slices.Clip(path), k)), Replace: &r})
	}
	return items, true
}

// contextItems lists the repository's context files as a context.include
// entry may name them: ns:path for each namespace of the document that
// holds the file, and the path relative to the document's directory.
func (w *Workspace) contextItems(b *bundleDoc, lines *syntax.LineIndex, rng diag.Range) []query.CompletionItem {
	res := w.checkBundle(b.without(lines, rng.Start.Line))
	var items []query.CompletionItem
	for _, label := range contextLabels(res, b.files, b.path) {
		r := rng
		items = append(items, query.CompletionItem{Label: label.text, Kind: query.CompletionFile, Detail: label.path, Replace: &r})
	}
	return items
}

type contextLabel struct{ text, path string }

// maxContextListed bounds the context files listed of the namespaces
// outside the repository, and maxContextDepth the directories walked
// below their context/.
const (
	maxContextListed = 1000
	maxContextDepth  = 4
)

// contextLabels names the repository's context files as ns:path (each
// namespace of the document at path that holds them) and relative to
// the document's directory, and the Markdown files of context/ of the
// namespaces outside the repository (a bundle it includes) as ns:path;
// sorted.
func contextLabels(res *check.Result, files compose.Files, path string) []contextLabel {
	nss := bundleNamespaces(res, path)
	var out []contextLabel
	seen := map[string]bool{}
	add := func(text, p string) {
		if !seen[text] {
			seen[text] = true
			out = append(out, contextLabel{text, p})
		}
	}
	for _, f := range res.Files {
		if f.Kind != bundle.KindContext {
			continue
		}
		for _, n := range nss {
			if rel, err := filepath.Rel(n.Dir, f.Path); err == nil && within(f.Path, n.Dir) {
				add(n.Name+":"+filepath.ToSlash(rel), f.Path)
			}
		}
		if rel, err := filepath.Rel(filepath.Dir(path), f.Path); err == nil {
			add(filepath.ToSlash(rel), f.Path)
		}
	}
	listed := 0
	var walk func(ns, dir, rel string, depth int)
	walk = func(ns, dir, rel string, depth int) {
		names, _ := files.List(dir)
		for _, name := range names {
			if listed >= maxContextListed || strings.HasPrefix(name, ".") {
				return
			}
			p := filepath.Join(dir, name)
			switch files.Stat(p) {
			case compose.Directory:
				if depth < maxContextDepth {
					walk(ns, p, rel+name+"/", depth+1)
				}
			case compose.RegularFile:
				if strings.EqualFold(filepath.Ext(name), ".md") {
					listed++
					add(ns+":"+rel+name, p)
				}
			}
		}
	}
	for _, n := range nss {
		if !within(n.Dir, res.Repo.Root) {
			walk(n.Name, filepath.Join(n.Dir, "context"), "context/", 0)
		}
	}
	slices.SortFunc(out, func(a, b contextLabel) int { return strings.Compare(a.text, b.text) })
	return out
}

// bundleMention offers the repository's context files as ns:path after
// an @ in a Markdown body.
func (w *Workspace) bundleMention(b *bundleDoc, lines *syntax.LineIndex, pos diag.Position) ([]query.CompletionItem, bool) {
	before := lines.Line(pos.Line)[:lines.PositionOffset(pos)-lines.LineStart(pos.Line)]
	at := bytes.LastIndexByte(before, '@')
	if at < 0 || bytes.ContainsAny(before[at+1:], " \t`\"'()[]<>{}|*,") || at > 0 && isWordByte(before[at-1]) {
		return nil, false
	}
	rng := diag.Range{Start: diag.Position{Line: pos.Line, Character: syntax.UTF16Len(before[:at+1])}, End: pos}
	res := w.checkBundle(b)
	var items []query.CompletionItem
	for _, label := range contextLabels(res, b.files, b.path) {
		if !strings.Contains(label.text, ":") {
			continue // a mention is always namespaced
		}
		r := rng
		items = append(items, query.CompletionItem{Label: label.text, Kind: query.CompletionFile, Detail: label.path, Replace: &r})
	}
	return items, true
}

// moduleSection names the module list (or session module) whose entry
// holds the mapping at path: "tools", "session.orchestrator"; "" for
// none.
func moduleSection(path []string) string {
	switch {
	case len(path) == 2 && path[1] == schema.ItemStep && (path[0] == "providers" || path[0] == "tools" || path[0] == "hooks"):
		return path[0]
	case len(path) == 2 && path[0] == "session" && (path[1] == "orchestrator" || path[1] == "context"):
		return "session." + path[1]
	}
	return ""
}

type knownModule struct{ id, from string }

// knownModules lists, by section, the module ids the repository's files
// declare and its compositions mount (with what they include), each
// with where it was first seen, sorted by id.
func knownModules(res *check.Result, root string) map[string][]knownModule {
	out := map[string][]knownModule{}
	seen := map[string]bool{}
	note := func(sec, id, path string, line int) {
		if id == "" || seen[sec+"\x00"+id] {
			return
		}
		seen[sec+"\x00"+id] = true
		if rel, err := filepath.Rel(root, path); err == nil && within(path, root) {
			path = filepath.ToSlash(rel)
		}
		from := sec + " — " + path
		if line > 0 {
			from += fmt.Sprintf(":%d", line)
		}
		out[sec] = append(out[sec], knownModule{id, from})
	}
	mods := func(sec, path string, ms []bundle.Module) {
		for _, m := range ms {
			note(sec, m.ID, path, m.Range.Start.Line+1)
		}
	}
	for _, f := range res.Files {
		switch {
		case f.Bundle != nil:
			mods("providers", f.Path, f.Bundle.Providers)
			mods("tools", f.Path, f.Bundle.Tools)
			mods("hooks", f.Path, f.Bundle.Hooks)
		case f.Agent != nil:
			mods("providers", f.Path, f.Agent.Providers)
			mods("tools", f.Path, f.Agent.Tools)
			mods("hooks", f.Path, f.Agent.Hooks)
		}
	}
	paths := make([]string, 0, len(res.Compositions))
	for p := range res.Compositions {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		c := res.Compositions[p]
		for _, s := range []struct {
			sec string
			ms  []compose.ModuleOrigin
		}{{"providers", c.Origins.Providers}, {"tools", c.Origins.Tools}, {"hooks", c.Origins.Hooks}} {
			for _, m := range s.ms {
				note(s.sec, m.ID, m.Origin.Path, m.Origin.Line)
			}
		}
		for _, k := range []string{"orchestrator", "context"} {
			e, _ := c.MountPlan.Session.Value(k).(*bundle.Map)
			id, _ := e.Value("module").(string)
			o, ok := c.Origins.Session[k+".module"]
			if !ok {
				o = c.Origins.Session[k]
			}
			note("session."+k, id, cmp.Or(o.Path, p), o.Line)
		}
	}
	for sec := range out {
		slices.SortFunc(out[sec], func(a, b knownModule) int { return strings.Compare(a.id, b.id) })
	}
	return out
}
