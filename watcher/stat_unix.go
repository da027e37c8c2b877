//go:build unix

package watcher

import (
	"io/fs"
	"syscall"
)

// fileID returns the device and inode numbers of fi, or zeros when the
// platform does not say.
func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
