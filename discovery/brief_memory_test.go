package discovery_test

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/schema"
)

// TestBriefHoldsNoFileText keeps the brief Facts of many profiles whose
// front matter is large, and checks that they do not keep that text alive
// (a name that is a part of the whole text would).
func TestBriefHoldsNoFileText(t *testing.T) {
	const files, big = 200, 64 << 10
	filler := strings.Repeat("x", big)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make([]*discovery.Facts, files)
	for i := range kept {
		src := fmt.Sprintf("---\nprofile:\n  name: p%d\n  version: 1.0.0\n  description: Profile %d\n  extends: base:root\nagents: [a, b]\nnotes: %s\n---\nBody\n", i, i, filler)
		kept[i] = discovery.AnalyzeFile("/c/profiles/p.md", []byte(src), discovery.KindProfile, schema.Options{}).Brief()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if limit := int64(files * big / 10); grew > limit {
		t.Errorf("%d brief Facts hold %d bytes of heap, more than %d: they keep their files' text", files, grew, limit)
	}
	if kept[7].Name != "p7" || kept[7].Extends.Value != "base:root" || len(kept[7].Agents) != 2 {
		t.Errorf("brief Facts = %+v", kept[7])
	}
}

// TestFactsSize: a daemon keeps one Facts for each of tens of thousands
// of files (96,000 at 10,000 collections); its private fields are packed
// so that it stays at 216 bytes, 40 less than when they were laid out one
// word each. A field added to Facts shows here.
func TestFactsSize(t *testing.T) {
	if size := reflect.TypeFor[discovery.Facts]().Size(); size > 216 {
		t.Errorf("Facts takes %d bytes, more than 216", size)
	}
}
