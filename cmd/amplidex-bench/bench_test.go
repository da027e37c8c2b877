package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
)

// The benchmarks below run, in process, the steps the daemon takes on the
// generated tree, so that `go test -bench -cpuprofile` and `-memprofile`
// show where its time and memory go:
//
//	go test -run '^$' -bench . -benchtime 3x -cpuprofile cpu.out ./cmd/amplidex-bench/
//	go tool pprof -top cpu.out
//
// AMPLIDEX_BENCH_COLLECTIONS sets the size of the tree (default 1000).

// benchTree generates the tree once per benchmark function and returns its
// user root.
func benchTree(b *testing.B) discovery.Root {
	b.Helper()
	n := 1000
	if s := os.Getenv("AMPLIDEX_BENCH_COLLECTIONS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 4 {
			b.Fatalf("AMPLIDEX_BENCH_COLLECTIONS=%q: want a number of at least 4", s)
		}
	}
	home := b.TempDir()
	root := discovery.Roots("", home, nil)[0]
	if _, err := generateTree(root.Path, n, 1); err != nil {
		b.Fatal(err)
	}
	return root
}

// BenchmarkScanRoot is the work of a cold start: every collection of the
// tree loaded and every file analyzed, without a cache.
func BenchmarkScanRoot(b *testing.B) {
	root := benchTree(b)
	if err := warmTree(root.Path); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var files int
	for b.Loop() {
		cols, err := (&discovery.Loader{}).ScanRoot(root)
		if err != nil {
			b.Fatal(err)
		}
		files = 0
		for _, c := range cols {
			files += len(c.Facts)
		}
	}
	b.ReportMetric(float64(files), "files/op")
}

// BenchmarkRetained reports the heap that the loaded collections and one
// snapshot of them keep alive: the floor of the daemon's resident memory.
func BenchmarkRetained(b *testing.B) {
	root := benchTree(b)
	var before, after runtime.MemStats
	var files int
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		home := filepath.Dir(filepath.Dir(root.Path))
		st, _ := catalog.New(catalog.Options{Home: home}).AddProject("")
		v, _ := st.View("")
		_ = v.Diagnostics()
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(st)
		files = 0
		for _, c := range v.Set.Collections() {
			files += len(c.Facts)
		}
	}
	retained := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	b.ReportMetric(retained/(1<<20), "MiB-retained")
	b.ReportMetric(retained/float64(max(files, 1)), "B/file")
}
