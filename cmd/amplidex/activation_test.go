package main

import (
	"os"
	"strconv"
	"testing"
)

// TestListenFilesNotForUs: descriptors handed to another process, or a
// count that is not one, are not taken, and the variables are unset all
// the same. (TestSocketActivation hands a daemon a real socket.)
func TestListenFilesNotForUs(t *testing.T) {
	for _, tc := range []struct{ pid, fds string }{
		{strconv.Itoa(os.Getpid() + 1), "1"},
		{"", "1"},
		{strconv.Itoa(os.Getpid()), "0"},
		{strconv.Itoa(os.Getpid()), "x"},
		{strconv.Itoa(os.Getpid()), "-2"},
	} {
		t.Setenv("LISTEN_PID", tc.pid)
		t.Setenv("LISTEN_FDS", tc.fds)
		t.Setenv("LISTEN_FDNAMES", "amplidex.socket")
		if files := listenFiles(); files != nil {
			t.Errorf("LISTEN_PID=%q LISTEN_FDS=%q: took %d descriptors", tc.pid, tc.fds, len(files))
		}
		for _, k := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
			if v, ok := os.LookupEnv(k); ok {
				t.Errorf("LISTEN_PID=%q LISTEN_FDS=%q: %s=%q is still set", tc.pid, tc.fds, k, v)
			}
		}
	}
}
