package prepare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// fileLock is a lock on a lock file: flock(2) on Unix, LockFileEx on
// Windows. Both belong to the open file, so two goroutines of one process
// exclude each other as two processes do, and a process that dies drops
// its locks.
type fileLock struct{ f *os.File }

// Lock polling backs off from the first interval to the last.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 50 * time.Millisecond
)

// lockFile takes an exclusive (or, when shared is true, a shared) lock on
// path, creating the file and its directory as needed. It waits until the
// lock is free or ctx is done. The lock is tried without blocking and
// retried with a backoff, so that waiting never holds a thread and ends as
// soon as ctx does.
func lockFile(ctx context.Context, path string, shared bool) (*fileLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	wait := lockPollMin
	var timer *time.Timer
	for {
		ok, err := tryLock(f, shared)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			if timer != nil {
				timer.Stop()
			}
			return &fileLock{f: f}, nil
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

// unlock releases the lock and closes the file.
func (l *fileLock) unlock() error {
	uerr := unlockFile(l.f)
	if err := l.f.Close(); err != nil {
		return err
	}
	return uerr
}
