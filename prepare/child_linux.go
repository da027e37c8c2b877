package prepare

import (
	"os/exec"
	"runtime"
	"syscall"
)

// runChild runs cmd (git or the install command) so that it dies with this
// process: the kernel sends it SIGKILL when the thread that started it
// exits, which a SIGKILL of this process does to every thread. It stays in
// this process's group, so a terminal's Ctrl-C reaches it too, and
// exec.CommandContext kills it when the context ends.
//
// The parent-death signal belongs to the starting thread, not the process
// (go.dev/issue/27505): were that thread to exit early (the runtime ends a
// thread whose goroutine exits while locked to it), the child would be
// killed mid-clone. The goroutine is locked to its thread from the start
// until the child has been waited for, so no other goroutine runs there
// and the thread lives at least as long as the child.
func runChild(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Run()
}
