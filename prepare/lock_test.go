package prepare_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/amplidex/amplidex/prepare"
)

func TestLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks", "x.lock")
	// tryFor takes the lock within d, or returns the context's error.
	tryFor := func(shared bool, d time.Duration) (func() error, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return prepare.LockFile(ctx, path, shared)
	}

	t.Run("exclusive excludes", func(t *testing.T) {
		unlock, err := tryFor(false, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, shared := range []bool{false, true} {
			if u, err := tryFor(shared, 50*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
				if u != nil {
					u()
				}
				t.Errorf("shared=%v while held exclusively: %v, want the deadline", shared, err)
			}
		}
		if err := unlock(); err != nil {
			t.Fatal(err)
		}
		u, err := tryFor(false, 5*time.Second)
		if err != nil {
			t.Fatalf("after unlock: %v", err)
		}
		u()
	})

	t.Run("shared locks coexist", func(t *testing.T) {
		a, err := tryFor(true, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		b, err := tryFor(true, 5*time.Second)
		if err != nil {
			t.Fatalf("second shared lock: %v", err)
		}
		if u, err := tryFor(false, 50*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
			if u != nil {
				u()
			}
			t.Errorf("exclusive while shared: %v, want the deadline", err)
		}
		a()
		b()
	})

	t.Run("a waiter gets the lock when it is released", func(t *testing.T) {
		unlock, err := tryFor(false, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			u, err := tryFor(false, 10*time.Second)
			if err == nil {
				err = u()
			}
			got <- err
		}()
		unlock()
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the waiter never got the lock")
		}
	})

	t.Run("a cancelled wait returns", func(t *testing.T) {
		unlock, err := tryFor(false, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := prepare.LockFile(ctx, path, false); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v, want context.Canceled", err)
		}
	})
}
