package service

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestListenFDs: the count of descriptors handed over is read as
// sd_listen_fds(3) reads it, and a count that is not a small number of
// open descriptors is an error, however large, without allocating for it.
func TestListenFDs(t *testing.T) {
	const self = 1234
	us := strconv.Itoa(self)
	allOpen := func(int) bool { return true }
	for _, tc := range []struct {
		name, pid, fds string
		open           func(int) bool
		want           int
		err            string // a part of the error; none when empty
	}{
		{"for another process", strconv.Itoa(self + 1), "1", allOpen, 0, ""},
		{"no pid", "", "1", allOpen, 0, ""},
		{"a pid that is no number", "x", "1", allOpen, 0, ""},
		{"no count", us, "", allOpen, 0, ""},
		{"none", us, "0", allOpen, 0, ""},
		{"one", us, "1", allOpen, 1, ""},
		{"as many as taken", us, strconv.Itoa(maxListenFDs), allOpen, maxListenFDs, ""},
		{"one more than taken", us, strconv.Itoa(maxListenFDs + 1), allOpen, 0, "more descriptors than"},
		{"absurd", us, "100000000", allOpen, 0, "more descriptors than"},
		{"the largest int64", us, "9223372036854775807", allOpen, 0, "more descriptors than"},
		{"beyond int64", us, "99999999999999999999", allOpen, 0, "not a number"},
		{"negative", us, "-2", allOpen, 0, "negative"},
		{"the smallest int64", us, "-9223372036854775808", allOpen, 0, "negative"},
		{"not a number", us, "x", allOpen, 0, "not a number"},
		{"spaces", us, " 1", allOpen, 0, "not a number"},
		{"long garbage", us, strings.Repeat("9x", 1<<20), allOpen, 0, "not a number"},
		{"a descriptor not open", us, "3", func(fd int) bool { return fd != 4 }, 0, "descriptor 4 is not open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := listenFDs(tc.pid, tc.fds, self, tc.open)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one saying %q", err, tc.err)
			case n != tc.want:
				t.Fatalf("%d descriptors, want %d", n, tc.want)
			}
			if err != nil && len(err.Error()) > 200 {
				t.Errorf("an error of %d bytes", len(err.Error()))
			}
		})
	}
}

// TestListenFilesNotForUs: descriptors handed to another process, or a
// count that is not one, are not taken, hostile counts are errors rather
// than a crash, and the variables are unset all the same.
// (TestSocketActivation hands a daemon a real socket.)
func TestListenFilesNotForUs(t *testing.T) {
	for _, tc := range []struct {
		pid, fds string
		fails    bool
	}{
		{strconv.Itoa(os.Getpid() + 1), "1", false},
		{"", "1", false},
		{strconv.Itoa(os.Getpid()), "0", false},
		{strconv.Itoa(os.Getpid()), "x", true},
		{strconv.Itoa(os.Getpid()), "-2", true},
		{strconv.Itoa(os.Getpid()), "100000000", true},
		{strconv.Itoa(os.Getpid()), "9223372036854775807", true},
	} {
		t.Setenv("LISTEN_PID", tc.pid)
		t.Setenv("LISTEN_FDS", tc.fds)
		t.Setenv("LISTEN_FDNAMES", "amplidex.socket")
		files, err := listenFiles()
		if files != nil {
			t.Errorf("LISTEN_PID=%q LISTEN_FDS=%q: took %d descriptors", tc.pid, tc.fds, len(files))
		}
		if (err != nil) != tc.fails {
			t.Errorf("LISTEN_PID=%q LISTEN_FDS=%q: error %v", tc.pid, tc.fds, err)
		}
		for _, k := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
			if v, ok := os.LookupEnv(k); ok {
				t.Errorf("LISTEN_PID=%q LISTEN_FDS=%q: %s=%q is still set", tc.pid, tc.fds, k, v)
			}
		}
	}
}
