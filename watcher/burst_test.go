package watcher_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/amplidex/amplidex/watcher"
)

// burst makes files files under dir, from several goroutines at once, in
// dirs directories (two levels deep) that are made along the way: each new
// file goes to one of its writer's directories made so far, so directories
// fill while they are being walked.
func burst(t testing.TB, dir string, files, dirs int) {
	t.Helper()
	const writers = 4
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := burstPart(dir, g, writers, files, dirs); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// burstPart is writer g's share of a burst.
func burstPart(dir string, g, writers, files, dirs int) error {
	share := func(n int) int {
		if g < n%writers {
			return n/writers + 1
		}
		return n / writers
	}
	nFiles, nDirs := share(files), max(share(dirs), 1)
	every := max(nFiles/nDirs, 1)
	var made []string
	for i := range nFiles {
		if i%every == 0 && len(made) < nDirs {
			k := g + len(made)*writers
			d := filepath.Join(dir, fmt.Sprintf("g%02d", k%10), fmt.Sprintf("d%03d", k))
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			made = append(made, d)
		}
		p := filepath.Join(made[i%len(made)], fmt.Sprintf("f%05d.md", g+i*writers))
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TestBurst creates 50,000 files in one burst (more than the kernel queue
// holds, were the drain to fall behind): a consumer that applies every batch
// ends equal to a fresh walk of the tree, file for file.
func TestBurst(t *testing.T) {
	root := fastTempDir(t)
	unpack(t, "collections.txtar", root)
	m := newModel(t, root)
	var batches, rescans atomic.Int64
	w, err := watcher.New(watcher.Options{}, func(b watcher.Batch) {
		batches.Add(1)
		if b.Rescan {
			rescans.Add(1)
		}
		m.apply(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	addRoot(t, w, root)

	burst(t, root, 50000, 100)
	flush(t, w)
	m.check()
	t.Logf("%d batches, %d rescans", batches.Load(), rescans.Load())
	if n := len(m.paths()); n < 50000 {
		t.Errorf("model holds %d paths, want at least 50,000", n)
	}
}

// BenchmarkBurst measures a burst of 1000 files in 10 new directories,
// from the first file made to the last batch handled.
func BenchmarkBurst(b *testing.B) {
	const files, dirs = 1000, 10
	root := fastTempDir(b)
	var seen atomic.Int64
	w, err := watcher.New(watcher.Options{SyncDir: fastTempDir(b)}, func(batch watcher.Batch) {
		seen.Add(int64(len(batch.Paths)))
	})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	addRoot(b, w, root)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		dir := filepath.Join(root, fmt.Sprint("burst", i))
		burst(b, dir, files, dirs)
		flush(b, w)

		b.StopTimer()
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		flush(b, w)
		b.StartTimer()
	}
	b.ReportMetric(float64(files)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
	if seen.Load() < int64(files) {
		b.Fatalf("%d paths seen, want at least %d", seen.Load(), files)
	}
}

// BenchmarkSave measures one editor save (temp file and rename) until its
// batch is handled, the debounce skipped by Flush.
func BenchmarkSave(b *testing.B) {
	root := fastTempDir(b)
	unpack(b, "collections.txtar", root)
	w, err := watcher.New(watcher.Options{SyncDir: fastTempDir(b)}, func(watcher.Batch) {})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	addRoot(b, w, root)
	file := filepath.Join(root, "alpha", "profiles", "base.md")
	tmp := filepath.Join(root, "alpha", "profiles", ".base.md.tmp")
	b.ReportAllocs()
	for b.Loop() {
		writeFile(b, tmp, "saved")
		rename(b, tmp, file)
		flush(b, w)
	}
}

// BenchmarkFlush measures a Flush with nothing to deliver: the round trip
// through the kernel that read-your-writes queries pay, with the cookie
// files in the default temporary directory and on tmpfs.
func BenchmarkFlush(b *testing.B) {
	for _, bc := range []struct {
		name    string
		syncDir func(testing.TB) string
	}{
		{"tempdir", func(testing.TB) string { return "" }},
		{"tmpfs", fastTempDir},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w, err := watcher.New(watcher.Options{SyncDir: bc.syncDir(b)}, func(watcher.Batch) {})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			addRoot(b, w, fastTempDir(b))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := w.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
