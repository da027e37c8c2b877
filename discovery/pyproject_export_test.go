package discovery

import "github.com/BurntSushi/toml"

// ScanTOMLSpans runs the TOML position scanner on src and returns how many
// spans it recorded, so that fuzz tests can feed it any input, and
// whether it found src beyond its bounds.
func ScanTOMLSpans(src []byte) (int, bool) {
	spans, deep := scanTOMLSpans(src)
	return len(spans), deep != nil
}

// IsPyprojectVersion is the version format check, for the test that holds
// it to its regular expression.
var IsPyprojectVersion = isPyprojectVersion

// DecodeTOMLFast and DecodeTOMLSlow are the two ways ParsePyproject
// decodes a text, for the test that holds them to the same results.
func DecodeTOMLFast(src []byte) (map[string]any, []toml.Key, bool) { return decodeTOMLFast(src) }

func DecodeTOMLSlow(src []byte) (map[string]any, []toml.Key, error) {
	doc, md, err := decodeTOML(src)
	if err != nil {
		return nil, nil, err
	}
	return doc, md.Keys(), nil
}
