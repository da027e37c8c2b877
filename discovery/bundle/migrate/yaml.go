package migrate

import (
	"bytes"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// maxNodes bounds the YAML nodes of one front matter once its aliases
// are expanded.
const maxNodes = 100_000

// errTooManyNodes is returned when aliases expand past maxNodes.
var errTooManyNodes = errors.New("aliases expand past 100,000 values")

// parseMapping parses YAML text into its top-level mapping, with every
// alias replaced by a copy of what it names. Empty text is an empty
// mapping; text that holds something else is an error saying what.
func parseMapping(text []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || (doc.Kind == yaml.DocumentNode && len(doc.Content) == 0) {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, nil
	}
	n := &doc
	if n.Kind == yaml.DocumentNode {
		n = n.Content[0]
	}
	budget := maxNodes
	n, err := expand(n, &budget, 0)
	if err != nil {
		return nil, err
	}
	switch {
	case n.Kind == yaml.MappingNode:
		return n, nil
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, nil
	}
	return nil, fmt.Errorf("it is %s, not a mapping of keys to values", kindName(n))
}

// expand returns n with its aliases replaced by copies, and no anchors;
// it fails once more than *budget nodes have been made.
func expand(n *yaml.Node, budget *int, depth int) (*yaml.Node, error) {
	if *budget--; *budget < 0 || depth > 10_000 {
		return nil, errTooManyNodes
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
		}
		c, err := expand(n.Alias, budget, depth+1)
		if err != nil {
			return nil, err
		}
		c.Line, c.Column = n.Line, n.Column
		return c, nil
	}
	c := *n
	c.Anchor, c.Alias = "", nil
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			e, err := expand(ch, budget, depth+1)
			if err != nil {
				return nil, err
			}
			c.Content[i] = e
		}
	}
	return &c, nil
}

// kindName says what a node is, for a message.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "empty"
		}
		return "the value " + n.Value
	}
	return "not a value"
}

// pair is one key and its value in a mapping.
type pair struct {
	key, val *yaml.Node
}

// pairs returns the entries of a mapping in order; none for another node.
func pairs(m *yaml.Node) []pair {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]pair, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, pair{m.Content[i], m.Content[i+1]})
	}
	return out
}

// lookup returns the value of key in a mapping, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	for _, p := range pairs(m) {
		if p.key.Kind == yaml.ScalarNode && p.key.Value == key {
			return p.val
		}
	}
	return nil
}

// str returns a scalar's text and whether it is a string the runtime
// reads as one (not null, not a collection).
func str(n *yaml.Node) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", false
	}
	return n.Value, true
}

// isNull reports whether n is absent or an empty value.
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// mapping is a mapping node being built.
type mapping struct{ n *yaml.Node }

func newMapping() mapping {
	return mapping{&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}}
}

// set appends key: val.
func (m mapping) set(key string, val *yaml.Node) {
	m.n.Content = append(m.n.Content, scalar(key), val)
}

// setKey appends key: val keeping the key node written (its comments).
func (m mapping) setKey(key, val *yaml.Node) {
	k := *key
	m.n.Content = append(m.n.Content, &k, val)
}

func (m mapping) empty() bool { return len(m.n.Content) == 0 }

// scalar returns a string node; the encoder quotes it when the runtime's
// YAML loader would read the text as something else.
func scalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// seq returns a block list of the nodes.
func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// encode writes a node as YAML with two-space indents.
func encode(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	if err := e.Encode(n); err != nil {
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
