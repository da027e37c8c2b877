package daemon

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestPackDeps: the names the last run's checks left, as decoded one
// object each, end up parts of one string, and their lists parts of one
// slice, with the same values.
func TestPackDeps(t *testing.T) {
	deps := map[string][]string{
		"/r/a": {"foundation", "developer-expertise"},
		"/r/b": {"a"},
		"/r/c": {},
		"/r/d": nil,
		"/r/e": {"", "design-intelligence", "a"},
	}
	for _, list := range deps {
		for i, n := range list {
			list[i] = strings.Clone(n) // an object each, as decoded
		}
	}
	want := maps.Clone(deps)
	for dir, list := range want {
		want[dir] = slices.Clone(list)
	}
	packDeps(deps)
	if !reflect.DeepEqual(deps, want) {
		t.Fatalf("packed %q, want %q", deps, want)
	}

	// The names lie in one run of memory as long as their bytes together.
	lo, hi, size := uintptr(math.MaxUint64), uintptr(0), 0
	// The lists lie in one run of memory as long as the names together.
	llo, lhi, count := uintptr(math.MaxUint64), uintptr(0), 0
	for _, list := range deps {
		if len(list) > 0 {
			p := uintptr(unsafe.Pointer(unsafe.SliceData(list)))
			llo, lhi = min(llo, p), max(lhi, p+uintptr(len(list))*unsafe.Sizeof(""))
		}
		count += len(list)
		for _, n := range list {
			size += len(n)
			if n == "" {
				continue
			}
			p := uintptr(unsafe.Pointer(unsafe.StringData(n)))
			lo, hi = min(lo, p), max(hi, p+uintptr(len(n)))
		}
	}
	if hi-lo != uintptr(size) {
		t.Errorf("the names span %d bytes, want the %d of one string", hi-lo, size)
	}
	if lhi-llo != uintptr(count)*unsafe.Sizeof("") {
		t.Errorf("the lists span %d bytes, want the %d of one slice", lhi-llo, uintptr(count)*unsafe.Sizeof(""))
	}
}
