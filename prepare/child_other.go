//go:build !linux

package prepare

import "os/exec"

// runChild runs cmd (git or the install command) in this process's group,
// so that a terminal's Ctrl-C reaches it too; exec.CommandContext kills it
// when the context ends. This system has no parent-death signal: when this
// process is killed outright, cmd runs on until it ends by itself, and the
// clone directory it leaves is removed by a later build (see
// removeStaleClones).
func runChild(cmd *exec.Cmd) error {
	return cmd.Run()
}
