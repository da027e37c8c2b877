package prepare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// fileLock is an flock(2) lock on a lock file. flock locks belong to the
// open file, so two goroutines of one process exclude each other as two
// processes do.
type fileLock struct{ f *os.File }

// Lock polling backs off from the first interval to the last.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 50 * time.Millisecond
)

// lockFile takes an exclusive (or, when shared is true, a shared) lock on
// path, creating the file and its directory as needed. It waits until the
// lock is free or ctx is done.
func lockFile(ctx context.Context, path string, shared bool) (*fileLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	how := unix.LOCK_EX
	if shared {
		how = unix.LOCK_SH
	}
	wait := lockPollMin
	var timer *time.Timer
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			if timer != nil {
				timer.Stop()
			}
			return &fileLock{f: f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			timer.Stop()
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-timer.C:
		}
		wait = min(2*wait, lockPollMax)
	}
}

// unlock releases the lock; closing the file releases it too.
func (l *fileLock) unlock() error {
	return l.f.Close()
}
