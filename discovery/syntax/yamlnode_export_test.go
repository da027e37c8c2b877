package syntax

import "go.yaml.in/yaml/v3"

// The YAML 1.1 scalar matchers, for the test that holds them to the
// resolver's regular expressions.
var (
	IsYAML11Bool  = isYAML11Bool
	IsYAML11Int   = isYAML11Int
	IsYAML11Float = isYAML11Float
	IsYAML11Null  = isYAML11Null
)

// ParseYAMLFast and ParseYAMLSlow are the two ways ParseYAML reads a text,
// for the test that holds them to the same trees.
func ParseYAMLFast(text []byte) (*yaml.Node, bool) { return parseYAMLFast(text, nil) }

// ParseYAMLFastWithoutComments is the fast path of ParseYAMLWithoutComments.
func ParseYAMLFastWithoutComments(text []byte) (*yaml.Node, bool) {
	return parseYAMLFastIn(fastYAML{comments: true, text: text, curLine: -1}, nil)
}

func ParseYAMLSlow(text []byte) (*yaml.Node, error) {
	n, err := parseYAMLSlow(text)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// CutYAMLErrLine reads the line of a go-yaml message, for the test that
// holds it to the regular expression it replaces.
var CutYAMLErrLine = cutYAMLErrLine

// PlainTag is the fast path's tag of a plain scalar.
var PlainTag = plainTag

// YAMLTextTables returns the line starts and the breaks NewYAMLText finds
// in src[start:end], by the way it takes for the text (fast) and by the
// way for any text.
func YAMLTextTables(src []byte, start, end int) (fast, any [2][]int) {
	f, a := NewYAMLText(src, start, end), newYAMLTextAnyBreaks(src, start, end)
	return [2][]int{f.lines, f.breaks}, [2][]int{a.lines, a.breaks}
}
