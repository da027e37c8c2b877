package catalog

// SetRead replaces how f reads a file (tests hold a read back with it).
func SetRead(f *Files, read func(path string, limit int64) ([]byte, error)) { f.read = read }
