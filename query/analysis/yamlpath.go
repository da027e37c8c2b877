package analysis

import (
	"bytes"

	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Where the cursor is in front matter that is being typed, and so is often
// not valid YAML: read from the indentation of the lines above, as an
// author reads it. Block style only; a flow mapping ({a: b}) is not
// looked into.

// yamlLine is one line of front matter, as far as its structure goes.
type yamlLine struct {
	indent int  // spaces before the content
	blank  bool // empty, or a comment
	// item is set for "- …": col is then the column of what follows the
	// dash (and its spaces), else indent.
	item bool
	col  int
	// key is the key the line's content starts with ("" for none);
	// keyEnd is the byte offset just after it (its closing quote
	// included) and rest what follows the colon.
	key    string
	keyEnd int
	rest   []byte
}

// parseYAMLLine reads one line of block YAML.
func parseYAMLLine(l []byte) yamlLine {
	t := bytes.TrimLeft(l, " ")
	y := yamlLine{indent: len(l) - len(t)}
	if len(bytes.TrimSpace(t)) == 0 || t[0] == '#' {
		y.blank = true
		return y
	}
	y.col = y.indent
	if t[0] == '-' && (len(t) == 1 || t[1] == ' ' || t[1] == '\t') {
		y.item = true
		rest := bytes.TrimLeft(t[1:], " \t")
		y.col = len(l) - len(rest)
		t = rest
	}
	key, end, rest, ok := splitKey(t)
	if ok {
		y.key, y.keyEnd, y.rest = key, y.col+end, rest
	}
	return y
}

// splitKey splits "key: rest" (the key plain or quoted): end is the
// length of the key's text. A colon counts only before a space, a tab or
// the end of the line, as YAML has it.
func splitKey(t []byte) (key string, end int, rest []byte, ok bool) {
	if len(t) == 0 {
		return "", 0, nil, false
	}
	if q := t[0]; q == '"' || q == '\'' {
		i := bytes.IndexByte(t[1:], q)
		if i < 0 {
			return "", 0, nil, false
		}
		end = i + 2
		after := bytes.TrimLeft(t[end:], " ")
		if len(after) == 0 || after[0] != ':' || len(after) > 1 && after[1] != ' ' && after[1] != '\t' {
			return "", 0, nil, false
		}
		return string(t[1 : end-1]), end, after[1:], true
	}
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == ':' && (i+1 == len(t) || t[i+1] == ' ' || t[i+1] == '\t'):
			k := bytes.TrimRight(t[:i], " ")
			if len(k) == 0 {
				return "", 0, nil, false
			}
			return string(k), len(k), t[i+1:], true
		case t[i] == '#' && i > 0 && t[i-1] == ' ', t[i] == '{', t[i] == '[' && i == 0:
			return "", 0, nil, false
		}
	}
	return "", 0, nil, false
}

// frontPath returns the schema path (keys, schema.ItemStep for a list
// item) of the mapping whose keys start at column col on line n, from
// the lines above it down to first (the first line of the front matter).
// With item set, line n opens a list item whose dash is at column col,
// and the path is that of the list's items. ok is false when the lines
// above do not lead to the top level.
func frontPath(lines *syntax.LineIndex, first, n, col int, item bool) ([]string, bool) {
	var rev []string
	want := col    // the column of the keys (or, with inList, the dashes) looked for
	inList := item // looking for the key that owns a list whose dashes are at want
	if item {
		rev = append(rev, schema.ItemStep)
	}
	for i := n - 1; i >= first && (want > 0 || inList); i-- {
		y := parseYAMLLine(lines.Line(i))
		switch {
		case y.blank:
		case inList:
			if y.indent > want || y.item && y.indent == want {
				continue // an earlier item of the list, or its content
			}
			// The owner of the list: a key less indented, or at the same
			// column (a list written flush with its key).
			if y.key == "" {
				return nil, false
			}
			rev = append(rev, y.key)
			if y.item {
				// "- key:": the key is in an item of another list.
				rev = append(rev, schema.ItemStep)
				want = y.indent
			} else {
				want, inList = y.col, false
			}
		case y.item && y.col == want:
			// The first key of the item whose mapping this is.
			rev = append(rev, schema.ItemStep)
			want, inList = y.indent, true
		case y.item && y.col < want:
			// "- key:" whose value holds the mapping.
			if y.key == "" {
				return nil, false
			}
			rev = append(rev, y.key, schema.ItemStep)
			want, inList = y.indent, true
		case !y.item && y.indent < want:
			if y.key == "" {
				return nil, false
			}
			rev = append(rev, y.key)
			want = y.indent
		}
	}
	if want > 0 || inList {
		return nil, false
	}
	path := make([]string, len(rev))
	for i, s := range rev {
		path[len(rev)-1-i] = s
	}
	return path, true
}

// siblingKeys returns the keys already written in the mapping whose keys
// start at column col around line n (line n itself left out), between
// the front matter's first line and its last (excluded). With item set,
// line n opens a new list item, whose mapping has only the keys below it.
func siblingKeys(lines *syntax.LineIndex, first, last, n, col int, item bool) map[string]bool {
	keys := map[string]bool{}
	for i := n - 1; i >= first && !item; i-- {
		y := parseYAMLLine(lines.Line(i))
		switch {
		case y.blank || y.indent > col || y.item && y.indent == col:
			continue // deeper, or a list flush with a sibling key
		case y.item && y.col == col:
			keys[y.key] = true // the first key of this item
		case !y.item && y.indent == col:
			keys[y.key] = true
			continue
		}
		break
	}
	for i := n + 1; i < last; i++ {
		y := parseYAMLLine(lines.Line(i))
		switch {
		case y.blank || y.indent > col || y.item && y.indent == col:
			continue
		case !y.item && y.indent == col:
			keys[y.key] = true
			continue
		}
		break
	}
	delete(keys, "")
	return keys
}
