package service

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ProcessAlive reports whether pid names a live process: one that exists
// and is not a zombie waiting for its parent.
func ProcessAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// "pid (comm) S ...": the state follows the last parenthesis.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return true
	}
	switch b[i+2] {
	case 'Z', 'X', 'x':
		return false
	}
	return true
}

// DaemonProcess reports whether pid is an amplidex daemon of this user:
// a live process of the effective uid whose program is named amplidex and
// whose arguments name the daemon command.
func DaemonProcess(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid)
	fi, err := os.Stat(dir)
	if err != nil || !ProcessAlive(pid) {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		return false
	}
	b, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return isDaemonCommand(args)
}

// isDaemonCommand reports whether args run `amplidex daemon`.
func isDaemonCommand(args []string) bool {
	if len(args) < 2 || !strings.HasPrefix(filepath.Base(args[0]), "amplidex") {
		return false
	}
	for _, a := range args[1:] {
		if a == "daemon" {
			return true
		}
	}
	return false
}
