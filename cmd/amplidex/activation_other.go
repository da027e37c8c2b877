//go:build !unix

package main

// closeOnExec does nothing where no service manager hands descriptors
// over.
func closeOnExec(int) {}
