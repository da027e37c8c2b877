package index_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/amplidex/amplidex/index"
)

// denyWrites returns an opener that fails, with errno, every open of an
// existing file for writing, as a read-only file system (EROFS) or a file
// of mode 0444 (EACCES) does for a user other than root. Creating a file
// still works.
func denyWrites(errno syscall.Errno) func(string, int, os.FileMode) (*os.File, error) {
	return func(name string, flag int, perm os.FileMode) (*os.File, error) {
		creating := flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL
		if flag&(os.O_WRONLY|os.O_RDWR) != 0 && !creating {
			return nil, &fs.PathError{Op: "open", Path: name, Err: errno}
		}
		return os.OpenFile(name, flag, perm)
	}
}

// readOnlyFixture is a closed database with records, changes and a meta
// key, and what it holds.
type readOnlyFixture struct {
	path     string
	bytes    []byte
	instance string
	tick     uint64
	files    []index.File
	changes  []index.Change
}

func newReadOnlyFixture(t *testing.T, dir string) *readOnlyFixture {
	t.Helper()
	fx := &readOnlyFixture{path: filepath.Join(dir, "index.db")}
	s, err := index.Open(fx.path, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fx.files = []index.File{file("/r/a", "a"), file("/r/b/c", "c")}
	mustApply(t, s, index.Batch{Put: fx.files})
	fx.tick = mustApply(t, s, index.Batch{Put: []index.File{file("/r/gone", "g")}})
	fx.tick = mustApply(t, s, index.Batch{Delete: []string{"/r/gone"}})
	if err := s.SetMeta("projects", []byte(`["/p"]`)); err != nil {
		t.Fatal(err)
	}
	fx.instance = s.Instance()
	fx.changes, _, _ = s.Changes(0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fx.bytes, err = os.ReadFile(fx.path); err != nil {
		t.Fatal(err)
	}
	return fx
}

// check verifies that s is a read-only view of the fixture that refuses
// writes, and that the file was left as it was.
func (fx *readOnlyFixture) check(t *testing.T, s *index.Store) {
	t.Helper()
	if !s.ReadOnly() {
		t.Error("ReadOnly() = false")
	}
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "opened read-only") {
		t.Errorf("Warnings() = %q, want one saying the index is read-only", w)
	}
	if s.Instance() != fx.instance || s.Tick() != fx.tick {
		t.Errorf("Instance, Tick = %q, %d; want %q, %d", s.Instance(), s.Tick(), fx.instance, fx.tick)
	}
	var walked []index.File
	if err := s.Walk("", func(f index.File) error {
		walked = append(walked, f)
		return nil
	}); err != nil || !reflect.DeepEqual(walked, fx.files) {
		t.Errorf("Walk = %+v, %v; want %+v", walked, err, fx.files)
	}
	if changes, complete, err := s.Changes(0); err != nil || !complete || !reflect.DeepEqual(changes, fx.changes) {
		t.Errorf("Changes(0) = %v, %v, %v; want %v", changes, complete, err, fx.changes)
	}
	if m, err := s.Meta("projects"); err != nil || string(m) != `["/p"]` {
		t.Errorf("Meta(projects) = %q, %v", m, err)
	}

	if _, err := s.Apply(index.Batch{Put: []index.File{file("/r/new", "n")}}); !errors.Is(err, index.ErrReadOnly) {
		t.Errorf("Apply = %v, want ErrReadOnly", err)
	}
	if err := s.SetMeta("projects", nil); !errors.Is(err, index.ErrReadOnly) {
		t.Errorf("SetMeta = %v, want ErrReadOnly", err)
	}
	if s.Tick() != fx.tick {
		t.Errorf("Tick() = %d after refused writes, want %d", s.Tick(), fx.tick)
	}
	if matches, _ := filepath.Glob(fx.path + ".corrupt-*"); len(matches) != 0 {
		t.Errorf("a sound read-only database was moved aside: %q", matches)
	}
	if data, err := os.ReadFile(fx.path); err != nil || !bytes.Equal(data, fx.bytes) {
		t.Errorf("the database file changed (%v)", err)
	}
}

// TestOpenReadOnly opens a sound database whose file cannot be written,
// several times: it is opened read-only each time, never moved aside, and
// refuses writes with ErrReadOnly.
func TestOpenReadOnly(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string) func(string, int, os.FileMode) (*os.File, error)
	}{
		{"read-only file system", func(*testing.T, string) func(string, int, os.FileMode) (*os.File, error) {
			return denyWrites(syscall.EROFS)
		}},
		{"permission denied", func(*testing.T, string) func(string, int, os.FileMode) (*os.File, error) {
			return denyWrites(syscall.EACCES)
		}},
		{"file mode 0444", func(t *testing.T, path string) func(string, int, os.FileMode) (*os.File, error) {
			if os.Geteuid() == 0 {
				t.Skip("running as root, which writes any file regardless of its mode; the cases above simulate it")
			}
			if err := os.Chmod(path, 0o444); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newReadOnlyFixture(t, t.TempDir())
			openFile := tc.setup(t, fx.path)
			for range 3 {
				s, err := index.OpenWithOpenFile(fx.path, index.Options{}, openFile)
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				fx.check(t, s)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Apply(index.Batch{Put: []index.File{file("/r/new", "n")}}); !errors.Is(err, index.ErrClosed) {
					t.Errorf("Apply after Close = %v, want ErrClosed", err)
				}
			}
		})
	}
}

// TestOpenReadOnlyOtherSchema opens a read-only database of another schema
// version: it cannot be emptied, so the store reads as empty, under an
// instance of its own, and the file is left alone.
func TestOpenReadOnlyOtherSchema(t *testing.T) {
	fx := newReadOnlyFixture(t, t.TempDir())
	withBolt(t, fx.path, func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), binary.BigEndian.AppendUint32(nil, 1))
	})
	original, err := os.ReadFile(fx.path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := index.OpenWithOpenFile(fx.path, index.Options{}, denyWrites(syscall.EROFS))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if !s.ReadOnly() {
		t.Error("ReadOnly() = false")
	}
	w := strings.Join(s.Warnings(), "\n")
	if !strings.Contains(w, "schema version 1") || !strings.Contains(w, "reads as empty") || !strings.Contains(w, "opened read-only") {
		t.Errorf("Warnings() = %q, want the schema version, the empty reads and the read-only open", s.Warnings())
	}
	if s.Instance() == "" || s.Instance() == fx.instance || s.Tick() != 0 {
		t.Errorf("Instance, Tick = %q, %d; want a new instance at 0", s.Instance(), s.Tick())
	}
	if n, err := s.Len(); n != 0 || err != nil {
		t.Errorf("Len() = %d, %v; want 0", n, err)
	}
	if _, ok, err := s.Get("/r/a"); ok || err != nil {
		t.Errorf("Get(/r/a) = %v, %v; want none", ok, err)
	}
	if got := paths(t, s, ""); got != nil {
		t.Errorf("Walk found %q", got)
	}
	if m, err := s.Meta("projects"); m != nil || err != nil {
		t.Errorf("Meta(projects) = %q, %v; want nil", m, err)
	}
	if changes, complete, err := s.Changes(0); complete || changes != nil || err != nil {
		t.Errorf("Changes(0) = %v, %v, %v; want incomplete", changes, complete, err)
	}
	if _, err := s.Apply(index.Batch{Put: []index.File{file("/r/new", "n")}}); !errors.Is(err, index.ErrReadOnly) {
		t.Errorf("Apply = %v, want ErrReadOnly", err)
	}
	if data, _ := os.ReadFile(fx.path); !bytes.Equal(data, original) {
		t.Error("the database file changed")
	}
	if matches, _ := filepath.Glob(fx.path + ".corrupt-*"); len(matches) != 0 {
		t.Errorf("moved aside: %q", matches)
	}
}

// TestOpenReadOnlyCorrupt: a damaged file that cannot be written is still
// moved aside when its directory allows, and a new writable store takes
// its place.
func TestOpenReadOnlyCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	writeFile(t, path, randomBytes(64<<10))
	s, err := index.OpenWithOpenFile(path, index.Options{Now: fixedNow}, denyWrites(syscall.EACCES))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if s.ReadOnly() {
		t.Error("ReadOnly() = true for the new database")
	}
	assertRecovered(t, s)
}

// TestOpenCannotCreate: a database that is absent and cannot be created
// fails Open with the reason, and moves nothing.
func TestOpenCannotCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	denied := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		if flag&os.O_CREATE != 0 {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EROFS}
		}
		return os.OpenFile(name, flag, perm)
	}
	s, err := index.OpenWithOpenFile(path, index.Options{}, denied)
	if !errors.Is(err, syscall.EROFS) {
		t.Fatalf("Open = %v, %v; want an error wrapping EROFS", s, err)
	}
	if matches, _ := filepath.Glob(path + "*"); len(matches) != 0 {
		t.Errorf("files left behind: %q", matches)
	}
}
