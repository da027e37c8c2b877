//go:build !unix

package main

import "github.com/rogpeppe/go-internal/testscript"

// filestat needs unix file owners and link counts; scripts that use it
// skip on other systems.
func filestat(ts *testscript.TestScript, _ bool, _ []string) {
	ts.Fatalf("filestat: not on this system")
}
