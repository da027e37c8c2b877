//go:build unix

package service

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// redirectOutput points the process's stdout and stderr at f, so that what
// the runtime itself prints (a panic, say) lands in the log too.
func redirectOutput(f *os.File) error {
	for _, fd := range []int{1, 2} {
		if err := unix.Dup2(int(f.Fd()), fd); err != nil {
			return fmt.Errorf("redirect fd %d: %w", fd, err)
		}
	}
	return nil
}
