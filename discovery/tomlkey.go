package discovery

import (
	"github.com/amplidex/amplidex/discovery/diag"
)

// TOMLKeyRange returns where the key at path is written in the TOML text
// src: the key of `name = …` in a table, a dotted key, or a table header
// (`[roots]`), or the first key under a table written only as the prefix
// of longer keys. It reports false when the key is not written there. It
// reads src once and decodes nothing, so it also serves for text the
// decoder rejected for another reason (an unknown key, a wrong type).
func TOMLKeyRange(src []byte, path ...string) (diag.Range, bool) {
	if len(path) == 0 {
		return diag.Range{}, false
	}
	spans, _ := scanTOMLSpans(src)
	s, ok := spans[tomlPath(path)]
	if !ok {
		return diag.Range{}, false
	}
	return NewLineIndex(src).Range(s.keyStart, s.keyEnd), true
}
