//go:build unix

package index

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockPoll is how often a held lock is retried.
const lockPoll = 10 * time.Millisecond

// lockFile takes the exclusive flock that bbolt itself takes on the
// database file, waiting up to timeout. bbolt's own attempt on the same
// file then succeeds at once.
func lockFile(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EWOULDBLOCK):
			return fmt.Errorf("lock: %w", err)
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return ErrLocked
		}
		time.Sleep(min(wait, lockPoll))
	}
}
