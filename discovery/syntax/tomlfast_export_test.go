package syntax

import (
	"github.com/BurntSushi/toml"
)

// DecodeTOMLSlow is the way ParsePyproject decodes a text the fast path
// does not read, for the test that holds the two to the same results.
func DecodeTOMLSlow(src []byte) (map[string]any, []toml.Key, error) {
	var doc map[string]any
	md, err := DecodeTOML(src, &doc)
	if err != nil {
		return nil, nil, err
	}
	return doc, md.Keys(), nil
}
