//go:build !unix

package service

// writable reports true: without access(2), a directory that exists is
// tried, and a failure to write there is reported when it happens.
func writable(string) bool { return true }
