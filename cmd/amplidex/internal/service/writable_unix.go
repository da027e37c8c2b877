//go:build unix

package service

import "golang.org/x/sys/unix"

// writable reports whether the process may create files in dir.
func writable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }
