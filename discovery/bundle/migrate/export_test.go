package migrate

// Unified is unified, for the fuzz test of the diff.
func Unified(a, b []string) string { return unified(a, b) }

// Lines is lines.
func Lines(b []byte) []string { return lines(b) }

// ParseManifest is parseManifest: the collection and the files, ok.
func ParseManifest(src []byte) (string, map[string]string, bool) {
	m, ok := parseManifest(src)
	return m.collection, m.files, ok
}
