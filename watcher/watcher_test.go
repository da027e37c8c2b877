package watcher_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/watcher"
)

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name   string
		opts   watcher.Options
		handle func(watcher.Batch)
	}{
		{"nil handle", watcher.Options{}, nil},
		{"negative debounce", watcher.Options{Debounce: -1}, func(watcher.Batch) {}},
		{"negative max wait", watcher.Options{MaxWait: -1}, func(watcher.Batch) {}},
		{"negative poll interval", watcher.Options{PollInterval: -1}, func(watcher.Batch) {}},
		{"negative watch budget", watcher.Options{MaxWatches: -1}, func(watcher.Batch) {}},
		{"missing sync directory", watcher.Options{SyncDir: "/nonexistent/amplidex"}, func(watcher.Batch) {}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := watcher.New(tc.opts, tc.handle)
			if err == nil {
				w.Close()
				t.Fatal("New succeeded, want an error")
			}
		})
	}
}

func TestFileChanges(t *testing.T) {
	root := tempRoot(t)
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)
	base := filepath.Join(root, "alpha", "profiles", "base.md")
	guide := filepath.Join(root, "alpha", "context", "notes", "guide.md")

	tests := []struct {
		name string
		do   func(t *testing.T)
		want []string
	}{
		{"create", func(t *testing.T) {
			writeFile(t, filepath.Join(root, "alpha", "agents", "new.md"), "x")
		}, []string{filepath.Join(root, "alpha", "agents", "new.md")}},
		{"write deep", func(t *testing.T) { writeFile(t, guide, "# Guide, again") }, []string{guide}},
		{"chmod", func(t *testing.T) {
			if err := os.Chmod(base, 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{base}},
		{"rename", func(t *testing.T) {
			rename(t, base, base+".old")
		}, []string{base, base + ".old"}},
		{"remove", func(t *testing.T) { remove(t, base+".old") }, []string{base + ".old"}},
		{"file in root", func(t *testing.T) {
			writeFile(t, filepath.Join(root, "README.md"), "hi")
		}, []string{filepath.Join(root, "README.md")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.do(t)
			flush(t, w)
			bs := rec.take()
			wantPaths(t, bs, root, tc.want...)
			for _, b := range bs {
				if b.Rescan {
					t.Errorf("unexpected rescan: %+v", b)
				}
				if b.Root != root {
					t.Errorf("batch for root %s, want %s", b.Root, root)
				}
			}
		})
	}
	if s := statusOf(t, w, root); s.State != watcher.StateWatching || len(s.Warnings) > 0 {
		t.Errorf("status = %+v, want watching without warnings", s)
	}
}

func TestBatchShape(t *testing.T) {
	root := tempRoot(t)
	// Only Flush delivers: everything lands in one batch.
	w, rec := start(t, watcher.Options{Debounce: time.Hour, MaxWait: time.Hour})
	addRoot(t, w, root)
	p := filepath.Join(root, "beta", "profiles", "dev.md")
	for i := range 5 {
		writeFile(t, p, fmt.Sprint(i))
	}
	writeFile(t, filepath.Join(root, "alpha", "z.md"), "z")
	writeFile(t, filepath.Join(root, "alpha", "a.md"), "a")
	flush(t, w)
	var all []string
	for _, b := range rec.take() {
		if b.Root != root {
			t.Errorf("batch for %s", b.Root)
		}
		for i, q := range b.Paths {
			if !filepath.IsAbs(q) || filepath.Clean(q) != q {
				t.Errorf("path %q is not absolute and clean", q)
			}
			if i > 0 && b.Paths[i-1] >= q {
				t.Errorf("paths not sorted and unique: %q then %q", b.Paths[i-1], q)
			}
		}
		all = append(all, b.Paths...)
	}
	if n := strings.Count(strings.Join(all, "\n"), p); n != 1 {
		t.Errorf("%s reported %d times over the batches, want once", p, n)
	}
}

func TestDebounceDeliversWithoutFlush(t *testing.T) {
	root := tempRoot(t)
	w, rec := start(t, watcher.Options{Debounce: 5 * time.Millisecond, MaxWait: 50 * time.Millisecond})
	addRoot(t, w, root)
	p := filepath.Join(root, "alpha", "agents", "late.md")
	writeFile(t, p, "x")
	rec.waitFor(t, p, func(bs []watcher.Batch) bool { return changedPaths(bs, root)[p] })
}

func TestNewDirectoriesAreWalked(t *testing.T) {
	root := tempRoot(t)
	outside := realTempDir(t)
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)

	t.Run("mkdir -p", func(t *testing.T) {
		deep := filepath.Join(root, "gamma", "context", "a", "b", "c")
		mkdirAll(t, deep)
		writeFile(t, filepath.Join(deep, "x.md"), "x")
		writeFile(t, filepath.Join(root, "gamma", "pyproject.toml"), "")
		flush(t, w)
		wantPaths(t, rec.take(), root,
			filepath.Join(root, "gamma"),
			filepath.Join(root, "gamma", "context", "a", "b"),
			deep,
			filepath.Join(deep, "x.md"),
			filepath.Join(root, "gamma", "pyproject.toml"))

		// The new directories are watched.
		writeFile(t, filepath.Join(deep, "y.md"), "y")
		flush(t, w)
		wantPaths(t, rec.take(), root, filepath.Join(deep, "y.md"))
	})

	t.Run("moved in with contents", func(t *testing.T) {
		src := filepath.Join(outside, "delta")
		unpack(t, "collections.txtar", src)
		dst := filepath.Join(root, "delta")
		rename(t, src, dst)
		flush(t, w)
		wantPaths(t, rec.take(), root,
			dst,
			filepath.Join(dst, "alpha", "profiles", "base.md"),
			filepath.Join(dst, "beta", "profiles", "dev.md"),
			filepath.Join(dst, "alpha", "context", "notes", "guide.md"))

		writeFile(t, filepath.Join(dst, "alpha", "context", "notes", "more.md"), "y")
		flush(t, w)
		wantPaths(t, rec.take(), root, filepath.Join(dst, "alpha", "context", "notes", "more.md"))
	})
}

func TestDirectoryRemoved(t *testing.T) {
	root := tempRoot(t)
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)
	before := statusOf(t, w, root).Watches

	dir := filepath.Join(root, "alpha", "context")
	mkdirAll(t, filepath.Join(dir, "x", "y"))
	flush(t, w)
	rec.take()
	if got := statusOf(t, w, root).Watches; got != before+2 {
		t.Errorf("watches after mkdir = %d, want %d", got, before+2)
	}

	removeAll(t, dir)
	flush(t, w)
	wantPaths(t, rec.take(), root, dir, filepath.Join(dir, "notes", "guide.md"))
	// context, context/notes, context/x and context/x/y are no longer watched.
	if got := statusOf(t, w, root).Watches; got != before-2 {
		t.Errorf("watches after rm -rf = %d, want %d", got, before-2)
	}

	mkdirAll(t, dir)
	writeFile(t, filepath.Join(dir, "back.md"), "x")
	flush(t, w)
	wantPaths(t, rec.take(), root, dir, filepath.Join(dir, "back.md"))
}

func TestDirectoryRenamed(t *testing.T) {
	root := tempRoot(t)
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)
	m := newModel(t, root)

	old := filepath.Join(root, "alpha", "context")
	renamed := filepath.Join(root, "alpha", "ctx")
	rename(t, old, renamed)
	flush(t, w)
	bs := rec.take()
	wantPaths(t, bs, root, old, renamed, filepath.Join(renamed, "notes", "guide.md"))
	for _, b := range bs {
		m.apply(b)
	}
	m.check()

	// Writes below the moved directory are reported under its new name.
	writeFile(t, filepath.Join(renamed, "notes", "guide.md"), "moved")
	flush(t, w)
	bs = rec.take()
	wantPaths(t, bs, root, filepath.Join(renamed, "notes", "guide.md"))
	wantNoPaths(t, bs, root, filepath.Join(old, "notes", "guide.md"))

	// Moved away and replaced by an empty directory of the same name.
	rename(t, renamed, filepath.Join(root, "ctx-away"))
	mkdirAll(t, renamed)
	flush(t, w)
	for _, b := range rec.take() {
		m.apply(b)
	}
	m.check()
}

func TestSkippedDirectories(t *testing.T) {
	root := tempRoot(t)
	w, rec := start(t, watcher.Options{})
	for _, name := range []string{".git", "node_modules", "__pycache__", ".venv"} {
		mkdirAll(t, filepath.Join(root, "alpha", name, "deep"))
	}
	addRoot(t, w, root)
	for _, name := range []string{".git", "node_modules", "__pycache__", ".venv"} {
		t.Run(name, func(t *testing.T) {
			writeFile(t, filepath.Join(root, "alpha", name, "deep", "f"), "x")
			fresh := filepath.Join(root, "beta", name)
			mkdirAll(t, filepath.Join(fresh, "deep"))
			writeFile(t, filepath.Join(fresh, "deep", "f"), "x")
			flush(t, w)
			bs := rec.take()
			wantPaths(t, bs, root, fresh)
			wantNoPaths(t, bs, root,
				filepath.Join(root, "alpha", name, "deep", "f"),
				filepath.Join(fresh, "deep"),
				filepath.Join(fresh, "deep", "f"))
		})
	}
}

// TestEditorSaves replays the system calls of common editors' save
// strategies; each must end as "file changed".
func TestEditorSaves(t *testing.T) {
	root := tempRoot(t)
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)
	dir := filepath.Join(root, "alpha", "profiles")
	file := filepath.Join(dir, "base.md")

	tests := []struct {
		name string
		save func(t *testing.T)
	}{
		{"in place", func(t *testing.T) {
			f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("in place"); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"temp and rename", func(t *testing.T) {
			tmp := filepath.Join(dir, ".base.md.tmp123")
			writeFile(t, tmp, "temp and rename")
			rename(t, tmp, file)
		}},
		{"vim backupcopy=no", func(t *testing.T) {
			rename(t, file, file+"~")
			writeFile(t, file, "vim")
			remove(t, file+"~")
		}},
		{"jetbrains safe write", func(t *testing.T) {
			tmp, old := file+"___jb_tmp___", file+"___jb_old___"
			writeFile(t, tmp, "jetbrains")
			rename(t, file, old)
			rename(t, tmp, file)
			remove(t, old)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.save(t)
			flush(t, w)
			wantPaths(t, rec.take(), root, file)
		})
	}
}

func TestRemoveRoot(t *testing.T) {
	a, b := tempRoot(t), tempRoot(t)
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, a)
	addRoot(t, w, b)
	if err := w.RemoveRoot(a); err != nil {
		t.Fatal(err)
	}
	if err := w.RemoveRoot(a); !errors.Is(err, watcher.ErrUnknownRoot) {
		t.Errorf("second RemoveRoot = %v, want ErrUnknownRoot", err)
	}
	writeFile(t, filepath.Join(a, "alpha", "x.md"), "x")
	writeFile(t, filepath.Join(b, "alpha", "x.md"), "x")
	flush(t, w)
	bs := rec.take()
	wantPaths(t, bs, b, filepath.Join(b, "alpha", "x.md"))
	for _, batch := range bs {
		if batch.Root == a {
			t.Errorf("batch for removed root: %+v", batch)
		}
	}
	st := w.Status()
	if len(st) != 1 || st[0].Path != b {
		t.Errorf("status = %+v, want only %s", st, b)
	}
}

func TestNestedRoots(t *testing.T) {
	outer := tempRoot(t)
	inner := filepath.Join(outer, "alpha")
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, outer)
	addRoot(t, w, inner)
	p := filepath.Join(inner, "agents", "helper.md")
	writeFile(t, p, "both")
	flush(t, w)
	bs := rec.take()
	wantPaths(t, bs, outer, p)
	wantPaths(t, bs, inner, p)

	if err := w.RemoveRoot(outer); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, "inner only")
	flush(t, w)
	wantPaths(t, rec.take(), inner, p)
}

func TestClosed(t *testing.T) {
	root := tempRoot(t)
	w, err := watcher.New(watcher.Options{}, func(watcher.Batch) {})
	if err != nil {
		t.Fatal(err)
	}
	addRoot(t, w, root)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := w.AddRoot(root); !errors.Is(err, watcher.ErrClosed) {
		t.Errorf("AddRoot after Close = %v, want ErrClosed", err)
	}
	if err := w.RemoveRoot(root); !errors.Is(err, watcher.ErrClosed) {
		t.Errorf("RemoveRoot after Close = %v, want ErrClosed", err)
	}
	if err := w.Flush(context.Background()); !errors.Is(err, watcher.ErrClosed) {
		t.Errorf("Flush after Close = %v, want ErrClosed", err)
	}
}

func TestFlushHonoursContext(t *testing.T) {
	block := make(chan struct{})
	entered := make(chan struct{}, 1)
	root := tempRoot(t)
	w, err := watcher.New(watcher.Options{}, func(watcher.Batch) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-block
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer close(block)
	addRoot(t, w, root)
	writeFile(t, filepath.Join(root, "alpha", "x.md"), "x")

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered // handle is stuck: Flush cannot finish
		cancel()
	}()
	if err := w.Flush(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Flush = %v, want context.Canceled", err)
	}
}

// TestCloseLeavesNoGoroutine checks that Close returns only after every
// goroutine it started (its own and fsnotify's) has exited.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	root := tempRoot(t)
	rec := newRecorder()
	w, err := watcher.New(watcher.Options{PollInterval: time.Millisecond}, rec.handle)
	if err != nil {
		t.Fatal(err)
	}
	addRoot(t, w, root)
	addRoot(t, w, filepath.Join(root, "not", "yet"))
	writeFile(t, filepath.Join(root, "alpha", "x.md"), "x")
	flush(t, w)
	if runtime.NumGoroutine() <= before {
		t.Fatal("the watcher runs no goroutine")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// A goroutine that has signalled it is done may take a moment to be
	// gone from the count.
	deadline := time.Now().Add(waitLimit)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Close, %d before:\n%s",
				runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
	}
}

// TestDirectoryMovedDuringWalk moves a watched directory into a directory
// that the Watcher is about to walk, so that the walk finds it, by its
// identity, still watched under its old path: that watch is dropped and
// the directory watched afresh under its new path, the old path reported.
func TestDirectoryMovedDuringWalk(t *testing.T) {
	root := tempRoot(t)
	fresh := filepath.Join(root, "gamma")
	from := filepath.Join(root, "alpha", "context")
	to := filepath.Join(fresh, "context")
	var once sync.Once
	w, rec := start(t, watcher.Options{BeforeWatch: func(dir string) error {
		if dir == fresh {
			// Before gamma is watched: no event says that context
			// arrived there, only the walk of gamma finds it.
			once.Do(func() {
				if err := os.Rename(from, to); err != nil {
					t.Error(err)
				}
			})
		}
		return nil
	}})
	addRoot(t, w, root)
	m := newModel(t, root)
	watches := statusOf(t, w, root).Watches

	mkdirAll(t, fresh)
	flush(t, w)
	bs := rec.take()
	wantPaths(t, bs, root, from, fresh, to, filepath.Join(to, "notes", "guide.md"))
	for _, b := range bs {
		m.apply(b)
	}
	m.check()
	if got := statusOf(t, w, root).Watches; got != watches+1 {
		t.Errorf("%d watches, want %d: gamma added, context and notes moved", got, watches+1)
	}

	// Changes below the moved directory are reported under its new path.
	p := filepath.Join(to, "notes", "guide.md")
	writeFile(t, p, "moved")
	q := filepath.Join(to, "new.md")
	writeFile(t, q, "new")
	flush(t, w)
	bs = rec.take()
	wantPaths(t, bs, root, p, q)
	wantNoPaths(t, bs, root, filepath.Join(from, "notes", "guide.md"), filepath.Join(from, "new.md"))
}
