package analysis

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
)

// What the schemas tell an editor: the keys a mapping knows, with what
// each one is for, and the values a key allows, in the front matter of
// profiles, agents and bundle manifests and in [tool.amplifier.collection]
// of pyproject.toml.

// docKindOf returns the schema of a file's front matter.
func docKindOf(path string) (schema.DocKind, bool) {
	switch kindOf(path) {
	case fileProfile:
		return schema.DocProfile, true
	case fileAgent:
		if isBundleAgent(path) {
			return schema.DocBundleAgent, true
		}
		return schema.DocAgent, true
	case fileBundle:
		return schema.DocBundle, true
	}
	return "", false
}

// frontLines returns the lines of the YAML between the front matter's
// delimiters: from first up to last (excluded; the closing delimiter, or
// the end of an unterminated block).
func frontLines(text []byte, lines *syntax.LineIndex) (first, last int, ok bool) {
	fm, err := syntax.SplitFrontMatter(text)
	switch {
	case err == nil:
		return lines.Position(fm.Start).Line, lines.Position(fm.End).Line, true
	case errors.Is(err, syntax.ErrUnterminated):
		return lines.Position(fm.Start).Line, lines.Lines(), true
	}
	return 0, 0, false
}

// linePath returns the schema path of the mapping that holds the key of
// line n (y is that line, parsed).
func linePath(lines *syntax.LineIndex, first, n int, y yamlLine) ([]string, bool) {
	if y.item {
		return frontPath(lines, first, n, y.indent, true)
	}
	return frontPath(lines, first, n, y.col, false)
}

// isKeyByte reports a byte of a plain key as authors write them.
func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// schemaComplete offers, in front matter, the keys of the mapping the
// cursor is in (those not written yet) or the values the key of the line
// allows. before is line n up to the cursor at pos.
func schemaComplete(kind schema.DocKind, lines *syntax.LineIndex, first, last int, pos diag.Position, before []byte) []query.CompletionItem {
	n := pos.Line
	y := parseYAMLLine(before)
	if y.key != "" {
		return valueItems(kind, lines, first, n, y, pos, before)
	}
	// A key being typed: indentation, maybe a dash, then a word.
	word := len(before)
	for word > 0 && isKeyByte(before[word-1]) {
		word--
	}
	lead := before[:word]
	t := bytes.TrimLeft(lead, " ")
	item := false
	dash := len(lead) - len(t)
	if len(t) > 0 {
		if t[0] != '-' || len(bytes.TrimLeft(t[1:], " ")) != 0 || len(t) == 1 {
			return nil
		}
		item = true
	}
	col := len(lead)
	var path []string
	var ok bool
	if item {
		path, ok = frontPath(lines, first, n, dash, true)
	} else {
		path, ok = frontPath(lines, first, n, col, false)
	}
	if !ok {
		return nil
	}
	keys, ok := schema.Keys(kind, path)
	if !ok {
		return nil
	}
	present := siblingKeys(lines, first, last, n, col, item)
	rng := diag.Range{Start: diag.Position{Line: n, Character: syntax.UTF16Len(before[:word])}, End: pos}
	var items []query.CompletionItem
	for _, k := range keys {
		if present[k.Name] {
			continue
		}
		insert := k.Name + ": "
		switch pad := strings.Repeat(" ", col+2); {
		case k.Mapping && !k.Scalar && !k.List:
			insert = k.Name + ":\n" + pad
		case k.List && !k.Scalar && !k.Mapping:
			insert = k.Name + ":\n" + pad + "- "
		}
		items = append(items, query.CompletionItem{Label: k.Name, InsertText: insert, Kind: query.CompletionProperty,
			Detail: keyDetail(k), Documentation: k.Doc, Replace: &rng})
	}
	return items
}

// valueItems offers the values the key of line n allows (a fixed set of
// strings, or true and false), once the cursor is past its colon.
func valueItems(kind schema.DocKind, lines *syntax.LineIndex, first, n int, y yamlLine, pos diag.Position, before []byte) []query.CompletionItem {
	value := bytes.TrimLeft(y.rest, " \t")
	quote := ""
	if len(value) > 0 && (value[0] == '"' || value[0] == '\'') {
		quote, value = string(value[:1]), value[1:]
	}
	for _, c := range value {
		if !isKeyByte(c) {
			return nil
		}
	}
	path, ok := linePath(lines, first, n, y)
	if !ok {
		return nil
	}
	k, ok := schema.Key(kind, append(path, y.key))
	if !ok {
		return nil
	}
	values := k.Values
	if k.Bool && quote == "" {
		values = append(values[:len(values):len(values)], "true", "false")
	}
	start := len(before) - len(value)
	rng := diag.Range{Start: diag.Position{Line: n, Character: syntax.UTF16Len(before[:start])}, End: pos}
	var items []query.CompletionItem
	for _, v := range values {
		items = append(items, query.CompletionItem{Label: v, Kind: query.CompletionEnumMember,
			Detail: k.Name + ": " + k.Type, Documentation: k.Doc, Replace: &rng})
	}
	return items
}

// keyDetail is the one-line note of a key: its type, and whether it is
// required.
func keyDetail(k schema.KeyInfo) string {
	switch {
	case k.Required:
		return k.Type + " (required)"
	case k.RootOnly:
		return k.Type + " (required unless the profile extends another)"
	case k.Unless != "":
		return k.Type + " (required unless " + k.Unless + " is there)"
	}
	return k.Type
}

// keyHover describes the key under the cursor: what it is for, what its
// value may be, and whether it is required.
func keyHover(path string, text []byte, pos diag.Position) (string, bool) {
	lines := syntax.NewLineIndex(text)
	if pos.Line < 0 || pos.Line >= lines.Lines() {
		return "", false
	}
	line := lines.Line(pos.Line)
	cur := lines.PositionOffset(pos) - lines.LineStart(pos.Line)
	if kindOf(path) == filePyproject {
		return tableKeyHover(lines, pos.Line, line, cur)
	}
	kind, ok := docKindOf(path)
	if !ok {
		return "", false
	}
	first, last, ok := frontLines(text, lines)
	if !ok || pos.Line < first || pos.Line >= last {
		return "", false
	}
	y := parseYAMLLine(line)
	if y.key == "" || cur < y.col || cur > y.keyEnd {
		return "", false
	}
	at, ok := linePath(lines, first, pos.Line, y)
	if !ok {
		return "", false
	}
	at = append(at, y.key)
	k, ok := schema.Key(kind, at)
	if !ok {
		return "", false
	}
	return describeKey(dotted(at), k), true
}

// dotted writes a schema path as authors read it: tools[].module.
func dotted(path []string) string {
	var b strings.Builder
	for i, s := range path {
		switch {
		case s == schema.ItemStep:
			b.WriteString("[]")
		case i > 0:
			b.WriteString("." + s)
		default:
			b.WriteString(s)
		}
	}
	return b.String()
}

// describeKey is the hover text of a key, in Markdown.
func describeKey(name string, k schema.KeyInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**`%s`**: %s\n", name, k.Type)
	if k.Doc != "" {
		fmt.Fprintf(&b, "\n%s\n", k.Doc)
	}
	switch {
	case k.Required:
		b.WriteString("\nRequired.\n")
	case k.RootOnly:
		b.WriteString("\nRequired unless the profile extends another.\n")
	case k.Unless != "":
		fmt.Fprintf(&b, "\nRequired unless `%s` is there.\n", k.Unless)
	}
	return b.String()
}

// The tables of pyproject.toml the schemas know.
const (
	collectionTable = "tool.amplifier.collection"
	requiresTable   = "tool.amplifier.collection.requires"
)

// tableOf returns the name of the TOML table line n is in ("" before the
// first header), and the line of its header (-1 for none).
func tableOf(lines *syntax.LineIndex, n int) (string, int) {
	for i := n; i >= 0; i-- {
		t := bytes.TrimSpace(lines.Line(i))
		if len(t) == 0 || t[0] != '[' {
			continue
		}
		if i == n {
			return "", -1 // a header itself
		}
		if bytes.HasPrefix(t, []byte("[[")) {
			return "[[array]]", i
		}
		end := bytes.IndexByte(t, ']')
		if end < 0 {
			return "", i
		}
		var parts []string
		for p := range strings.SplitSeq(string(t[1:end]), ".") {
			parts = append(parts, strings.Trim(strings.TrimSpace(p), `"'`))
		}
		return strings.Join(parts, "."), i
	}
	return "", -1
}

// tableKeys returns the keys written in the table whose header is on
// line header, up to the next header.
func tableKeys(lines *syntax.LineIndex, header int) map[string]bool {
	keys := map[string]bool{}
	for i := header + 1; i < lines.Lines(); i++ {
		t := bytes.TrimSpace(lines.Line(i))
		if len(t) > 0 && t[0] == '[' {
			break
		}
		if k, _, ok := bytes.Cut(t, []byte("=")); ok {
			keys[strings.Trim(string(bytes.TrimSpace(k)), `"'`)] = true
		}
	}
	return keys
}

// tableComplete offers, in pyproject.toml, the keys of
// [tool.amplifier.collection] and, in [tool.amplifier.collection.requires],
// the collections of the roots (other than the file's own, own) with a
// constraint on the version that resolves.
func tableComplete(set *resolve.Set, own *discovery.Collection, lines *syntax.LineIndex, pos diag.Position, before []byte) []query.CompletionItem {
	word := len(before)
	for word > 0 && isKeyByte(before[word-1]) {
		word--
	}
	if len(bytes.TrimSpace(before[:word])) != 0 {
		return nil
	}
	table, header := tableOf(lines, pos.Line)
	if header < 0 {
		return nil
	}
	present := tableKeys(lines, header)
	rng := diag.Range{Start: diag.Position{Line: pos.Line, Character: syntax.UTF16Len(before[:word])}, End: pos}
	var items []query.CompletionItem
	switch table {
	case collectionTable:
		documented := schema.DocumentedCollectionKeys()
		for _, k := range schema.CollectionKeys() {
			if present[k.Name] || !slices.Contains(documented, k.Name) {
				continue
			}
			items = append(items, query.CompletionItem{Label: k.Name, InsertText: k.Name + " = ", Kind: query.CompletionProperty,
				Detail: k.Type, Documentation: k.Doc, Replace: &rng})
		}
	case requiresTable:
		for _, c := range set.Winners() {
			if present[c.Name] || own != nil && c.Name == own.Name {
				continue
			}
			insert := c.Name + ` = ""`
			if c.Version != "" {
				insert = fmt.Sprintf("%s = \"^%s\"", c.Name, c.Version)
			}
			items = append(items, query.CompletionItem{Label: c.Name, InsertText: insert, Kind: query.CompletionModule,
				Detail: c.Version + " " + c.Dir, Documentation: c.Description, Replace: &rng})
		}
		sortItems(items)
	}
	return items
}

// tableKeyHover describes a key of [tool.amplifier.collection].
func tableKeyHover(lines *syntax.LineIndex, n int, line []byte, cur int) (string, bool) {
	if table, _ := tableOf(lines, n); table != collectionTable {
		return "", false
	}
	t := bytes.TrimLeft(line, " \t")
	start := len(line) - len(t)
	k, _, ok := bytes.Cut(t, []byte("="))
	key := strings.TrimSpace(string(k))
	if !ok || cur < start || cur > start+len(key) {
		return "", false
	}
	key = strings.Trim(key, `"'`)
	for _, info := range schema.CollectionKeys() {
		if info.Name == key {
			return describeKey("tool.amplifier.collection."+key, info), true
		}
	}
	return "", false
}
