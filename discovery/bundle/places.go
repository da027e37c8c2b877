package bundle

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
)

// maxListedNodes bounds the nodes Nodes visits, aliases expanded.
const maxListedNodes = 100_000

// Node is a value of a file's YAML (its front matter, for a Markdown
// file) and where it is written: a mapping, a list or a scalar.
type Node struct {
	// Path is the keys and list indexes from the top: tools, 0, source.
	Path  []string
	Range diag.Range
	// String is the value of a string (IsString): quoted, a block,
	// tagged !!str, or plain and no number, boolean or null, as the
	// runtime's loader reads it.
	String   string
	IsString bool
}

// Nodes returns the values (not the keys) of the file's YAML, in the
// order written: where a command must point at a value that the model
// keeps without its place, such as a module's source. It parses the text
// again (a File keeps no syntax tree) and returns nothing for a file whose
// YAML does not parse.
func (f *File) Nodes() []Node {
	d := &doc{path: f.Path, src: f.src, lines: f.Lines(), diags: &sink{path: f.Path}}
	var root *yaml.Node
	var err error
	if f.Markdown {
		sp := splitFrontMatter(f.src)
		if !sp.found {
			return nil
		}
		root, err = d.parseYAML(f.src[sp.fmStart:sp.fmEnd], d.lines.Position(sp.fmStart).Line)
	} else {
		b := bomLen(f.src)
		if b > 0 {
			d.bomCol = 1
		}
		root, err = d.parseYAML(f.src[b:], 0)
	}
	if err != nil || root == nil {
		return nil
	}
	var out []Node
	budget := maxListedNodes
	var walk func(n *yaml.Node, path []string)
	walk = func(n *yaml.Node, path []string) {
		n = deref(n)
		budget--
		if n == nil || budget < 0 || len(path) > MaxDepth {
			return
		}
		v := Node{Path: path, Range: d.rangeOf(n)}
		if n.Kind == yaml.ScalarNode {
			v.String, v.IsString = n.Value, n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 ||
				n.Style&yaml.TaggedStyle != 0 && n.Tag == "!!str"
			if !v.IsString && n.Style&yaml.TaggedStyle == 0 {
				v.String, v.IsString = resolvePlain(n.Value).(string)
			}
		}
		out = append(out, v)
		switch n.Kind {
		case yaml.MappingNode:
			for _, p := range pairs(n) {
				walk(p.val, append(path[:len(path):len(path)], p.name))
			}
		case yaml.SequenceNode:
			for i, it := range n.Content {
				walk(it, append(path[:len(path):len(path)], strconv.Itoa(i)))
			}
		}
	}
	walk(root, nil)
	return out
}
