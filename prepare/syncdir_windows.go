//go:build windows

package prepare

// syncDir does nothing on Windows: a directory opened for reading cannot
// be flushed (FlushFileBuffers wants write access), and NTFS journals the
// renames that make an entry.
func syncDir(dir string) error { return nil }
