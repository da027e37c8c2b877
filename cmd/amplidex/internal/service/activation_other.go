//go:build !unix

package service

// closeOnExec does nothing where no service manager hands descriptors
// over.
func closeOnExec(int) {}

// fdOpen reports false: no service manager hands descriptors over here.
func fdOpen(int) bool { return false }
