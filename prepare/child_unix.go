//go:build unix

package prepare

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// ownGroup makes cmd start a process group of its own, which every process
// it starts joins (git's remote helpers, an installer's workers), and makes
// the end of the context kill that whole group: killing cmd alone would
// leave its children running, holding their connections and the clone.
// The group is out of reach of the terminal's Ctrl-C; the signal reaches
// this process, which cancels the context.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}
