package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
)

func TestZZHeap(t *testing.T) {
	home := os.Getenv("ZZ_HOME")
	if home == "" {
		t.Skip()
	}
	if os.Getenv("ZZ_MEM") != "" {
		runtime.MemProfileRate = 4096
	}
	dir := t.TempDir()
	if s := os.Getenv("ZZ_STATE"); s != "" {
		dir = s
	}
	paths, _ := query.DefaultPaths(func(k string) string {
		if k == "AMPLIDEX_HOME" {
			return filepath.Join(dir, "state")
		}
		return ""
	})
	rounds := 2
	if os.Getenv("ZZ_STATE") != "" {
		rounds = 1
	}
	for round := range rounds {
		start := time.Now()
		d, err := daemon.Start(context.Background(), daemon.Options{Paths: paths, Home: home, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		d.Flush(context.Background())
		d.WaitWritten()
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		t.Logf("round %d: start %v; heap alloc %d MiB, sys %d MiB, analyzed %d", round, took, ms.HeapAlloc>>20, ms.Sys>>20, d.Analyzed())
		f, _ := os.Create(filepath.Join("/tmp/x", "dheap"+string(rune('0'+round))+".out"))
		pprof.WriteHeapProfile(f)
		f.Close()
		d.Close()
	}
}
