package catalog

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
)

// TestPackNames: the dependency names a View keeps end up in one string,
// each distinct name once, and their lists parts of one slice, with the
// values they had.
func TestPackNames(t *testing.T) {
	lists := [][]string{
		{"foundation", "agent:helper"},
		nil,
		{"agent:helper"},
		{},
		{"", "design-intelligence", "foundation"},
	}
	for _, l := range lists {
		for i, n := range l {
			l[i] = strings.Clone(n) // an object each, as checked or decoded
		}
	}
	want := make([][]string, len(lists))
	for i, l := range lists {
		want[i] = slices.Clone(l)
	}
	packNames(lists)
	if !reflect.DeepEqual(lists, want) {
		t.Fatalf("packed %q, want %q", lists, want)
	}

	at := map[string]uintptr{}
	lo, hi, size := uintptr(math.MaxUint64), uintptr(0), 0
	for _, l := range lists {
		if cap(l) != len(l) {
			t.Errorf("a list of %d has room for %d: an append would write over the next", len(l), cap(l))
		}
		for _, n := range l {
			if n == "" {
				continue
			}
			p := reflect.ValueOf(n).Pointer()
			if q, ok := at[n]; ok && q != p {
				t.Errorf("%q is kept twice", n)
			} else if !ok {
				at[n] = p
				size += len(n)
				lo, hi = min(lo, p), max(hi, p+uintptr(len(n)))
			}
		}
	}
	if hi-lo != uintptr(size) {
		t.Errorf("the names span %d bytes, want the %d of one string", hi-lo, size)
	}
	if span, want := listsSpan(lists); span != want {
		t.Errorf("the lists span %d bytes, want the %d of one slice", span, want)
	}
}

// TestViewPacksItsNames: a View built by checking keeps its collections'
// dependency names packed (see packNames).
func TestViewPacksItsNames(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, ".amplifier", "collections")
	for _, name := range []string{"a", "b", "c"} {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Join(dir, "profiles"), 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{
			"pyproject.toml":  "[project]\nname = \"" + name + "\"\nversion = \"1.0.0\"\ndescription = \"x\"\n",
			"profiles/dev.md": "---\nprofile:\n  name: dev\n  version: 1.0.0\n  description: Dev\nagents:\n  - helper\n  - foundation:explorer\n---\n",
		}
		for f, text := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, _ := New(Options{Home: home, Loader: &discovery.Loader{}}).AddProject("")
	v, ok := st.View("")
	if !ok {
		t.Fatal("no view")
	}
	var lists [][]string
	for _, l := range v.deps.All() {
		lists = append(lists, l)
	}
	if len(lists) != 3 {
		t.Fatalf("%d collections with dependencies, want 3: %q", len(lists), lists)
	}
	if span, want := listsSpan(lists); span != want {
		t.Errorf("the lists span %d bytes, want the %d of one slice", span, want)
	}
}

// listsSpan returns how many bytes of memory lists span, from the first
// list's start to the last one's end, and how many they hold.
func listsSpan(lists [][]string) (span, held uintptr) {
	lo, hi := uintptr(math.MaxUint64), uintptr(0)
	size := reflect.TypeFor[string]().Size()
	for _, l := range lists {
		if len(l) > 0 {
			p := reflect.ValueOf(l).Pointer()
			lo, hi = min(lo, p), max(hi, p+uintptr(len(l))*size)
		}
		held += uintptr(len(l)) * size
	}
	return hi - lo, held
}
