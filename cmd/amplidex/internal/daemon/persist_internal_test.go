package daemon

import (
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/schema"
)

// TestScanEndGivesMemoryBack: the write that takes the first scan's last
// records gives the memory back however few they are, once; other small
// writes leave it to the trimmer.
func TestScanEndGivesMemoryBack(t *testing.T) {
	src := []byte("---\nmeta:\n  name: a\n  description: A\n---\nBody\n")
	store, fc, c, path, fi := cacheWithAgent(t, src)
	p := newPersister(store, fc.log, func(string) {})
	p.cache = fc
	frees := 0
	p.ended = func() { frees++ }
	analyze := func() *discovery.Facts {
		return discovery.AnalyzeFile(path, src, discovery.KindAgent, schema.Options{})
	}

	c.Analyze(path, fi, src, discovery.KindAgent, analyze)
	p.commit(1, []string{path}, nil)
	p.write()
	if frees != 0 {
		t.Fatalf("a write of one record gave memory back %d times", frees)
	}

	fc.writeDirect(true, func() {})
	c.Analyze(path, fi, append(src, '\n'), discovery.KindAgent, analyze)
	fc.writeDirect(false, nil)
	p.scanDone(2, nil)
	p.write()
	if frees != 1 {
		t.Fatalf("the write after the first scan ended gave memory back %d times, want 1", frees)
	}
	if n, err := store.Len(); err != nil || n != 1 {
		t.Fatalf("the index holds %d records (%v), want 1", n, err)
	}

	p.commit(3, nil, nil)
	p.write()
	if frees != 1 {
		t.Fatalf("a later small write gave memory back: %d times in all", frees)
	}
}
