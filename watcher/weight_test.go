//go:build linux

package watcher_test

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/watcher"
	"github.com/fsnotify/fsnotify"
)

// collectionDirs are the directories made in each collection of a tree
// built by makeTree, below the collection's own directory.
var collectionDirs = []string{
	"agents", "behaviors", "context", "context/shared", "docs", "docs/guides", "profiles",
}

// makeTree makes a root of about n empty directories shaped like a
// collections root: collections of 8 directories each. It returns the root
// and the number of directories in it, the root included.
func makeTree(tb testing.TB, n int) (string, int) {
	tb.Helper()
	root := fastTempDir(tb)
	per := 1 + len(collectionDirs)
	dirs := 1
	for c := 0; dirs+per <= n; c++ {
		top := filepath.Join(root, fmt.Sprintf("collection-%05d", c))
		mkdirAll(tb, top)
		for _, d := range collectionDirs {
			mkdirAll(tb, filepath.Join(top, filepath.FromSlash(d)))
		}
		dirs += per
	}
	return root, dirs
}

// liveHeap returns the bytes of live heap objects and of heap spans in
// use, after a full collection.
func liveHeap() (alloc, inuse uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.HeapInuse
}

// cpuTime is the CPU time (user and system) the process has used so far.
func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapDelta returns after-before as a signed number of bytes.
func heapDelta(before, after uint64) float64 { return float64(after) - float64(before) }

// BenchmarkWatchTree measures what watching a root of many directories
// costs: the live heap per directory held by a Watcher after AddRoot
// (total), the part of it fsnotify alone holds for the same watches
// (measured with a bare fsnotify.Watcher given the same directories), the
// Watcher's own share (the difference), and the CPU time of AddRoot, beside
// that of the bare fsnotify walk. The time per op is that of AddRoot.
func BenchmarkWatchTree(b *testing.B) {
	for _, size := range []int{7_500, 75_000} {
		b.Run(fmt.Sprintf("dirs=%d", size), func(b *testing.B) {
			root, n := makeTree(b, size)
			var total, totalInuse, bare, cpu, bareCPU float64
			runs := 0
			for b.Loop() {
				b.StopTimer()
				runs++
				// fsnotify alone, given fresh path strings it keeps.
				fw, err := fsnotify.NewWatcher()
				if err != nil {
					b.Fatal(err)
				}
				a0, _ := liveHeap()
				c0 := cpuTime(b)
				err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
					if err != nil || !d.IsDir() {
						return err
					}
					return fw.Add(p)
				})
				if err != nil {
					b.Fatal(err)
				}
				bareCPU += float64(cpuTime(b) - c0)
				a1, _ := liveHeap()
				bare += heapDelta(a0, a1)
				if err := fw.Close(); err != nil {
					b.Fatal(err)
				}

				w, err := watcher.New(watcher.Options{SyncDir: fastTempDir(b)}, func(watcher.Batch) {})
				if err != nil {
					b.Fatal(err)
				}
				a0, i0 := liveHeap()
				c0 = cpuTime(b)
				b.StartTimer()
				addRoot(b, w, root)
				b.StopTimer()
				cpu += float64(cpuTime(b) - c0)
				a1, i1 := liveHeap()
				total += heapDelta(a0, a1)
				totalInuse += heapDelta(i0, i1)
				if got := statusOf(b, w, root).Watches; got < n {
					b.Fatalf("%d watches, want at least %d", got, n)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			per := float64(runs) * float64(n)
			b.ReportMetric(total/per, "B/dir")
			b.ReportMetric(totalInuse/per, "inuse-B/dir")
			b.ReportMetric(bare/per, "fsnotify-B/dir")
			b.ReportMetric((total-bare)/per, "own-B/dir")
			b.ReportMetric(cpu/float64(runs)/1e6, "cpu-ms/add")
			b.ReportMetric(bareCPU/float64(runs)/1e6, "fsnotify-cpu-ms/add")
			if testing.Verbose() {
				b.Logf("%d directories under %s", n, root)
			}
		})
	}
}
