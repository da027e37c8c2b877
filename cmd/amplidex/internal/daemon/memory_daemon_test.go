package daemon_test

import (
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
)

// TestDaemonGivesMemoryBackWhenQuiet: a daemon that looks every TrimEvery gives the
// memory of a burst back once it is quiet, and says so in its log.
func TestDaemonGivesMemoryBackWhenQuiet(t *testing.T) {
	e := newEnv(t)
	var log logBuffer
	e.startWith(func(o *daemon.Options) {
		o.Memory = daemon.Memory{TrimEvery: 20 * time.Millisecond}
		o.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	// A burst: the counter the daemon reads is the process's.
	var burst [][]byte
	for range 40 {
		burst = append(burst, make([]byte, 1<<20))
	}
	runtime.KeepAlive(burst)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), "memory given back") {
		if time.Now().After(deadline) {
			t.Fatalf("no memory given back after a burst; log:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
