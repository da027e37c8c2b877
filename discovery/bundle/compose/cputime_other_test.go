//go:build !unix

package compose_test

import (
	"testing"
	"time"
)

var start = time.Now()

// cpuTime stands in for the process's CPU time where getrusage is not
// offered: the wall time since the test binary started.
func cpuTime(testing.TB) time.Duration { return time.Since(start) }
