//go:build unix && !linux

package prepare

import "os/exec"

// runChild runs cmd (git or the install command) in a process group of its
// own, which is killed whole when the context ends (see ownGroup). This
// system has no parent-death signal: when this process is killed outright,
// the group runs on until it ends by itself (git gives up a stalled
// transfer, see lowSpeedTime), and the clone directory it leaves is removed
// by a later build (see removeStaleClones).
func runChild(cmd *exec.Cmd) error {
	ownGroup(cmd)
	return cmd.Run()
}
