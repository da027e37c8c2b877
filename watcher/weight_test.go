//go:build linux

package watcher_test

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
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
// collections root: collections of 8 directories each, each collection
// named with prefix and a number. It returns the root and the number of
// directories in it, the root included.
func makeTree(tb testing.TB, n int, prefix string) (string, int) {
	tb.Helper()
	root := fastTempDir(tb)
	per := 1 + len(collectionDirs)
	dirs := 1
	for c := 0; dirs+per <= n; c++ {
		top := filepath.Join(root, fmt.Sprintf("%s-%05d", prefix, c))
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

// bareWatch adds a watch on every directory under root to a bare
// fsnotify.Watcher, with path strings made for it as a Watcher makes them,
// and returns the live heap that holds, in bytes, and the CPU time spent.
// It closes the fsnotify.Watcher before it returns.
func bareWatch(tb testing.TB, root string) (heap float64, cpu time.Duration) {
	tb.Helper()
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		tb.Fatal(err)
	}
	defer fw.Close()
	a0, _ := liveHeap()
	c0 := cpuTime(tb)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return fw.Add(p)
	})
	if err != nil {
		tb.Fatal(err)
	}
	cpu = cpuTime(tb) - c0
	a1, _ := liveHeap()
	runtime.KeepAlive(fw)
	return heapDelta(a0, a1), cpu
}

// TestWeight bounds the live heap a Watcher holds per watched directory
// beyond what fsnotify holds for the same watches: its tree of
// directories, and no second copy of the paths fsnotify keeps (which are
// long here, so that a copy would show).
func TestWeight(t *testing.T) {
	const maxOwn = 150 // bytes per directory; about 90 are used
	root, n := makeTree(t, 4000, strings.Repeat("a-collection-with-a-long-name-", 3))
	bare, _ := bareWatch(t, root)
	w, _ := start(t, watcher.Options{SyncDir: fastTempDir(t)})
	a0, _ := liveHeap()
	addRoot(t, w, root)
	a1, _ := liveHeap()
	if got := statusOf(t, w, root).Watches; got < n {
		t.Fatalf("%d watches, want at least %d", got, n)
	}
	total := heapDelta(a0, a1)
	own := (total - bare) / float64(n)
	t.Logf("%d directories: %.0f B each in all, %.0f B held by fsnotify alone, %.0f B the Watcher's own",
		n, total/float64(n), bare/float64(n), own)
	if own > maxOwn {
		t.Errorf("the Watcher holds %.0f B per directory beyond fsnotify's %.0f B, want at most %d",
			own, bare/float64(n), maxOwn)
	}
}

// BenchmarkWatchTree measures what watching a root of many directories
// costs: the live heap per directory held by a Watcher after AddRoot
// (total), the part of it fsnotify alone holds for the same watches
// (measured with a bare fsnotify.Watcher given the same directories), the
// Watcher's own share (the difference), and the CPU time of AddRoot, beside
// that of the bare fsnotify walk. The time per op is that of AddRoot.
func BenchmarkWatchTree(b *testing.B) {
	for _, size := range []int{7_500, 75_000} {
		b.Run(fmt.Sprintf("dirs=%d", size), func(b *testing.B) {
			root, n := makeTree(b, size, "collection")
			var total, totalInuse, bare, cpu, bareCPU float64
			runs := 0
			for b.Loop() {
				b.StopTimer()
				runs++
				heap, c := bareWatch(b, root)
				bare += heap
				bareCPU += float64(c)

				w, err := watcher.New(watcher.Options{SyncDir: fastTempDir(b)}, func(watcher.Batch) {})
				if err != nil {
					b.Fatal(err)
				}
				a0, i0 := liveHeap()
				c0 := cpuTime(b)
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
