package analysis

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
)

// complete offers, at pos: profile references after `extends:`, agent names
// in a profile's agents list (and a bundle's agents.include), known module
// ids after `module:`, the other keys of the schema's mapping and the
// values of a key with a fixed set, collection names and files after an
// "@" in the Markdown body, and in pyproject.toml the keys of
// [tool.amplifier.collection] and the collections a requires table may
// name.
func (w *Workspace) complete(ctx context.Context, base *catalog.View, path string, text []byte, overlay map[string][]byte, pos diag.Position) []query.CompletionItem {
	lines := syntax.NewLineIndex(text)
	if pos.Line < 0 || pos.Line >= lines.Lines() {
		return nil
	}
	line := lines.Line(pos.Line)
	lineStart := lines.LineStart(pos.Line)
	cur := lines.PositionOffset(pos) - lineStart
	before := line[:cur]

	inFront := false
	if fm, err := syntax.SplitFrontMatter(text); err == nil || errors.Is(err, syntax.ErrUnterminated) {
		at := lineStart + cur
		inFront = at >= fm.Start && (err != nil || at < fm.End)
	}
	if !inFront {
		if kindOf(path) == filePyproject {
			v := w.layer(ctx, base, path, text, overlay)
			return tableComplete(v.set, v.own, lines, pos, before)
		}
		return w.completeMention(ctx, base, path, text, overlay, pos, before)
	}
	c, ok := frontContext(lines, pos.Line, before)
	if !ok {
		kind, ok := docKindOf(path)
		first, last, inYAML := frontLines(text, lines)
		if !ok || !inYAML || pos.Line < first {
			return nil
		}
		return schemaComplete(kind, lines, first, last, pos, before)
	}
	rng := diag.Range{
		Start: diag.Position{Line: pos.Line, Character: syntax.UTF16Len(before[:c.tokenStart])},
		End:   pos,
	}
	v := w.layer(ctx, base, path, text, overlay)
	var items []query.CompletionItem
	switch c.what {
	case "extends":
		items = profileItems(v, path)
	case "agent":
		items = agentItems(v)
	case "module":
		items = moduleItems(v)
	}
	for i := range items {
		items[i].Replace = &rng
	}
	return items
}

// frontCompletion is what the cursor is on in front matter.
type frontCompletion struct {
	what       string // "extends", "agent" or "module"
	tokenStart int    // byte offset in the line where the value typed so far starts
}

// frontContext tells what value the cursor is typing in front matter: the
// value of an extends or module key, or an item of an agents list (block
// or flow style) or of a bundle's agents.include.
func frontContext(lines *syntax.LineIndex, n int, before []byte) (frontCompletion, bool) {
	indent := len(before) - len(bytes.TrimLeft(before, " "))
	rest := before[indent:]
	item := false
	if bytes.HasPrefix(rest, []byte("- ")) || bytes.Equal(rest, []byte("-")) {
		item = true
		rest = bytes.TrimLeft(rest[1:], " ")
	}
	if key, value, ok := bytes.Cut(rest, []byte(":")); ok && isKey(key) && !bytes.Contains(key, []byte(" ")) {
		start := len(before) - len(value)
		switch k := string(key); {
		case k == "extends" || k == "module":
			start += len(value) - len(bytes.TrimLeft(value, " \"'"))
			what := k
			return frontCompletion{what: what, tokenStart: start}, true
		case (k == "agents" || k == "include") && bytes.Contains(value, []byte("[")):
			// Flow style: agents: [a, b, |
			i := bytes.LastIndexAny(value, "[,")
			start += i + 1
			start += len(value[i+1:]) - len(bytes.TrimLeft(value[i+1:], " \"'"))
			if k == "include" || indent == 0 {
				return frontCompletion{what: "agent", tokenStart: start}, true
			}
		}
		return frontCompletion{}, false
	}
	if !item {
		return frontCompletion{}, false
	}
	start := len(before) - len(bytes.TrimLeft(rest, "\"'"))
	// A block list item: its key is the nearest line above indented less.
	for i := n - 1; i >= 0; i-- {
		l := lines.Line(i)
		t := bytes.TrimLeft(l, " ")
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		ind := len(l) - len(t)
		if ind > indent || ind == indent && t[0] == '-' {
			continue
		}
		key, _, ok := bytes.Cut(t, []byte(":"))
		if !ok {
			return frontCompletion{}, false
		}
		switch {
		case string(key) == "agents" && ind == 0:
			return frontCompletion{what: "agent", tokenStart: start}, true
		case string(key) == "include" && parentKey(lines, i, ind) == "agents":
			return frontCompletion{what: "agent", tokenStart: start}, true
		}
		return frontCompletion{}, false
	}
	return frontCompletion{}, false
}

// parentKey returns the key of the mapping that holds line n, indented ind.
func parentKey(lines *syntax.LineIndex, n, ind int) string {
	for i := n - 1; i >= 0; i-- {
		l := lines.Line(i)
		t := bytes.TrimLeft(l, " ")
		if len(t) == 0 || t[0] == '#' || len(l)-len(t) >= ind {
			continue
		}
		key, _, _ := bytes.Cut(t, []byte(":"))
		return string(key)
	}
	return ""
}

func isKey(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// profileItems lists the profiles an extends value may name: bare names in
// the file's own collection, collection:name everywhere.
func profileItems(v *layered, self string) []query.CompletionItem {
	var items []query.CompletionItem
	seen := map[string]bool{}
	add := func(label string, c *discovery.Collection, r discovery.Resource) {
		if seen[label] || r.Path == keyIn(c, self) {
			return
		}
		seen[label] = true
		it := query.CompletionItem{Label: label, Kind: query.CompletionReference, Detail: r.Path}
		if f := c.Facts[r.Path]; f != nil {
			it.Documentation = f.Description
		}
		items = append(items, it)
	}
	if v.own != nil {
		for _, r := range v.own.Resources {
			if r.Kind == discovery.KindProfile {
				add(r.Name, v.own, r)
			}
		}
	}
	for _, c := range v.set.Winners() {
		for _, r := range c.Resources {
			if r.Kind == discovery.KindProfile {
				add(c.Name+":"+r.Name, c, r)
			}
		}
	}
	sortItems(items)
	return items
}

// agentItems lists agent names: the own collection's first, then those of
// every collection a bare name reaches.
func agentItems(v *layered) []query.CompletionItem {
	var items []query.CompletionItem
	seen := map[string]bool{}
	cols := v.set.Winners()
	if v.own != nil {
		cols = append([]*discovery.Collection{v.own}, cols...)
	}
	for _, c := range cols {
		for _, r := range c.Resources {
			if r.Kind != discovery.KindAgent || seen[r.Name] {
				continue
			}
			seen[r.Name] = true
			it := query.CompletionItem{Label: r.Name, Kind: query.CompletionValue, Detail: c.Name + ": " + r.Path}
			if f := c.Facts[r.Path]; f != nil {
				it.Documentation = f.Description
			}
			items = append(items, it)
		}
	}
	sortItems(items)
	return items
}

// moduleItems lists the module ids known to the collections: their modules/
// directories and every module profiles name.
func moduleItems(v *layered) []query.CompletionItem {
	where := map[string]string{}
	note := func(id, from string) {
		if id != "" && where[id] == "" {
			where[id] = from
		}
	}
	cols := v.set.Winners()
	if v.own != nil {
		cols = append([]*discovery.Collection{v.own}, cols...)
	}
	for _, c := range cols {
		for _, r := range c.Resources {
			switch r.Kind {
			case discovery.KindModule:
				note(r.Name, "module in "+c.Name)
			case discovery.KindProfile:
				if f := c.FullFacts(r.Path); f != nil {
					for _, id := range moduleIDs(f.Front) {
						note(id, "used by "+c.Name+":"+r.Name)
					}
				}
			}
		}
	}
	items := make([]query.CompletionItem, 0, len(where))
	for id, from := range where {
		items = append(items, query.CompletionItem{Label: id, Kind: query.CompletionModule, Detail: discovery.ModuleType(id) + " — " + from})
	}
	sortItems(items)
	return items
}

// moduleIDs returns the module ids a profile's decoded front matter names.
func moduleIDs(front *syntax.Map) []string {
	var ids []string
	entry := func(e any) {
		if m, ok := e.(*syntax.Map); ok {
			if id, ok := m.Value("module").(string); ok {
				ids = append(ids, id)
			}
		}
	}
	for _, sec := range []string{"providers", "tools", "hooks"} {
		if list, ok := front.Value(sec).([]any); ok {
			for _, e := range list {
				entry(e)
			}
		}
	}
	if s, ok := front.Value("session").(*syntax.Map); ok {
		entry(s.Value("orchestrator"))
		entry(s.Value("context"))
	}
	return ids
}

// completeMention offers "@collection:" and then the files of that
// collection, in Markdown text.
func (w *Workspace) completeMention(ctx context.Context, base *catalog.View, path string, text []byte, overlay map[string][]byte, pos diag.Position, before []byte) []query.CompletionItem {
	at := bytes.LastIndexByte(before, '@')
	if at < 0 {
		return nil
	}
	token := before[at+1:]
	if bytes.ContainsAny(token, " \t`\"'()[]<>{}|*,") || at > 0 && isWordByte(before[at-1]) {
		return nil
	}
	rng := diag.Range{Start: diag.Position{Line: pos.Line, Character: syntax.UTF16Len(before[:at+1])}, End: pos}
	v := w.layer(ctx, base, path, text, overlay)
	var items []query.CompletionItem
	coll, _, qualified := bytes.Cut(token, []byte(":"))
	if !qualified {
		for _, c := range v.set.Winners() {
			items = append(items, query.CompletionItem{Label: c.Name + ":", Kind: query.CompletionModule, Detail: c.Dir, Documentation: c.Description})
		}
	} else if c := v.set.Lookup(string(coll)); c != nil {
		for _, r := range c.Resources {
			if r.Kind == discovery.KindTool || r.Kind == discovery.KindModule {
				continue
			}
			items = append(items, query.CompletionItem{Label: c.Name + ":" + r.Rel, Kind: query.CompletionFile, Detail: r.Path})
		}
	}
	for i := range items {
		items[i].Replace = &rng
	}
	sortItems(items)
	return items
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.-/@", c) >= 0
}

func sortItems(items []query.CompletionItem) {
	sort.Slice(items, func(i, j int) bool { return items[i].Label < items[j].Label })
}
