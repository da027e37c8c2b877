//go:build unix

package watcher

import (
	"io/fs"
	"syscall"
)

// keyOf returns the device and inode numbers of fi, or the zero key when
// the platform does not say.
func keyOf(fi fs.FileInfo) fileKey {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileKey{}
}
