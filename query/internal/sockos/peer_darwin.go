package sockos

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// PeerUID returns the uid of the process at the other end of nc, from the
// kernel's LOCAL_PEERCRED.
func PeerUID(nc *net.UnixConn) (int, error) {
	raw, err := nc.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Xucred
	var credErr error
	err = raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
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
// kernel's LOCAL_PEERPID; 0 when it cannot be read.
func PeerPID(nc *net.UnixConn) int {
	raw, err := nc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	raw.Control(func(fd uintptr) {
		if n, err := unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID); err == nil {
			pid = n
		}
	})
	return pid
}
