//go:build unix

package query

import (
	"io/fs"
	"syscall"
)

// modeBits is true where permission bits keep other users out, so that
// the socket's directory is checked and made 0700.
const modeBits = true

// fallbackTmp holds the socket directories DefaultPaths falls back to.
func fallbackTmp() string { return "/tmp" }

// fileOwner returns the uid in fi's stat, or -1 when it has none.
func fileOwner(_ string, fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
