package compose

// NamespaceOf returns the namespace the bundle file at path shares, its
// bundle.name being name: its repository's root bundle's name (the
// nearest bundle.md or bundle.yaml above its directory), else its own.
func NamespaceOf(files Files, path, name string) string { return namespaceOf(files, path, name) }
