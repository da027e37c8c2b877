//go:build unix

package daemon

import (
	"io/fs"
	"syscall"
)

// ownedBy reports whether the file is owned by uid.
func ownedBy(fi fs.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == uid
}
