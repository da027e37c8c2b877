//go:build linux

package index_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/amplidex/amplidex/index"
)

// TestDrillDiskFull keeps applying batches to a store on a small tmpfs
// that is full: Apply fails with an error, never a panic; the store keeps
// answering with exactly what was acknowledged; once space is freed the
// failed batch applies; and the reopened database holds every acknowledged
// batch, with no warnings.
func TestDrillDiskFull(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs on %s (needs root and a kernel that allows it): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	path := filepath.Join(dir, "index.db")
	s, err := index.Open(path, index.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	// Records, half of them deleted again: the full disk finds free pages
	// inside the file, so batches succeed for a while before one fails.
	payload := strings.Repeat("p", 2000)
	acked := []string{"/r/first"}
	mustApply(t, s, index.Batch{Put: []index.File{file("/r/first", "first")}})
	for i := range 20 {
		var b index.Batch
		for j := range 10 {
			b.Put = append(b.Put, file(fmt.Sprintf("/r/a%04d/f%d", i, j), payload))
		}
		mustApply(t, s, b)
		if i%2 == 0 {
			for _, f := range b.Put {
				acked = append(acked, f.Path)
			}
		}
	}
	for i := 1; i < 20; i += 2 {
		mustApply(t, s, index.Batch{DeletePrefix: []string{fmt.Sprintf("/r/a%04d", i)}})
	}
	filler := fillDisk(t, dir)

	var failed index.Batch
	for i := 0; ; i++ {
		if i == 1000 {
			t.Fatal("1000 batches applied on a full disk; the drill filled nothing")
		}
		var b index.Batch
		for j := range 10 {
			b.Put = append(b.Put, file(fmt.Sprintf("/r/b%04d/f%d", i, j), payload))
		}
		if _, err := s.Apply(b); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("Apply on a full disk: %v, want an error wrapping ENOSPC", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("Apply on a full disk: %v does not name the database", err)
			}
			failed = b
			t.Logf("batch %d failed: %v", i, err)
			break
		}
		for _, f := range b.Put {
			acked = append(acked, f.Path)
		}
	}
	sort.Strings(acked)
	tick := s.Tick()
	if got := paths(t, s, ""); !reflect.DeepEqual(got, acked) {
		t.Fatalf("after the failed batch the store holds %d records, %d were acknowledged", len(got), len(acked))
	}
	if _, err := s.Apply(failed); err == nil {
		t.Error("a batch applied on a disk that is still full")
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, failed)
	for _, f := range failed.Put {
		acked = append(acked, f.Path)
	}
	sort.Strings(acked)
	if s.Tick() != tick+1 {
		t.Errorf("tick %d after the retried batch, want %d", s.Tick(), tick+1)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s, err = index.Open(path, index.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if w := s.Warnings(); len(w) > 0 {
		t.Errorf("reopen warnings: %q", w)
	}
	if s.Tick() != tick+1 {
		t.Errorf("reopened at tick %d, want %d", s.Tick(), tick+1)
	}
	if got := paths(t, s, ""); !reflect.DeepEqual(got, acked) {
		t.Errorf("the reopened store holds %d records, want the %d acknowledged", len(got), len(acked))
	}
	if err := s.Walk("", func(f index.File) error {
		if f.Path != "/r/first" && string(f.Data) != payload {
			return fmt.Errorf("%s: payload of %d bytes, want %d", f.Path, len(f.Data), len(payload))
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}

// TestDrillReadOnlyFileSystem remounts a tmpfs holding a sound database
// read-only: each Open opens it read-only, serves what it holds, refuses
// writes with ErrReadOnly and moves nothing aside.
func TestDrillReadOnlyFileSystem(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs on %s (needs root and a kernel that allows it): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	fx := newReadOnlyFixture(t, dir)
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount %s read-only: %v", dir, err)
	}
	for range 3 {
		s, err := index.Open(fx.path, index.Options{})
		if err != nil {
			t.Fatalf("Open on a read-only file system: %v", err)
		}
		fx.check(t, s)
		if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "read-only file system") {
			t.Errorf("Warnings() = %q, want one naming the read-only file system", w)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// fillDisk writes a file in dir until the file system has no space left,
// and returns its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{1 << 16, 1 << 12, 1} {
		chunk := bytes.Repeat([]byte{'x'}, size)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill %s: %v", dir, err)
				}
				break
			}
		}
	}
	return path
}
