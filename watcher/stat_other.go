//go:build !unix

package watcher

import "io/fs"

// fileID returns zeros: identities are only known on unix.
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }
