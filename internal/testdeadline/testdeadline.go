// Package testdeadline gives a concurrency test a deadline of its own,
// shared by the tests of every package that needs one.
package testdeadline

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// Set gives t a deadline of its own: when the test has not ended within
// d, the stack of every goroutine is printed and the test binary fails
// with the test's name, as a deadlock or a hang is then said where it is
// rather than by go test's -timeout, minutes later and for the whole
// package. d is shortened to end before the -timeout does.
func Set(t *testing.T, d time.Duration) {
	t.Helper()
	if end, ok := t.Deadline(); ok {
		if left := time.Until(end) - 10*time.Second; left < d {
			d = max(left, time.Second)
		}
	}
	name := t.Name()
	timer := time.AfterFunc(d, func() {
		buf := make([]byte, 16<<20)
		buf = buf[:runtime.Stack(buf, true)]
		fmt.Fprintf(os.Stderr, "%s did not end within its deadline of %v; every goroutine:\n%s\n", name, d, buf)
		panic(fmt.Sprintf("%s did not end within its deadline of %v: a deadlock or a hang (every goroutine is printed above)", name, d))
	})
	t.Cleanup(func() { timer.Stop() })
}
