package migrate

// ParseManifest is parseManifest: the collection and the files, ok.
func ParseManifest(src []byte) (string, map[string]string, bool) {
	m, ok := parseManifest(src)
	return m.collection, m.files, ok
}
