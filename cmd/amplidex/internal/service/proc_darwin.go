package service

import (
	"bytes"
	"os"

	"golang.org/x/sys/unix"
)

// sZomb is the p_stat of a zombie (sys/proc.h).
const sZomb = 5

// ProcessAlive reports whether pid names a live process: one that exists
// and is not a zombie waiting for its parent.
func ProcessAlive(pid int) bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return false
	}
	return kp.Proc.P_stat != sZomb
}

// DaemonProcess reports whether pid is an amplidex daemon of this user: a
// live process of the effective uid whose program is named amplidex. (The
// arguments of another process are not read here.)
func DaemonProcess(pid int) bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) || kp.Proc.P_stat == sZomb {
		return false
	}
	if int(kp.Eproc.Ucred.Uid) != os.Geteuid() {
		return false
	}
	comm := kp.Proc.P_comm[:]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	return bytes.HasPrefix(comm, []byte("amplidex"))
}
