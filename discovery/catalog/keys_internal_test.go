package catalog

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/amplidex/amplidex/discovery"
)

// TestRootKeysShareTheCollectionsDir: a catalog whose loader keeps brief
// Facts keeps its collections (see discovery.Collection.Keep), and the
// key a root keeps a collection under is the collection's own Dir, not a
// second copy of its path made by the root's listing.
func TestRootKeysShareTheCollectionsDir(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".amplifier", "collections", "team")
	if err := os.MkdirAll(filepath.Join(dir, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"pyproject.toml":   "[project]\nname = \"team\"\nversion = \"1.0.0\"\ndescription = \"Team\"\n",
		"agents/helper.md": "---\nmeta:\n  name: helper\n  description: Helps\n---\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	details := func(string) *discovery.Facts { return nil }
	c := New(Options{Home: home, Loader: &discovery.Loader{Details: details}})
	c.AddProject("")
	c.mu.Lock()
	defer c.mu.Unlock()
	found := 0
	for _, rs := range c.roots {
		for key, e := range rs.cols.All() {
			if e.c == nil {
				continue
			}
			found++
			if key != e.c.Dir || reflect.ValueOf(key).Pointer() != reflect.ValueOf(e.c.Dir).Pointer() {
				t.Errorf("the root keeps %q under a copy of its path %q", e.c.Dir, key)
			}
			// The collection was kept (see discovery.Collection.Keep): its
			// directory is a part of its pyproject.toml's path.
			if reflect.ValueOf(e.c.Dir).Pointer() != reflect.ValueOf(e.c.Pyproject).Pointer() {
				t.Errorf("the catalog did not keep the collection at %s in objects of its own", e.c.Dir)
			}
		}
	}
	if found != 1 {
		t.Fatalf("%d collections held, want 1", found)
	}
}
