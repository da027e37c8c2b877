package sockos

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// PeerUID returns the uid of the process at the other end of nc, from the
// kernel's SO_PEERCRED.
func PeerUID(nc *net.UnixConn) (int, error) {
	raw, err := nc.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Ucred
	var credErr error
	err = raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if err == nil {
		err = credErr
	}
	if err != nil {
		return -1, fmt.Errorf("peer credentials: %w", err)
	}
	return int(cred.Uid), nil
}

// PeerPID returns the id of the process at the other end of nc, from the
// kernel's SO_PEERCRED; 0 when it cannot be read.
func PeerPID(nc *net.UnixConn) int {
	raw, err := nc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}
