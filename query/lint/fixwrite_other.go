//go:build !unix

package lint

import "os"

// openToFix opens the file at path, a real path, to read and write it.
func openToFix(path string) (*os.File, error) { return os.OpenFile(path, os.O_RDWR, 0) }

// isReadOnlyFS reports false: the system says so as a permission error.
func isReadOnlyFS(error) bool { return false }

// isLoop reports false: openToFix follows what it opens.
func isLoop(error) bool { return false }
