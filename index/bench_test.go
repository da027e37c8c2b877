package index_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/index"
)

// benchRoot is the user collection root of the benchmark tree.
const benchRoot = "/home/user/.amplifier/collections"

// benchFiles returns n records shaped like a tree of collections with
// twelve files each and a 200-byte payload apiece.
func benchFiles(n int) []index.File {
	kinds := []string{"profiles/base", "profiles/dev", "agents/explorer", "agents/architect", "agents/bug-hunter",
		"context/overview", "context/guides/style", "context/guides/testing", "scenario-tools/tool/README", "modules/mod/README",
		"README", "pyproject"}
	files := make([]index.File, n)
	payload := make([]byte, 200)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	for i := range files {
		path := fmt.Sprintf("%s/collection-%05d/%s.md", benchRoot, i/len(kinds), kinds[i%len(kinds)])
		files[i] = index.File{
			Path:    path,
			Size:    int64(1000 + i%5000),
			ModTime: 1_700_000_000_000_000_000 + int64(i)*1_000_003,
			Inode:   uint64(1_000_000 + i),
			Mode:    0o644,
			Hash:    sha256.Sum256([]byte(path)),
			Root:    benchRoot,
			Data:    payload,
		}
	}
	return files
}

func benchStore(b *testing.B, opts index.Options) *index.Store {
	b.Helper()
	s, err := index.Open(filepath.Join(b.TempDir(), "index.db"), opts)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// closeAndReport closes s and reports the size of its file and of the data
// in it; the file grows in steps, so it is the larger.
func closeAndReport(b *testing.B, s *index.Store) {
	b.Helper()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	info, err := os.Stat(s.Path())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(info.Size()), "file-bytes")
	b.ReportMetric(float64(highWater(b, s.Path())), "data-bytes")
}

// BenchmarkApply120k indexes 120,000 files into an empty store in one batch.
func BenchmarkApply120k(b *testing.B) {
	files := benchFiles(120_000)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s := benchStore(b, index.Options{})
		b.StartTimer()
		if _, err := s.Apply(index.Batch{Put: files}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		closeAndReport(b, s)
		b.StartTimer()
	}
}

// BenchmarkApply100x1200 indexes the same 120,000 files in 100 batches of
// 1,200, each one committed and synced.
func BenchmarkApply100x1200(b *testing.B) {
	files := benchFiles(120_000)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s := benchStore(b, index.Options{})
		b.StartTimer()
		for i := 0; i < len(files); i += 1200 {
			if _, err := s.Apply(index.Batch{Put: files[i : i+1200]}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		closeAndReport(b, s)
		b.StartTimer()
	}
}

// BenchmarkApplyUnchanged re-applies 120,000 unchanged records, as a
// restart that finds nothing changed would.
func BenchmarkApplyUnchanged(b *testing.B) {
	files := benchFiles(120_000)
	s := benchStore(b, index.Options{})
	defer s.Close()
	if _, err := s.Apply(index.Batch{Put: files}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Apply(index.Batch{Put: files}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplySave changes one file of 120,000, as a save does.
func BenchmarkApplySave(b *testing.B) {
	files := benchFiles(120_000)
	s := benchStore(b, index.Options{})
	defer s.Close()
	if _, err := s.Apply(index.Batch{Put: files}); err != nil {
		b.Fatal(err)
	}
	f := files[len(files)/2]
	b.ReportAllocs()
	for b.Loop() {
		f.ModTime++
		if _, err := s.Apply(index.Batch{Put: []index.File{f}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWalk120k reads back all 120,000 records.
func BenchmarkWalk120k(b *testing.B) {
	s := benchStore(b, index.Options{NoSync: true})
	defer s.Close()
	if _, err := s.Apply(index.Batch{Put: benchFiles(120_000)}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := s.Walk("", func(index.File) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != 120_000 {
			b.Fatalf("walked %d records", n)
		}
	}
}

// BenchmarkGet looks up one record among 120,000.
func BenchmarkGet(b *testing.B) {
	files := benchFiles(120_000)
	s := benchStore(b, index.Options{NoSync: true})
	defer s.Close()
	if _, err := s.Apply(index.Batch{Put: files}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok, err := s.Get(files[i%len(files)].Path); !ok || err != nil {
			b.Fatal(ok, err)
		}
		i += 7919
	}
}

// BenchmarkOpen reopens a store of 120,000 records, as a daemon restart
// does before it walks them.
func BenchmarkOpen(b *testing.B) {
	s := benchStore(b, index.Options{NoSync: true})
	if _, err := s.Apply(index.Batch{Put: benchFiles(120_000)}); err != nil {
		b.Fatal(err)
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s, err := index.Open(path, index.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
