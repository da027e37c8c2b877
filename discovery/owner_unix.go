//go:build unix

package discovery

import (
	"io/fs"
	"syscall"
)

// fileOwner returns the user id that owns a file, from its stat.
func fileOwner(_ string, fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
