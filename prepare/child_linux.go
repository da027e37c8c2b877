package prepare

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// The supervisor stands between this process and a child: a shell, which
// runs the child in the background, waits for it and passes on its exit
// status. Its parent-death signal is SIGTERM, on which it kills its whole
// process group, itself included. The kernel signals only the direct child
// when its parent dies; git's remote helpers are git's children, so they
// would survive a git killed that way, reparented and holding their
// connections. The group holds them all.
//
// A SIGTERM that comes before the trap is set ends the shell before it has
// started anything. Without a shell at supervisorShell, the child gets
// SIGKILL as its parent-death signal and its own children are left to end
// by themselves (see lowSpeedTime).
const (
	supervisorShell  = "/bin/sh"
	supervisorScript = `trap 'kill -s KILL 0' TERM; "$@" & wait "$!"`
)

// runChild runs cmd (git or the install command) in a process group of its
// own, killed whole when the context ends (see ownGroup) and when this
// process dies, even by SIGKILL (see supervisorScript).
//
// The parent-death signal belongs to the starting thread, not the process
// (go.dev/issue/27505): were that thread to exit early (the runtime ends a
// thread whose goroutine exits while locked to it), the child would be
// killed mid-clone. The goroutine is locked to its thread from the start
// until the child has been waited for, so no other goroutine runs there
// and the thread lives at least as long as the child.
func runChild(cmd *exec.Cmd) error {
	ownGroup(cmd)
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if fi, err := os.Stat(supervisorShell); cmd.Err == nil && err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		// cmd.Path is what exec.Command found, with a slash: the shell
		// runs that file and searches nothing.
		cmd.Args = append([]string{supervisorShell, "-c", supervisorScript, "sh", cmd.Path}, cmd.Args[1:]...)
		cmd.Path = supervisorShell
		cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Run()
}
