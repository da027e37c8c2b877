package resolve

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/amplidex/amplidex/discovery"
)

// TestSetKeysAndListsInOneObject: the keys NewSet orders a root's
// collections by are parts of one string, and its lists by name parts of
// one slice, with the values they had.
func TestSetKeysAndListsInOneObject(t *testing.T) {
	a := &discovery.Collection{Name: "a", Dir: "/r/a", Layout: discovery.LayoutFlat}
	b := &discovery.Collection{Name: "b", Dir: "/r/b", Layout: discovery.LayoutNested}
	c := &discovery.Collection{Name: "a", Dir: "/r/c/d", Layout: discovery.LayoutFlat}
	group := []*discovery.Collection{a, b, c}

	keyed := inRootKeys(group)
	want := map[string]*discovery.Collection{}
	for _, col := range group {
		want[inRootKey(col)] = col
	}
	if !reflect.DeepEqual(keyed, want) {
		t.Fatalf("keys %q, want %q", slices.Collect(maps.Keys(keyed)), slices.Collect(maps.Keys(want)))
	}
	lo, hi, size := uintptr(math.MaxUint64), uintptr(0), 0
	for k := range keyed {
		p := reflect.ValueOf(k).Pointer()
		lo, hi, size = min(lo, p), max(hi, p+uintptr(len(k))), size+len(k)
	}
	if hi-lo != uintptr(size) {
		t.Errorf("the keys span %d bytes, want the %d of one string", hi-lo, size)
	}

	lists := map[string][]*discovery.Collection{}
	for _, col := range group {
		lists[col.Name] = append(lists[col.Name], col)
	}
	wantLists := maps.Clone(lists)
	packLists(lists)
	if !reflect.DeepEqual(lists, wantLists) {
		t.Fatalf("lists %v, want %v", lists, wantLists)
	}
	lo, hi, n := uintptr(math.MaxUint64), uintptr(0), 0
	ptr := reflect.TypeFor[*discovery.Collection]().Size()
	for _, l := range lists {
		p := reflect.ValueOf(l).Pointer()
		lo, hi, n = min(lo, p), max(hi, p+uintptr(len(l))*ptr), n+len(l)
		if cap(l) != len(l) {
			t.Errorf("a list of %d has room for %d: an append would write over the next", len(l), cap(l))
		}
	}
	if hi-lo != uintptr(n)*ptr {
		t.Errorf("the lists span %d bytes, want the %d of one slice", hi-lo, uintptr(n)*ptr)
	}
}
