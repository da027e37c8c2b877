package index_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/amplidex/amplidex/index"
)

func TestSameStat(t *testing.T) {
	base := file("/r/a", "a")
	base.Ctime = 1_700_000_000_987_654_321
	tests := []struct {
		name   string
		change func(f *index.File)
		same   bool
	}{
		{"identical", func(*index.File) {}, true},
		{"size", func(f *index.File) { f.Size++ }, false},
		{"mtime", func(f *index.File) { f.ModTime++ }, false},
		{"ctime", func(f *index.File) { f.Ctime++ }, false},
		{"inode", func(f *index.File) { f.Inode++ }, false},
		{"mode", func(f *index.File) { f.Mode ^= 0o100 }, false},
		// Not stat data: a fresh stat knows none of these.
		{"path, hash, root, data", func(f *index.File) {
			*f = index.File{Size: f.Size, ModTime: f.ModTime, Ctime: f.Ctime, Inode: f.Inode, Mode: f.Mode}
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			other := base
			tc.change(&other)
			if got := base.SameStat(other); got != tc.same {
				t.Errorf("SameStat = %v, want %v", got, tc.same)
			}
			if got := other.SameStat(base); got != tc.same {
				t.Errorf("SameStat, reversed = %v, want %v", got, tc.same)
			}
		})
	}
}

// TestStatOfSeesRestoredMtime rewrites a file with bytes of the same size
// and sets its modification time back, as cp -p, tar x and touch -r do:
// the record stored before must no longer match, both on the live store
// and after it is reopened.
func TestStatOfSeesRestoredMtime(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows reports no inode change time")
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "agent.md")
	writeFile(t, name, []byte("version one"))
	before := stat(t, name)

	now := time.Now().UnixNano()
	if d := now - before.Ctime; d < 0 || d > int64(time.Minute) {
		t.Fatalf("Ctime = %d, %v from now; want the time the file was written", before.Ctime, time.Duration(d))
	}
	if again := stat(t, name); !before.SameStat(again) {
		t.Fatalf("unchanged file: SameStat(%+v, %+v) = false", before, again)
	}

	record := before
	record.Path, record.Root, record.Data = name, dir, []byte("facts of version one")
	path := filepath.Join(t.TempDir(), "index.db")
	s, err := index.Open(path, index.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, index.Batch{Put: []index.File{record}})

	// The change time has the kernel's clock granularity: rewrite until it
	// moves past the one recorded.
	mtime := time.Unix(0, before.ModTime)
	var after index.File
	for deadline := time.Now().Add(10 * time.Second); ; {
		writeFile(t, name, []byte("version two"))
		if err := os.Chtimes(name, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		if after = stat(t, name); after.Ctime != before.Ctime {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("change time still %d after rewrites for 10s", before.Ctime)
		}
	}
	if after.Size != before.Size || after.ModTime != before.ModTime {
		t.Fatalf("rewrite changed size or mtime: %+v, was %+v", after, before)
	}

	live, _, err := s.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if live.SameStat(after) {
		t.Errorf("live store: record %+v matches the rewritten file %+v", live, after)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = index.Open(path, index.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stored, ok, err := s.Get(name)
	if !ok || err != nil {
		t.Fatalf("Get after reopen = %v, %v", ok, err)
	}
	if stored.Ctime != before.Ctime || !bytes.Equal(stored.Data, record.Data) {
		t.Errorf("reopened record = %+v, want %+v", stored, record)
	}
	if stored.SameStat(after) {
		t.Errorf("reopened store: record %+v matches the rewritten file %+v", stored, after)
	}
}

func stat(t *testing.T, name string) index.File {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return index.StatOf(fi)
}
