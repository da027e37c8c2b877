package service

import (
	"fmt"
	"net"
	"os"
	"strconv"
)

// listenFDsStart is the first descriptor a service manager hands over
// (SD_LISTEN_FDS_START in sd_listen_fds(3)).
const listenFDsStart = 3

// maxListenFDs bounds the descriptors taken from a service manager.
// amplidex serves one socket; a unit that hands over more hands a few. A
// larger count is a mistake or an attack, refused before anything is
// allocated.
const maxListenFDs = 64

// ActivationListener returns the socket systemd handed over (socket
// activation: LISTEN_PID names this process and LISTEN_FDS counts the
// sockets from fd 3), or nil when there is none. The variables are unset,
// so that nothing this process starts takes them for its own.
func ActivationListener() (*net.UnixListener, error) {
	files, err := listenFiles()
	if err != nil || len(files) == 0 {
		return nil, err
	}
	for _, f := range files[1:] {
		f.Close()
	}
	l, err := net.FileListener(files[0])
	files[0].Close()
	if err != nil {
		return nil, fmt.Errorf("socket activation: %w", err)
	}
	ul, ok := l.(*net.UnixListener)
	if !ok {
		l.Close()
		return nil, fmt.Errorf("socket activation: the socket handed over is a %s listener, not a unix one", l.Addr().Network())
	}
	return ul, nil
}

// listenFiles returns the descriptors handed to this process as
// sd_listen_fds(3) describes, made close-on-exec, and unsets LISTEN_PID,
// LISTEN_FDS and LISTEN_FDNAMES. It returns nil when they are not for
// this process, and an error when their count is not one (see listenFDs).
func listenFiles() ([]*os.File, error) {
	pid, fds := os.Getenv("LISTEN_PID"), os.Getenv("LISTEN_FDS")
	for _, k := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
		os.Unsetenv(k)
	}
	n, err := listenFDs(pid, fds, os.Getpid(), fdOpen)
	if err != nil || n == 0 {
		return nil, err
	}
	files := make([]*os.File, 0, n)
	for fd := listenFDsStart; fd < listenFDsStart+n; fd++ {
		closeOnExec(fd)
		files = append(files, os.NewFile(uintptr(fd), "LISTEN_FD_"+strconv.Itoa(fd)))
	}
	return files, nil
}

// listenFDs reads LISTEN_PID and LISTEN_FDS as sd_listen_fds(3) does: the
// number of descriptors handed to the process self, from fd 3 on. It is 0
// when they are not for self (LISTEN_PID unset, not a number or another
// process's) or LISTEN_FDS is unset or 0. A count that is not a decimal
// number, is negative or is above maxListenFDs is an error, and so is a
// descriptor of the count that open says is not open: nothing of another
// is ever taken for a socket. It allocates nothing.
func listenFDs(pid, fds string, self int, open func(fd int) bool) (int, error) {
	if p, err := strconv.Atoi(pid); err != nil || p != self || fds == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(fds)
	switch {
	case err != nil:
		return 0, fmt.Errorf("socket activation: LISTEN_FDS=%s is not a number of descriptors", quoteShort(fds))
	case n < 0:
		return 0, fmt.Errorf("socket activation: LISTEN_FDS=%d is negative", n)
	case n > maxListenFDs:
		return 0, fmt.Errorf("socket activation: LISTEN_FDS=%d is more descriptors than the %d amplidex takes", n, maxListenFDs)
	}
	for fd := listenFDsStart; fd < listenFDsStart+n; fd++ {
		if !open(fd) {
			return 0, fmt.Errorf("socket activation: LISTEN_FDS=%d, but descriptor %d is not open", n, fd)
		}
	}
	return n, nil
}

// quoteShort quotes s for a message, cut after 32 bytes.
func quoteShort(s string) string {
	if len(s) > 32 {
		return strconv.Quote(s[:32]) + "…"
	}
	return strconv.Quote(s)
}
