package main

import (
	"fmt"
	"net"

	"github.com/coreos/go-systemd/v22/activation"
)

// activationListener returns the socket systemd handed over (socket
// activation: LISTEN_PID names this process and LISTEN_FDS counts the
// sockets from fd 3), or nil when there is none. The variables are unset,
// so that nothing this process starts takes them for its own.
func activationListener() (*net.UnixListener, error) {
	files := activation.Files(true)
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
