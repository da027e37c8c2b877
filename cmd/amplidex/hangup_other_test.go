//go:build !unix

package main

import "errors"

// hangUp fails: this system has no SIGHUP.
func hangUp(int) error { return errors.New("SIGHUP is not supported on this system") }
