package index_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/amplidex/amplidex/index"
	"go.etcd.io/bbolt"
)

// openStore opens a store in a fresh temporary directory and closes it when
// the test ends.
func openStore(t *testing.T, opts index.Options) (*index.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "index.db")
	s, err := index.Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

// file returns a regular-file record for path with a payload.
func file(path, data string) index.File {
	return index.File{
		Path:    path,
		Size:    int64(len(data)) * 10,
		ModTime: 1_700_000_000_123_456_789,
		Ctime:   1_700_000_100_987_654_321,
		Inode:   4242,
		Mode:    0o644,
		Hash:    sha256.Sum256([]byte(data)),
		Root:    "/r",
		Data:    []byte(data),
	}
}

func mustApply(t *testing.T, s *index.Store, b index.Batch) uint64 {
	t.Helper()
	tick, err := s.Apply(b)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return tick
}

// paths lists the paths under prefix, in Walk order.
func paths(t *testing.T, s *index.Store, prefix string) []string {
	t.Helper()
	var got []string
	if err := s.Walk(prefix, func(f index.File) error {
		got = append(got, f.Path)
		return nil
	}); err != nil {
		t.Fatalf("Walk(%q): %v", prefix, err)
	}
	return got
}

func TestRoundTrip(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	tests := []struct {
		name string
		file index.File
	}{
		{"regular", file("/r/c/agents/a.md", "payload")},
		{"no payload", index.File{Path: "/r/c/profiles/p.md", Size: 1, ModTime: 1, Inode: 1, Mode: 0o600, Hash: sha256.Sum256(nil), Root: "/r"}},
		{"directory", index.File{Path: "/r/c/modules", ModTime: -5, Ctime: -7, Inode: 1 << 60, Mode: 1<<31 | 0o755, Root: "/r"}},
		{"no ctime", index.File{Path: "/r/c/agents/w.md", Size: 2, ModTime: 3, Mode: 0o644, Root: "/r"}},
		{"root elsewhere", index.File{Path: "/work/copy/agents/x.md", Size: 3, Root: "/home/u/.amplifier/collections", Data: []byte{0, 1, 2}}},
		{"no root", index.File{Path: "/x", Data: make([]byte, 100_000)}},
		{"root equals path", index.File{Path: "/r/c", Root: "/r/c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mustApply(t, s, index.Batch{Put: []index.File{tc.file}})
			got, ok, err := s.Get(tc.file.Path)
			if err != nil || !ok {
				t.Fatalf("Get(%q) = _, %v, %v", tc.file.Path, ok, err)
			}
			if !reflect.DeepEqual(got, tc.file) {
				t.Errorf("Get(%q) =\n%+v\nwant\n%+v", tc.file.Path, got, tc.file)
			}
			// Peek sees the same record, its Data read in place.
			var peeked index.File
			ok, err = s.Peek(tc.file.Path, func(f index.File) {
				peeked = f
				peeked.Data = bytes.Clone(f.Data)
			})
			if err != nil || !ok || !reflect.DeepEqual(peeked, tc.file) {
				t.Errorf("Peek(%q) = %v, %v with\n%+v\nwant\n%+v", tc.file.Path, ok, err, peeked, tc.file)
			}
		})
	}
	if ok, err := s.Peek("/r/absent", func(index.File) { t.Error("Peek(absent) called fn") }); ok || err != nil {
		t.Errorf("Peek(absent) = %v, %v; want false, nil", ok, err)
	}
	if n, err := s.Len(); err != nil || n != len(tests) {
		t.Errorf("Len() = %d, %v; want %d", n, err, len(tests))
	}
	if _, ok, err := s.Get("/r/absent"); ok || err != nil {
		t.Errorf("Get(absent) = _, %v, %v; want false, nil", ok, err)
	}
}

func TestEmptyPayloadReadsNil(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	f := file("/r/a", "")
	f.Data = []byte{}
	mustApply(t, s, index.Batch{Put: []index.File{f}})
	got, _, err := s.Get("/r/a")
	if err != nil || got.Data != nil {
		t.Errorf("Get = %v, %v; want nil Data", got.Data, err)
	}
}

func TestNoOpPut(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	batch := index.Batch{Put: []index.File{file("/r/a", "1"), file("/r/b", "2")}}
	tick := mustApply(t, s, batch)
	if tick != 1 {
		t.Fatalf("first Apply tick = %d, want 1", tick)
	}
	if again := mustApply(t, s, batch); again != tick {
		t.Errorf("identical Apply tick = %d, want %d", again, tick)
	}
	if got := mustApply(t, s, index.Batch{}); got != tick {
		t.Errorf("empty Apply tick = %d, want %d", got, tick)
	}
	if got := mustApply(t, s, index.Batch{Delete: []string{"/r/absent"}}); got != tick {
		t.Errorf("Apply deleting an absent path: tick = %d, want %d", got, tick)
	}
	changes, complete, err := s.Changes(tick)
	if err != nil || !complete || len(changes) != 0 {
		t.Errorf("Changes(%d) = %v, %v, %v; want none, complete", tick, changes, complete, err)
	}

	changed := file("/r/b", "2")
	changed.ModTime++
	next := mustApply(t, s, index.Batch{Put: []index.File{file("/r/a", "1"), changed}})
	if next != tick+1 || s.Tick() != next {
		t.Fatalf("Apply with one change: tick = %d, Tick() = %d; want %d", next, s.Tick(), tick+1)
	}
	changes, _, _ = s.Changes(tick)
	if want := []index.Change{{Tick: next, Path: "/r/b"}}; !reflect.DeepEqual(changes, want) {
		t.Errorf("Changes(%d) = %v, want %v", tick, changes, want)
	}
}

func TestDuplicatePutsLastWins(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	mustApply(t, s, index.Batch{Put: []index.File{file("/r/a", "old"), file("/r/b", "b"), file("/r/a", "new")}})
	got, _, _ := s.Get("/r/a")
	if string(got.Data) != "new" {
		t.Errorf("Data = %q, want %q", got.Data, "new")
	}
	if n, _ := s.Len(); n != 2 {
		t.Errorf("Len() = %d, want 2", n)
	}
}

func TestDeletes(t *testing.T) {
	all := []string{"/r/a", "/r/a-b/z", "/r/a/x", "/r/a/y/z", "/r/ab", "/s/q"}
	tests := []struct {
		name  string
		batch index.Batch
		want  []string // remaining paths
		log   []index.Change
	}{
		{
			name:  "delete",
			batch: index.Batch{Delete: []string{"/r/a/x", "/r/ab", "/r/none"}},
			want:  []string{"/r/a", "/r/a-b/z", "/r/a/y/z", "/s/q"},
			log:   []index.Change{{Tick: 2, Path: "/r/a/x", Deleted: true}, {Tick: 2, Path: "/r/ab", Deleted: true}},
		},
		{
			name:  "subtree",
			batch: index.Batch{DeletePrefix: []string{"/r/a"}},
			want:  []string{"/r/a-b/z", "/r/ab", "/s/q"},
			log: []index.Change{
				{Tick: 2, Path: "/r/a", Deleted: true},
				{Tick: 2, Path: "/r/a/x", Deleted: true},
				{Tick: 2, Path: "/r/a/y/z", Deleted: true},
			},
		},
		{
			name:  "subtree without its own record",
			batch: index.Batch{DeletePrefix: []string{"/r/a/y"}},
			want:  []string{"/r/a", "/r/a-b/z", "/r/a/x", "/r/ab", "/s/q"},
			log:   []index.Change{{Tick: 2, Path: "/r/a/y/z", Deleted: true}},
		},
		{
			name:  "everything",
			batch: index.Batch{DeletePrefix: []string{"/"}},
			want:  nil,
		},
		{
			name:  "overlapping",
			batch: index.Batch{Delete: []string{"/r/a/x", "/r/a/x"}, DeletePrefix: []string{"/r", "/r/a"}},
			want:  []string{"/s/q"},
		},
		{
			name: "put wins over delete",
			batch: index.Batch{
				Put:          []index.File{file("/r/a/x", "replaced"), file("/r/new", "n")},
				Delete:       []string{"/r/new"},
				DeletePrefix: []string{"/r/a"},
			},
			want: []string{"/r/a-b/z", "/r/a/x", "/r/ab", "/r/new", "/s/q"},
			log: []index.Change{
				{Tick: 2, Path: "/r/a", Deleted: true},
				{Tick: 2, Path: "/r/a/x"},
				{Tick: 2, Path: "/r/a/y/z", Deleted: true},
				{Tick: 2, Path: "/r/new"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openStore(t, index.Options{NoSync: true})
			var puts []index.File
			for _, p := range all {
				puts = append(puts, file(p, p))
			}
			mustApply(t, s, index.Batch{Put: puts})
			mustApply(t, s, tc.batch)
			if got := paths(t, s, ""); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("remaining = %q, want %q", got, tc.want)
			}
			if n, _ := s.Len(); n != len(tc.want) {
				t.Errorf("Len() = %d, want %d", n, len(tc.want))
			}
			if tc.log == nil {
				return
			}
			changes, complete, err := s.Changes(1)
			if err != nil || !complete || !reflect.DeepEqual(changes, tc.log) {
				t.Errorf("Changes(1) = %v, %v, %v; want %v", changes, complete, err, tc.log)
			}
		})
	}
}

func TestInvalidPaths(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	for _, b := range []index.Batch{
		{Put: []index.File{file("relative/a", "")}},
		{Put: []index.File{file("/r/../a", "")}},
		{Put: []index.File{file("/r/a/", "")}},
		{Put: []index.File{file("", "")}},
		{Delete: []string{""}},
		{DeletePrefix: []string{"r"}},
		{Put: []index.File{file("/r/ok", "")}, Delete: []string{"/r//b"}},
	} {
		if _, err := s.Apply(b); !errors.Is(err, index.ErrInvalidPath) {
			t.Errorf("Apply(%+v) error = %v, want ErrInvalidPath", b, err)
		}
	}
	if n, _ := s.Len(); n != 0 || s.Tick() != 0 {
		t.Errorf("after rejected batches: Len() = %d, Tick() = %d; want 0, 0", n, s.Tick())
	}
}

func TestWalkPrefix(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	var puts []index.File
	for _, p := range []string{"/r/Z.md", "/r/a", "/r/a-b/x.md", "/r/a.md", "/r/a/x.md", "/r/b/y.md"} {
		puts = append(puts, file(p, p))
	}
	mustApply(t, s, index.Batch{Put: puts})
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", []string{"/r/Z.md", "/r/a", "/r/a-b/x.md", "/r/a.md", "/r/a/x.md", "/r/b/y.md"}},
		{"/", []string{"/r/Z.md", "/r/a", "/r/a-b/x.md", "/r/a.md", "/r/a/x.md", "/r/b/y.md"}},
		{"/r/a", []string{"/r/a", "/r/a/x.md"}},
		{"/r/b", []string{"/r/b/y.md"}},
		{"/r/b/y.md", []string{"/r/b/y.md"}},
		{"/r/c", nil},
		{"/q", nil},
	}
	for _, tc := range tests {
		t.Run(tc.prefix, func(t *testing.T) {
			if got := paths(t, s, tc.prefix); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Walk(%q) = %q, want %q", tc.prefix, got, tc.want)
			}
		})
	}
}

func TestWalkStopsOnError(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	mustApply(t, s, index.Batch{Put: []index.File{file("/r/a", "a"), file("/r/b", "b")}})
	stop := errors.New("stop")
	calls := 0
	err := s.Walk("", func(index.File) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("Walk = %v after %d calls; want the function's error after 1", err, calls)
	}
}

func TestWalkPanicPassesThrough(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	mustApply(t, s, index.Batch{Put: []index.File{file("/r/a", "a")}})
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want the function's own panic", r)
		}
		// The read transaction was released: a write still goes through.
		mustApply(t, s, index.Batch{Put: []index.File{file("/r/b", "b")}})
	}()
	_ = s.Walk("", func(index.File) error { panic("boom") })
}

func TestResultsDoNotAliasDatabase(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	mustApply(t, s, index.Batch{Put: []index.File{file("/r/a", "payload-a"), file("/r/b", "payload-b")}})
	if err := s.SetMeta("roots", []byte("/r")); err != nil {
		t.Fatal(err)
	}
	var walked []index.File
	if err := s.Walk("", func(f index.File) error {
		walked = append(walked, f)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, _, _ := s.Get("/r/a")
	meta, _ := s.Meta("roots")
	// Writing into database memory would fault: it is mapped read-only.
	for _, f := range append(walked, got) {
		for i := range f.Data {
			f.Data[i] = 'X'
		}
	}
	for i := range meta {
		meta[i] = 'X'
	}
	for _, p := range []string{"/r/a", "/r/b"} {
		f, _, err := s.Get(p)
		if want := "payload-" + p[len(p)-1:]; err != nil || string(f.Data) != want {
			t.Errorf("Get(%q).Data = %q, %v; want %q", p, f.Data, err, want)
		}
	}
	if m, _ := s.Meta("roots"); string(m) != "/r" {
		t.Errorf("Meta(roots) = %q, want /r", m)
	}
}

// TestMetaWritesOneKey: writing a small key does not write a large one
// stored beside it again.
func TestMetaWritesOneKey(t *testing.T) {
	s, err := index.OpenWithStatistics(filepath.Join(t.TempDir(), "index.db"), index.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	big := bytes.Repeat([]byte("summary "), 512<<10) // 4 MiB
	if err := s.SetMeta("summary", big); err != nil {
		t.Fatal(err)
	}
	before := index.PagesAllocated(s)
	if err := s.SetMeta("projects", []byte("[]")); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta("projects", []byte(`["/p"]`)); err != nil {
		t.Fatal(err)
	}
	if n := index.PagesAllocated(s) - before; n > 64<<10 {
		t.Errorf("two writes of a small key allocated %d bytes of pages, as if the 4 MiB beside it were written again", n)
	}
	if v, _ := s.Meta("summary"); !bytes.Equal(v, big) {
		t.Errorf("Meta(summary) has %d bytes, want the %d written", len(v), len(big))
	}
	if v, _ := s.Meta("projects"); string(v) != `["/p"]` {
		t.Errorf("Meta(projects) = %q", v)
	}
}

func TestMeta(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	if v, err := s.Meta("absent"); v != nil || err != nil {
		t.Errorf("Meta(absent) = %q, %v; want nil, nil", v, err)
	}
	val := []byte("config-hash")
	if err := s.SetMeta("config", val); err != nil {
		t.Fatal(err)
	}
	val[0] = 'X' // the store kept its own copy
	if v, _ := s.Meta("config"); string(v) != "config-hash" {
		t.Errorf("Meta(config) = %q", v)
	}
	if err := s.SetMeta("empty", []byte{}); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Meta("empty"); v == nil || len(v) != 0 {
		t.Errorf("Meta(empty) = %#v, want empty non-nil", v)
	}
	if err := s.SetMeta("config", nil); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Meta("config"); v != nil {
		t.Errorf("Meta(config) after removal = %q, want nil", v)
	}
	if err := s.SetMeta("", []byte("x")); err == nil {
		t.Error("SetMeta with an empty key succeeded")
	}
	if s.Tick() != 0 {
		t.Errorf("SetMeta advanced the tick to %d", s.Tick())
	}
}

func TestChangeLogBounded(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true, LogSize: 10})
	put := func(tick int, n int) index.Batch {
		var b index.Batch
		for i := range n {
			b.Put = append(b.Put, file(fmt.Sprintf("/r/%02d", i), fmt.Sprint(tick)))
		}
		return b
	}
	for tick := 1; tick <= 3; tick++ {
		mustApply(t, s, put(tick, 3))
	}
	// Nine entries: nothing trimmed yet.
	if changes, complete, _ := s.Changes(0); !complete || len(changes) != 9 {
		t.Fatalf("Changes(0) = %d entries, complete %v; want 9, true", len(changes), complete)
	}
	mustApply(t, s, put(4, 3)) // twelve entries: the two oldest of tick 1 go

	tests := []struct {
		since    uint64
		complete bool
		n        int
	}{
		{0, false, 0},
		{1, true, 9},
		{3, true, 3},
		{4, true, 0},
		{5, false, 0}, // a clock from the future: another life
	}
	for _, tc := range tests {
		changes, complete, err := s.Changes(tc.since)
		if err != nil || complete != tc.complete || len(changes) != tc.n {
			t.Errorf("Changes(%d) = %d entries, complete %v, %v; want %d, %v", tc.since, len(changes), complete, err, tc.n, tc.complete)
		}
	}

	// A batch larger than the log: only its newest entries are kept, and
	// even the previous tick is no longer complete.
	tick := mustApply(t, s, put(5, 25))
	if changes, complete, _ := s.Changes(tick - 1); complete || changes != nil {
		t.Errorf("Changes(%d) after an oversize batch = %v, %v; want incomplete", tick-1, changes, complete)
	}
	if changes, complete, _ := s.Changes(tick); !complete || len(changes) != 0 {
		t.Errorf("Changes(%d) = %v, %v; want none, complete", tick, changes, complete)
	}
	// Exactly LogSize entries: the batch itself is complete.
	tick = mustApply(t, s, put(6, 10))
	if changes, complete, _ := s.Changes(tick - 1); !complete || len(changes) != 10 {
		t.Errorf("Changes(%d) after a batch of LogSize = %d entries, %v; want 10, complete", tick-1, len(changes), complete)
	}
	if _, complete, _ := s.Changes(tick - 2); complete {
		t.Errorf("Changes(%d) complete, want incomplete", tick-2)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	s, err := index.Open(path, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []index.File{file("/r/a", "a"), file("/r/b", "b")}
	tick := mustApply(t, s, index.Batch{Put: want})
	mustApply(t, s, index.Batch{Delete: []string{"/r/b"}})
	if err := s.SetMeta("roots", []byte("/r")); err != nil {
		t.Fatal(err)
	}
	instance := s.Instance()
	wantChanges, _, _ := s.Changes(0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = index.Open(path, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Warnings()) != 0 {
		t.Errorf("Warnings() = %q, want none", s.Warnings())
	}
	if s.Instance() != instance || s.Tick() != tick+1 {
		t.Errorf("Instance, Tick = %q, %d; want %q, %d", s.Instance(), s.Tick(), instance, tick+1)
	}
	got, ok, _ := s.Get("/r/a")
	if !ok || !reflect.DeepEqual(got, want[0]) {
		t.Errorf("Get(/r/a) = %+v, %v", got, ok)
	}
	if _, ok, _ := s.Get("/r/b"); ok {
		t.Error("deleted /r/b is back")
	}
	if m, _ := s.Meta("roots"); string(m) != "/r" {
		t.Errorf("Meta(roots) = %q", m)
	}
	if changes, complete, _ := s.Changes(0); !complete || !reflect.DeepEqual(changes, wantChanges) {
		t.Errorf("Changes(0) = %v, %v; want %v", changes, complete, wantChanges)
	}
	if n, _ := s.Len(); n != 1 {
		t.Errorf("Len() = %d, want 1", n)
	}
}

func TestClosed(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Apply(index.Batch{Put: []index.File{file("/r/a", "")}}); !errors.Is(err, index.ErrClosed) {
		t.Errorf("Apply after Close: %v, want ErrClosed", err)
	}
	if _, _, err := s.Get("/r/a"); !errors.Is(err, index.ErrClosed) {
		t.Errorf("Get after Close: %v, want ErrClosed", err)
	}
	if err := s.Walk("", func(index.File) error { return nil }); !errors.Is(err, index.ErrClosed) {
		t.Errorf("Walk after Close: %v, want ErrClosed", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true, LogSize: 50})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				f := file(fmt.Sprintf("/r/w%d/%03d", w, i%10), fmt.Sprint(i))
				if _, err := s.Apply(index.Batch{Put: []index.File{f}}); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			for range 50 {
				if err := s.Walk("/r", func(index.File) error { return nil }); err != nil {
					errs <- err
					return
				}
				if _, _, err := s.Changes(s.Tick()); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s.Tick() != 200 {
		t.Errorf("Tick() = %d, want 200", s.Tick())
	}
}

// TestApplyTick logs a batch under the caller's tick, and refuses one that
// is not above the current tick.
func TestApplyTick(t *testing.T) {
	s, _ := openStore(t, index.Options{})
	put := func(p string) index.File { return index.File{Path: p, Root: "/r", Size: 1} }
	tick, err := s.Apply(index.Batch{Put: []index.File{put("/r/a")}, Tick: 7})
	if err != nil || tick != 7 {
		t.Fatalf("Apply with tick 7 = %d, %v", tick, err)
	}
	changes, complete, err := s.Changes(6)
	if err != nil || !complete || len(changes) != 1 || changes[0].Tick != 7 {
		t.Fatalf("Changes(6) = %v, %v, %v", changes, complete, err)
	}
	if _, err := s.Apply(index.Batch{Put: []index.File{put("/r/b")}, Tick: 6}); !errors.Is(err, index.ErrTickOrder) {
		t.Fatalf("Apply with tick 6: %v, want ErrTickOrder", err)
	}
	// One tick may be written in several batches.
	if tick, err := s.Apply(index.Batch{Put: []index.File{put("/r/b")}, Tick: 7}); err != nil || tick != 7 {
		t.Fatalf("Apply with tick 7 again = %d, %v", tick, err)
	}
	if changes, _, _ := s.Changes(6); len(changes) != 2 {
		t.Fatalf("Changes(6) after two batches of tick 7 = %v", changes)
	}
	if tick, err := s.Apply(index.Batch{Put: []index.File{put("/r/c")}}); err != nil || tick != 8 {
		t.Fatalf("Apply without a tick = %d, %v; want 8", tick, err)
	}
	var paths []string
	if err := s.Paths(func(p string) error { paths = append(paths, p); return nil }); err != nil ||
		strings.Join(paths, " ") != "/r/a /r/b /r/c" {
		t.Fatalf("Paths = %v, %v", paths, err)
	}
}

// TestAbsent: the paths of the records a sorted list is without, in byte
// order, whatever else the list holds.
func TestAbsent(t *testing.T) {
	s, _ := openStore(t, index.Options{NoSync: true})
	var files []index.File
	for _, p := range []string{"/r/a.md", "/r/b.md", "/r/b/c.md", "/r/d.md", "/s/e.md"} {
		files = append(files, file(p, p))
	}
	mustApply(t, s, index.Batch{Put: files})
	for _, tc := range []struct {
		keep []string
		want string
	}{
		{nil, "/r/a.md /r/b.md /r/b/c.md /r/d.md /s/e.md"},
		{[]string{"/r/a.md", "/r/b.md", "/r/b/c.md", "/r/d.md", "/s/e.md"}, ""},
		{[]string{"/a", "/r/b.md", "/r/c.md", "/s/e.md", "/t"}, "/r/a.md /r/b/c.md /r/d.md"},
		{[]string{"/r/d.md"}, "/r/a.md /r/b.md /r/b/c.md /s/e.md"},
	} {
		got, err := s.Absent(tc.keep)
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("Absent(%q) = %q, %v; want %q", tc.keep, got, err, tc.want)
		}
	}
}

// TestVerify: a sound index verifies; one record that does not decode is
// reported as ErrCorrupt, naming it.
func TestVerify(t *testing.T) {
	s, path := openStore(t, index.Options{NoSync: true})
	mustApply(t, s, index.Batch{Put: []index.File{file("/r/a.md", "a"), file("/r/b.md", "b")}})
	if err := s.Verify(); err != nil {
		t.Fatalf("Verify of a sound index: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	withBolt(t, path, func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("files")).Put([]byte("/r/b.md"), []byte{0x01})
	})
	s, err := index.Open(path, index.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Verify(); !errors.Is(err, index.ErrCorrupt) || !strings.Contains(err.Error(), "/r/b.md") {
		t.Errorf("Verify of a damaged record = %v; want ErrCorrupt naming /r/b.md", err)
	}
}
