//go:build !(linux || dragonfly || openbsd || solaris || darwin || freebsd || netbsd)

package index

import "io/fs"

// sysStat reports neither an inode number nor a change time on this
// platform: Windows has no inode change time in what os.Stat returns.
func sysStat(fs.FileInfo) (inode uint64, ctime int64) { return 0, 0 }
