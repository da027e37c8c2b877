package catalog_test

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/amplidex/amplidex/discovery/catalog"
)

// TestInventoryHashesItsFields: Inventory is the hash of its fields, each
// ended by a zero byte, however they are buffered: an index of the last
// run keeps its value, and a change of the value would throw away the
// results it keeps.
func TestInventoryHashesItsFields(t *testing.T) {
	base := t.TempDir()
	tr := &tree{t: t, r: rand.New(rand.NewPCG(21, 21)), home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj")}
	for kind := range 2 {
		for i := range 60 {
			tr.collection(filepath.Join(tr.root(kind), fmt.Sprintf("collection-with-a-long-name-%03d", i)))
		}
	}
	st, _ := catalog.New(catalog.Options{Home: tr.home}).AddProject(tr.proj)
	v, _ := st.View(tr.proj)
	var stream []byte
	field := func(s string) { stream = append(append(stream, s...), 0) }
	for _, r := range v.Set.Roots {
		field(string(r.Kind))
		field(r.Path)
	}
	for _, c := range v.Set.Collections() {
		field("\x01")
		for _, s := range []string{c.Dir, c.RealDir, c.Base, c.Name, c.Version, string(c.Layout), c.Pyproject, strconv.FormatBool(c.Valid), c.Problem, c.Degraded} {
			field(s)
		}
		for _, r := range c.Resources {
			field(string(r.Kind))
			field(r.Path)
		}
		for _, p := range c.Files() {
			field(p)
		}
	}
	if len(stream) < 64<<10 {
		t.Fatalf("the fields take %d bytes: too few to fill the buffer twice", len(stream))
	}
	if got, want := catalog.Inventory(v.Set), sha256.Sum256(stream); got != want {
		t.Errorf("Inventory = %x, want the hash of its fields %x", got, want)
	}
}
