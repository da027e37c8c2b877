package index_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/amplidex/amplidex/index"
)

// FuzzDecodeFile feeds arbitrary keys and values to the record decoder: it
// must never panic, and whatever it accepts must survive a re-encoding.
func FuzzDecodeFile(f *testing.F) {
	for _, rec := range []index.File{
		file("/r/c/agents/a.md", "payload"),
		{Path: "/r/c/modules", Mode: 1<<31 | 0o755, Root: "/r"},
		{Path: "/w/x.md", Size: -1, ModTime: -1, Inode: 1 << 63, Root: "/home/u/.amplifier/collections", Data: []byte{0}},
		{Path: "/r/c/profiles/p.md", Size: 7, ModTime: 1, Ctime: 1_700_000_000_123_456_789, Mode: 0o644, Root: "/r"},
		{Path: "/r/x", Ctime: math.MinInt64, ModTime: math.MaxInt64, Data: []byte("d")},
	} {
		f.Add([]byte(rec.Path), index.EncodeFile(rec))
	}
	f.Fuzz(func(t *testing.T, key, val []byte) {
		got, err := index.DecodeFile(key, val)
		if err != nil {
			return
		}
		again, err := index.DecodeFile(key, index.EncodeFile(got))
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if !reflect.DeepEqual(again, got) {
			t.Fatalf("re-encoded record decodes to\n%+v\nwant\n%+v", again, got)
		}
	})
}
