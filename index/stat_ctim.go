//go:build linux || dragonfly || openbsd || solaris

package index

import (
	"io/fs"
	"syscall"
)

// sysStat returns the inode number and the change time (st_ctim, Unix
// nanoseconds) of fi, or zeros when fi carries no syscall.Stat_t.
func sysStat(fi fs.FileInfo) (inode uint64, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Ino), st.Ctim.Nano()
}
