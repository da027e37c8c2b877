//go:build unix

package sockos

import (
	"net"

	"golang.org/x/sys/unix"
)

// PeerGone reports whether the peer of nc has closed its end whole, not
// only stopped sending: a peer that shut down its writing side alone
// (shutdown(SHUT_WR), as `nc -N` does after its request) still reads
// the answers, and the socket then polls readable and not hung up.
func PeerGone(nc *net.UnixConn) bool {
	raw, err := nc.SyscallConn()
	if err != nil {
		return true
	}
	gone := false
	raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
			gone = fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
		}
	})
	return gone
}
