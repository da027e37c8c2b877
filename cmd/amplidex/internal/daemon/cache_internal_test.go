package daemon

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/index"
)

// cacheWithAgent opens an index in a temporary directory, a file cache
// over it, and writes an agent of src there: the store (closed when the
// test ends), the cache, its view for the default schema, the agent's
// path and its stat.
func cacheWithAgent(t *testing.T, src []byte) (*index.Store, *fileCache, schemaCache, string, os.FileInfo) {
	t.Helper()
	dir := t.TempDir()
	store, err := index.Open(filepath.Join(dir, "index.db"), index.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	fc := newFileCache(store, slog.New(slog.DiscardHandler))
	path := filepath.Join(dir, "agents", "a.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return store, fc, fc.forSchema(schema.Options{}), path, fi
}

// TestGoneRecordIsNotTrusted drops a file whose record is in the index
// (its root went away) and finds it again before the deletion is
// written: the record must not be trusted, or the deletion written next
// leaves the collection with brief Facts whose details are gone.
func TestGoneRecordIsNotTrusted(t *testing.T) {
	src := []byte("---\nmeta:\n  name: a\n---\nBody\n") // lacks meta.description
	store, _, c, path, fi := cacheWithAgent(t, src)
	analyze := func() *discovery.Facts {
		return discovery.AnalyzeFile(path, src, discovery.KindAgent, schema.Options{})
	}
	c.Analyze(path, fi, src, discovery.KindAgent, analyze)
	c.commit([]string{path}, nil)
	puts := c.takeQueue(10)
	if _, err := store.Apply(index.Batch{Put: puts}); err != nil {
		t.Fatal(err)
	}
	c.written(puts)
	if _, ok := c.Lookup(path, fi, discovery.KindAgent); !ok {
		t.Fatal("a written record is not found")
	}
	c.commit(nil, []string{path}) // its root went away
	if _, ok := c.Lookup(path, fi, discovery.KindAgent); ok {
		t.Fatal("a record whose deletion is pending is trusted")
	}
	c.Analyze(path, fi, src, discovery.KindAgent, analyze)
	c.commit([]string{path}, nil) // found again
	if _, err := store.Apply(index.Batch{Delete: []string{path}}); err != nil {
		t.Fatal(err)
	}
	c.deleted([]string{path})
	if f := c.details(path); f == nil || len(f.Diagnostics) == 0 {
		t.Fatalf("once the deletion is written, the file found again has no details: %+v", f)
	}
}

// TestFreshIndexNotAsked: in a first scan over an empty index, Lookup
// takes nothing from the index, where only the scan's own records can be
// (a file read twice is read again), while the checks still find every
// record there; after the scan, Lookup finds it as before.
func TestFreshIndexNotAsked(t *testing.T) {
	src := []byte("---\nmeta:\n  name: a\n---\nSee @b:context/x.md\n")
	store, fc, c, path, fi := cacheWithAgent(t, src)
	fc.writeDirect(true, func() {})
	c.Analyze(path, fi, src, discovery.KindAgent, func() *discovery.Facts {
		return discovery.AnalyzeFile(path, src, discovery.KindAgent, schema.Options{})
	})
	puts := c.takeQueue(10)
	if len(puts) != 1 {
		t.Fatalf("%d records queued, want 1", len(puts))
	}
	if _, err := store.Apply(index.Batch{Put: puts}); err != nil {
		t.Fatal(err)
	}
	c.written(puts)
	if _, ok := c.Lookup(path, fi, discovery.KindAgent); ok {
		t.Error("a fresh first scan took a record from the index")
	}
	if ms, ok := c.mentions(path); !ok || len(ms) == 0 {
		t.Errorf("a fresh first scan's checks do not find the mentions of a written record: %v, %v", ms, ok)
	}
	fc.writeDirect(false, nil)
	if _, ok := c.Lookup(path, fi, discovery.KindAgent); !ok {
		t.Error("after the first scan, a written record is not found")
	}
	// A first scan over an index with records asks it.
	fc.writeDirect(true, func() {})
	defer fc.writeDirect(false, nil)
	if _, ok := c.Lookup(path, fi, discovery.KindAgent); !ok {
		t.Error("a first scan over an index with records does not find them")
	}
}
