package bundle

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
)

// deref follows an alias.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

// pair is one key of a mapping node and its value.
type pair struct {
	key, val *yaml.Node
	name     string
	parent   *yaml.Node // the mapping
}

// pairs returns the keys of a mapping node in order (merge keys left out;
// a repeated key once, at its last place's value, as the runtime keeps it).
func pairs(n *yaml.Node) []pair {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out []pair
	at := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			continue
		}
		name := k.Value
		if j, ok := at[name]; ok {
			out[j].val = n.Content[i+1]
			continue
		}
		at[name] = len(out)
		out = append(out, pair{key: n.Content[i], val: n.Content[i+1], name: name, parent: n})
	}
	return out
}

// lookup returns the key and value nodes of key in a mapping node: the
// first key's node and the last value, as pairs has them.
func lookup(n *yaml.Node, key string) (k, v *yaml.Node) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := deref(n.Content[i])
		if kn == nil || kn.Kind != yaml.ScalarNode || kn.Tag == "!!merge" || kn.Value != key {
			continue
		}
		if k == nil {
			k = n.Content[i]
		}
		v = n.Content[i+1]
	}
	return k, v
}

// items returns the elements of a sequence node.
func items(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// isNull reports whether n is absent or a YAML null.
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 && resolvePlain(n.Value) == nil && n.Tag != "!!str")
}

// keyset is the keys a mapping of a schema may hold.
type keyset []string

// checkKeys reports every key of n outside known, suggesting the nearest,
// and returns the pairs.
func (d *doc) checkKeys(n *yaml.Node, where string, known keyset) []pair {
	ps := pairs(n)
	for _, p := range ps {
		if containsStr(known, p.name) {
			continue
		}
		d.unknownKey(p, where, known)
	}
	return ps
}

func (d *doc) unknownKey(p pair, where string, known keyset) {
	msg := "unknown key " + quote(p.name)
	if where != "" {
		msg += " in " + where
	}
	s := diag.Suggest(p.name, known)
	if s != "" {
		msg += "; did you mean " + quote(s) + "?"
	} else {
		msg += "; the runtime ignores it (known: " + strings.Join(known, ", ") + ")"
	}
	at := d.rangeOf(p.key)
	d.diags.add(CodeUnknownKey, diag.SeverityError, at, "%s", msg)
	if s != "" {
		d.renameKey(CodeUnknownKey, at, p, s)
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quote(s string) string { return "`" + s + "`" }

// kindName names the YAML type of a node as an author knows it.
func kindName(n *yaml.Node) string {
	n = deref(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "null"
	}
	v := resolvePlain(n.Value)
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		v = n.Value
	}
	return TypeName(v)
}

// isMapping, isSeq and isString test a node's YAML type.
func isMapping(n *yaml.Node) bool { n = deref(n); return n != nil && n.Kind == yaml.MappingNode }
func isSeq(n *yaml.Node) bool     { n = deref(n); return n != nil && n.Kind == yaml.SequenceNode }

// stringOf returns the string a scalar node holds, and whether it is one
// (a plain scalar that reads as a number, boolean or null is not).
func stringOf(n *yaml.Node) (string, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 || n.Tag == "!!str" {
		return n.Value, true
	}
	if s, ok := resolvePlain(n.Value).(string); ok {
		return s, true
	}
	return "", false
}

// wrongType reports a value of the wrong type.
func (d *doc) wrongType(n *yaml.Node, sev diag.Severity, what, want, fix string) {
	msg := what + " is " + kindName(n) + ", not " + want
	if fix != "" {
		msg += "; " + fix
	}
	d.diags.add(CodeWrongType, sev, d.rangeOf(n), "%s", msg)
}
