package index_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/amplidex/amplidex/index"
)

// fixedNow is the clock of the recovery tests, so the name of a file moved
// aside is known.
func fixedNow() time.Time { return time.Unix(1_700_000_000, 0) }

const aside = ".corrupt-1700000000"

// populated creates a closed store at path holding n records.
func populated(t *testing.T, path string, n int) {
	t.Helper()
	s, err := index.Open(path, index.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var b index.Batch
	for i := range n {
		b.Put = append(b.Put, file(fmt.Sprintf("/r/c%04d/agents/a.md", i), strings.Repeat("x", 100)))
	}
	mustApply(t, s, b)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// withBolt edits the database at path directly.
func withBolt(t *testing.T, path string, fn func(tx *bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenCreatesPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	s, err := index.Open(filepath.Join(dir, "index.db"), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("directory mode = %v, %v; want 0700", info.Mode().Perm(), err)
	}
	if info, _ := os.Stat(s.Path()); info.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, want 0600", info.Mode().Perm())
	}
	if len(s.Warnings()) != 0 || s.Instance() == "" || s.Tick() != 0 {
		t.Errorf("fresh store: Warnings %q, Instance %q, Tick %d", s.Warnings(), s.Instance(), s.Tick())
	}
}

func TestOpenMovesUnusableAside(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
	}{
		{"random bytes", func(t *testing.T, path string) {
			writeFile(t, path, randomBytes(100))
		}},
		{"random pages", func(t *testing.T, path string) {
			writeFile(t, path, randomBytes(64<<10))
		}},
		{"empty file", func(t *testing.T, path string) {
			writeFile(t, path, nil)
		}},
		{"truncated database", func(t *testing.T, path string) {
			populated(t, path, 2000)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// Cut below the high-water mark, not just the file's slack.
			writeFile(t, path, data[:highWater(t, path)/2])
		}},
		{"damaged meta pages", func(t *testing.T, path string) {
			populated(t, path, 10)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			copy(data[16:], randomBytes(64))
			copy(data[4096+16:], randomBytes(64))
			writeFile(t, path, data)
		}},
		{"foreign bbolt database", func(t *testing.T, path string) {
			withBolt(t, path, func(tx *bbolt.Tx) error {
				b, err := tx.CreateBucket([]byte("other"))
				if err != nil {
					return err
				}
				return b.Put([]byte("k"), []byte("v"))
			})
		}},
		{"malformed metadata", func(t *testing.T, path string) {
			populated(t, path, 3)
			withBolt(t, path, func(tx *bbolt.Tx) error {
				return tx.Bucket([]byte("meta")).Put([]byte("tick"), []byte("bad"))
			})
		}},
		{"missing bucket", func(t *testing.T, path string) {
			populated(t, path, 3)
			withBolt(t, path, func(tx *bbolt.Tx) error {
				return tx.DeleteBucket([]byte("files"))
			})
		}},
		{"unreadable file", func(t *testing.T, path string) {
			if os.Geteuid() == 0 {
				t.Skip("running as root, which reads any file regardless of its mode")
			}
			populated(t, path, 3)
			if err := os.Chmod(path, 0); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "index.db")
			tc.setup(t, path)
			original, err := os.ReadFile(path)
			if err != nil && !errors.Is(err, os.ErrPermission) {
				t.Fatal(err)
			}

			s, err := index.Open(path, index.Options{Now: fixedNow})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			assertRecovered(t, s)

			kept, err := os.ReadFile(path + aside)
			if err != nil && original != nil {
				t.Fatalf("file moved aside: %v", err)
			}
			if !bytes.Equal(kept, original) {
				t.Errorf("file moved aside holds %d bytes, want the original %d", len(kept), len(original))
			}
		})
	}
}

// assertRecovered checks that s is a working empty store that warns about
// what Open did.
func assertRecovered(t *testing.T, s *index.Store) {
	t.Helper()
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "moved aside to "+s.Path()+aside) {
		t.Errorf("Warnings() = %q, want one naming %s", w, s.Path()+aside)
	}
	if n, err := s.Len(); n != 0 || err != nil {
		t.Errorf("Len() = %d, %v; want 0", n, err)
	}
	if tick := mustApply(t, s, index.Batch{Put: []index.File{file("/r/a", "a")}}); tick != 1 {
		t.Errorf("first Apply tick = %d, want 1", tick)
	}
	if f, ok, err := s.Get("/r/a"); !ok || err != nil || string(f.Data) != "a" {
		t.Errorf("Get after recovery = %+v, %v, %v", f, ok, err)
	}
}

func TestOpenMovesDirectoryAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	writeFile(t, filepath.Join(path, "inside"), []byte("kept"))
	s, err := index.Open(path, index.Options{Now: fixedNow})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	assertRecovered(t, s)
	if data, err := os.ReadFile(filepath.Join(path+aside, "inside")); string(data) != "kept" {
		t.Errorf("directory moved aside: %q, %v", data, err)
	}
}

// TestOpenMoveAsideKeepsOneCopy moves a database aside again and again,
// within one second and across seconds: only the newest copy stays, and a
// directory moved aside is never removed.
func TestOpenMoveAsideKeepsOneCopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	writeFile(t, filepath.Join(path+".corrupt-1", "inside"), []byte("a directory moved aside"))
	for i, sec := range []int64{1_700_000_000, 1_700_000_000, 1_700_000_000, 1_700_000_005} {
		content := fmt.Sprint("garbage ", i)
		writeFile(t, path, []byte(content))
		s, err := index.Open(path, index.Options{Now: func() time.Time { return time.Unix(sec, 0) }})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		var files []string
		matches, _ := filepath.Glob(path + ".corrupt-*")
		for _, m := range matches {
			if info, err := os.Stat(m); err == nil && info.Mode().IsRegular() {
				files = append(files, m)
			}
		}
		if len(files) != 1 {
			t.Fatalf("round %d: copies aside %q, want one", i, files)
		}
		if data, _ := os.ReadFile(files[0]); string(data) != content {
			t.Errorf("round %d: %s holds %q, want %q", i, files[0], data, content)
		}
		if want := fmt.Sprintf("%s.corrupt-%d", path, sec); !strings.HasPrefix(files[0], want) {
			t.Errorf("round %d: copy named %s, want %s…", i, files[0], want)
		}
		if i > 0 && !strings.Contains(strings.Join(s.Warnings(), "\n"), "older copies removed: 1") {
			t.Errorf("round %d: Warnings() = %q, want a count of the copies removed", i, s.Warnings())
		}
	}
	if data, err := os.ReadFile(filepath.Join(path+".corrupt-1", "inside")); err != nil || string(data) != "a directory moved aside" {
		t.Errorf("directory moved aside: %q, %v", data, err)
	}
}

func TestOpenSchemaMismatchRebuilds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	s, err := index.Open(path, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, index.Batch{Put: []index.File{file("/r/a", "a")}})
	if err := s.SetMeta("roots", []byte("/r")); err != nil {
		t.Fatal(err)
	}
	instance := s.Instance()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	withBolt(t, path, func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), binary.BigEndian.AppendUint32(nil, 99))
	})

	s, err = index.Open(path, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "schema version 99") {
		t.Errorf("Warnings() = %q, want one about schema version 99", w)
	}
	if n, _ := s.Len(); n != 0 || s.Tick() != 0 {
		t.Errorf("after rebuild: Len() = %d, Tick() = %d; want 0, 0", n, s.Tick())
	}
	if m, _ := s.Meta("roots"); m != nil {
		t.Errorf("Meta(roots) survived the rebuild: %q", m)
	}
	if s.Instance() == instance {
		t.Error("rebuilt store kept its old instance id")
	}
	if matches, _ := filepath.Glob(path + ".corrupt-*"); len(matches) != 0 {
		t.Errorf("schema rebuild moved files aside: %q", matches)
	}
}

// TestOpenSchemaOneRebuilds opens a database laid out as schema version 1
// wrote it, whose records lack the change time: it is emptied in place,
// not misread and not moved aside.
func TestOpenSchemaOneRebuilds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	// A version 1 record: size, mtime, inode, mode, flags, root, data.
	var rec []byte
	rec = binary.AppendVarint(rec, 11)
	rec = binary.AppendVarint(rec, 1_700_000_000_123_456_789)
	rec = binary.AppendUvarint(rec, 4242)
	rec = binary.AppendUvarint(rec, 0o644)
	rec = append(rec, 0)
	rec = binary.AppendUvarint(rec, uint64(len("/r"))<<1)
	rec = binary.AppendUvarint(rec, 5)
	rec = append(rec, "facts"...)
	withBolt(t, path, func(tx *bbolt.Tx) error {
		buckets := map[string]map[string][]byte{
			"meta": {
				"schema": binary.BigEndian.AppendUint32(nil, 1), "instance": []byte("0123456789abcdef"),
				"created": u64(1), "tick": u64(1), "files": u64(1), "log-count": u64(1), "log-floor": u64(0),
			},
			"files": {"/r/a.md": rec},
			"log":   {string(u64(1)) + "/r/a.md": {0}},
			"state": {"projects": []byte(`["/p"]`)},
		}
		for name, kv := range buckets {
			b, err := tx.CreateBucket([]byte(name))
			if err != nil {
				return err
			}
			for k, v := range kv {
				if err := b.Put([]byte(k), v); err != nil {
					return err
				}
			}
		}
		return nil
	})

	s, err := index.Open(path, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "schema version 1, want 3") {
		t.Errorf("Warnings() = %q, want one about schema version 1", w)
	}
	if n, _ := s.Len(); n != 0 || s.Tick() != 0 || s.Instance() == "0123456789abcdef" {
		t.Errorf("after rebuild: Len() = %d, Tick() = %d, Instance() = %q; want 0, 0, a new one", n, s.Tick(), s.Instance())
	}
	if _, ok, err := s.Get("/r/a.md"); ok || err != nil {
		t.Errorf("Get of the version 1 record = %v, %v; want none", ok, err)
	}
	if m, _ := s.Meta("projects"); m != nil {
		t.Errorf("Meta(projects) survived the rebuild: %q", m)
	}
	if changes, complete, _ := s.Changes(0); !complete || len(changes) != 0 {
		t.Errorf("Changes(0) = %v, %v; want none, complete", changes, complete)
	}
	mustApply(t, s, index.Batch{Put: []index.File{file("/r/a.md", "new")}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if matches, _ := filepath.Glob(path + ".corrupt-*"); len(matches) != 0 {
		t.Errorf("schema rebuild moved files aside: %q", matches)
	}
	s, err = index.Open(path, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if w := s.Warnings(); len(w) != 0 {
		t.Errorf("Warnings() after reopening the rebuilt database = %q, want none", w)
	}
	if f, ok, _ := s.Get("/r/a.md"); !ok || !reflect.DeepEqual(f, file("/r/a.md", "new")) {
		t.Errorf("Get after reopen = %+v, %v", f, ok)
	}
}

func TestOpenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	first, err := index.Open(path, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, first, index.Batch{Put: []index.File{file("/r/a", "a")}})

	second, err := index.Open(path, index.Options{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, index.ErrLocked) {
		t.Fatalf("second Open = %v, %v; want ErrLocked", second, err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name %s", err, path)
	}
	if matches, _ := filepath.Glob(path + ".corrupt-*"); len(matches) != 0 {
		t.Errorf("a locked database was moved aside: %q", matches)
	}
	if _, ok, err := first.Get("/r/a"); !ok || err != nil {
		t.Errorf("holder lost its data: %v, %v", ok, err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	second, err = index.Open(path, index.Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after the holder closed: %v", err)
	}
	defer second.Close()
	if _, ok, _ := second.Get("/r/a"); !ok {
		t.Error("record lost across handles")
	}
}

func TestOpenEmptyPath(t *testing.T) {
	if _, err := index.Open("", index.Options{}); err == nil {
		t.Error("Open(\"\") succeeded")
	}
}

// highWater returns the size of the data in the database at path.
func highWater(t testing.TB, path string) int64 {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size int64
	_ = db.View(func(tx *bbolt.Tx) error {
		size = tx.Size()
		return nil
	})
	return size
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
