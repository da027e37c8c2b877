//go:build !linux

package main

import "github.com/rogpeppe/go-internal/testscript"

// agentCmds are the testscript commands of the background agent's scripts:
// they read /proc and open pseudo-terminals, so elsewhere there are none,
// and the scripts that use them skip.
func agentCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return nil
}
