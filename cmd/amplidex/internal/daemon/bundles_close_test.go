package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amplidex/amplidex/prepare"
)

// testBundles returns bundles of one manifest whose builds run build.
func testBundles(t *testing.T, build func(ctx context.Context, manifest string) (prepare.Entry, error)) *bundles {
	t.Helper()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "bundle.md")
	if err := os.WriteFile(manifest, []byte("---\nbundle:\n  name: demo\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache, err := prepare.New(prepare.Options{Home: filepath.Join(dir, "home"), Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	bs := newBundles(cache, []string{manifest}, slog.New(slog.DiscardHandler), time.Now)
	bs.ensure = build
	return bs
}

// TestBundlesStartNothingOnceClosed: a close that lands between a kick's
// decision to build and the start of the build leaves nothing running
// once it returns: the build does not start.
func TestBundlesStartNothingOnceClosed(t *testing.T) {
	var builds atomic.Int32
	bs := testBundles(t, func(ctx context.Context, _ string) (prepare.Entry, error) {
		builds.Add(1)
		<-ctx.Done()
		return prepare.Entry{}, ctx.Err()
	})
	closed := false
	bs.beforeStart = func() {
		if !closed {
			closed = true
			bs.close()
		}
	}
	bs.kickAll()
	if !closed {
		t.Fatal("no build was about to start")
	}
	b := bs.list[0]
	b.mu.Lock()
	running := b.running
	b.mu.Unlock()
	if running {
		t.Error("a build started after close returned")
	}
	bs.close() // a second close is harmless
	if n := builds.Load(); n != 0 {
		t.Errorf("%d builds ran after close", n)
	}
}

// TestBundlesCloseWaitsForBuild: close cancels a running build and returns
// only once the build has ended, however long the build takes to end
// after its cancellation: no goroutine outlives close.
func TestBundlesCloseWaitsForBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("the build takes 11 seconds to end once cancelled")
	}
	t.Parallel()
	started := make(chan struct{})
	var cancelled, ended atomic.Bool
	bs := testBundles(t, func(ctx context.Context, _ string) (prepare.Entry, error) {
		close(started)
		<-ctx.Done()
		cancelled.Store(true)
		// Longer than the bound close once had (10 s), after which it
		// left the build running.
		time.Sleep(11 * time.Second)
		ended.Store(true)
		return prepare.Entry{}, ctx.Err()
	})
	bs.kickAll()
	<-started
	bs.close()
	if !cancelled.Load() || !ended.Load() {
		t.Errorf("close returned with the build cancelled %v, ended %v", cancelled.Load(), ended.Load())
	}
}
