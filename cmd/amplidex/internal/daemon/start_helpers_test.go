package daemon_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// startWith starts a daemon on the env with options changed by edit.
func (e *env) startWith(edit func(*daemon.Options)) *daemon.Daemon {
	e.t.Helper()
	opts := daemon.Options{Paths: e.paths, Home: e.home, Bundled: []string{e.bundled}, NoSync: true,
		Watch: watcher.Options{Debounce: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond}}
	edit(&opts)
	done := make(chan struct{})
	var d *daemon.Daemon
	var err error
	go func() {
		defer close(done)
		d, err = daemon.Start(context.Background(), opts)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		e.t.Fatal("the daemon did not start")
	}
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { d.Close() })
	return d
}

// callWithin makes one call that must be answered before the deadline.
func callWithin(t *testing.T, c *query.Client, d time.Duration, method string, params, out any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, err := c.Call(ctx, method, params, out)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s was not answered within %v", method, d)
	}
	return err
}

// otherProject makes a second project with one collection.
func (e *env) otherProject(name string) string {
	dir := filepath.Join(e.dir, name)
	e.collection(filepath.Join(dir, ".amplifier", "collections", name), name, "1.0.0")
	return dir
}
