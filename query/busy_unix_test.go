//go:build unix

package query_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/internal/sockos"
	"golang.org/x/sys/unix"
)

// listenBacklog listens on a unix socket at path whose queue holds at most
// backlog connections not yet accepted.
func listenBacklog(t *testing.T, path string, backlog int) *net.UnixListener {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.(*net.UnixListener)
}

// TestDialWaitsForAFullQueue: a server whose queue of connections is full
// (a flood of others, not yet accepted) is busy, not gone: Dial tries
// again until it gets in, rather than reporting no daemon.
func TestDialWaitsForAFullQueue(t *testing.T) {
	path := filepath.Join(querytest.PrivateDir(t), "amplidex.sock")
	if len(path) > sockos.MaxPath {
		t.Skip("temporary directory too deep for a socket")
	}
	ln := listenBacklog(t, path, 1)
	// Fill the queue.
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for {
		c, err := net.DialTimeout("unix", path, time.Second)
		if err != nil {
			if !errors.Is(err, syscall.EAGAIN) {
				t.Fatalf("filling the queue: %v", err)
			}
			break
		}
		held = append(held, c)
		if len(held) > 64 {
			t.Skip("the queue does not fill")
		}
	}
	dialed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), querytest.Timeout)
		defer cancel()
		c, err := query.Dial(ctx, path)
		if err == nil {
			c.Close()
		}
		dialed <- err
	}()
	// The server is busy a while (the dial meets the full queue), then
	// takes one connection off it: the dial gets in.
	time.Sleep(200 * time.Millisecond)
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case err := <-dialed:
		if err != nil {
			t.Fatalf("Dial while the queue was full: %v; want it to wait for a place", err)
		}
	case <-time.After(querytest.Timeout):
		t.Fatal("Dial never returned")
	}
}
