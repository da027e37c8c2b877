package syntax

import (
	"path/filepath"
	"strings"
)

// Within reports whether the clean path p is dir or lies below it. It
// compares names, as the paths are given: it follows no link.
func Within(p, dir string) bool {
	if !strings.HasPrefix(p, dir) {
		return false
	}
	return len(p) == len(dir) || p[len(dir)] == filepath.Separator || strings.HasSuffix(dir, string(filepath.Separator))
}
