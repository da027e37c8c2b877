//go:build pprof && unix

package service

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
	"time"
)

// Built with -tags pprof, amplidex writes profiles for whoever studies its
// weight: on SIGUSR1 a heap profile (after a collection) to
// $AMPLIDEX_PPROF_DIR/heap-<unix nanos>.pprof, and, when
// AMPLIDEX_PPROF_CPU is set, a CPU profile of the whole process life to
// $AMPLIDEX_PPROF_DIR/cpu-<pid>.pprof, and, when AMPLIDEX_PPROF_TRACE is
// set, an execution trace to trace-<pid>.out, both closed on SIGUSR2. Ordinary builds have
// none of it.
func init() {
	dir := os.Getenv("AMPLIDEX_PPROF_DIR")
	if dir == "" {
		return
	}
	if os.Getenv("AMPLIDEX_PPROF_CPU") != "" {
		untilUSR2(fmt.Sprintf("%s/cpu-%d.pprof", dir, os.Getpid()), pprof.StartCPUProfile, pprof.StopCPUProfile)
	}
	if os.Getenv("AMPLIDEX_PPROF_TRACE") != "" {
		untilUSR2(fmt.Sprintf("%s/trace-%d.out", dir, os.Getpid()), trace.Start, trace.Stop)
	}
	heap := make(chan os.Signal, 1)
	signal.Notify(heap, syscall.SIGUSR1)
	go func() {
		for range heap {
			runtime.GC()
			f, err := os.Create(fmt.Sprintf("%s/heap-%d.pprof", dir, time.Now().UnixNano()))
			if err != nil {
				continue
			}
			pprof.WriteHeapProfile(f)
			f.Close()
			// The text form ends with the runtime's memory statistics.
			if t, err := os.Create(fmt.Sprintf("%s/heap-%d.txt", dir, time.Now().UnixNano())); err == nil {
				pprof.Lookup("heap").WriteTo(t, 1)
				t.Close()
			}
		}
	}()
}

// untilUSR2 starts writing a profile to path, and stops and closes it on
// SIGUSR2.
func untilUSR2(path string, start func(io.Writer) error, stop func()) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	if err := start(f); err != nil {
		f.Close()
		return
	}
	usr2 := make(chan os.Signal, 1)
	signal.Notify(usr2, syscall.SIGUSR2)
	go func() {
		<-usr2
		stop()
		f.Close()
	}()
}
