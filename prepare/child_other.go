//go:build !unix

package prepare

import "os/exec"

// runChild runs cmd (git or the install command); exec.CommandContext
// kills it when the context ends. Processes it starts are not killed with
// it, and when this process is killed outright cmd runs on until it ends by
// itself (git gives up a stalled transfer, see lowSpeedTime); the clone
// directory it leaves is removed by a later build (see removeStaleClones).
func runChild(cmd *exec.Cmd) error {
	return cmd.Run()
}
