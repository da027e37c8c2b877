//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// filestat prints, for each path, what a script checks of a file that is
// written in place: "PATH: symlink", or "PATH: file mode=0644 uid=N
// links=N". Usage: filestat PATH...
func filestat(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: filestat PATH...")
	}
	for _, p := range args {
		fi, err := os.Lstat(ts.MkAbs(p))
		ts.Check(err)
		if fi.Mode()&os.ModeSymlink != 0 {
			fmt.Fprintf(ts.Stdout(), "%s: symlink\n", p)
			continue
		}
		st := fi.Sys().(*syscall.Stat_t)
		fmt.Fprintf(ts.Stdout(), "%s: file mode=%04o uid=%d links=%d\n", p, fi.Mode().Perm(), st.Uid, st.Nlink)
	}
}
