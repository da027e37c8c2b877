//go:build !linux

package daemon_test

import (
	"errors"
	"testing"
)

// errNoMounts is why the drills that mount file systems skip here.
var errNoMounts = errors.New("mounting a tmpfs or a read-only bind needs Linux")

// tryTmpfs cannot mount here.
func tryTmpfs(*testing.T, string, string) error { return errNoMounts }

// bindReadOnly cannot mount here.
func bindReadOnly(*testing.T, string, string) error { return errNoMounts }
