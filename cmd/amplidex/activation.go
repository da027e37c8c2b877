package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
)

// listenFDsStart is the first descriptor a service manager hands over
// (SD_LISTEN_FDS_START in sd_listen_fds(3)).
const listenFDsStart = 3

// activationListener returns the socket systemd handed over (socket
// activation: LISTEN_PID names this process and LISTEN_FDS counts the
// sockets from fd 3), or nil when there is none. The variables are unset,
// so that nothing this process starts takes them for its own.
func activationListener() (*net.UnixListener, error) {
	files := listenFiles()
	if len(files) == 0 {
		return nil, nil
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
// this process.
func listenFiles() []*os.File {
	pid, fds := os.Getenv("LISTEN_PID"), os.Getenv("LISTEN_FDS")
	for _, k := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
		os.Unsetenv(k)
	}
	if p, err := strconv.Atoi(pid); err != nil || p != os.Getpid() {
		return nil
	}
	n, err := strconv.Atoi(fds)
	if err != nil || n <= 0 {
		return nil
	}
	files := make([]*os.File, 0, n)
	for fd := listenFDsStart; fd < listenFDsStart+n; fd++ {
		closeOnExec(fd)
		files = append(files, os.NewFile(uintptr(fd), "LISTEN_FD_"+strconv.Itoa(fd)))
	}
	return files
}
