//go:build !unix

package watcher

import "io/fs"

// keyOf returns the zero key: identities are only known on unix.
func keyOf(fs.FileInfo) fileKey { return fileKey{} }
