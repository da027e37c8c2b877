package catalog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
)

// writeTree writes n collections into the user root of home: a base
// collection and n-1 that extend it, mention it and list its agents.
func writeTree(tb testing.TB, home string, n int) string {
	tb.Helper()
	root := filepath.Join(home, ".amplifier", "collections")
	files := map[string]string{}
	files["base/pyproject.toml"] = "[project]\nname = \"base\"\nversion = \"1.0.0\"\ndescription = \"Base\"\n"
	files["base/profiles/root.md"] = "---\nprofile:\n  name: root\n  version: 1.0.0\n  description: Root\nsession:\n  orchestrator:\n    module: loop\n  context:\n    module: ctx\n---\n"
	files["base/agents/helper.md"] = "---\nmeta:\n  name: helper\n  description: Helps\n---\n"
	files["base/context/guide.md"] = "A guide.\n"
	for i := 1; i < n; i++ {
		c := fmt.Sprintf("c%05d", i)
		files[c+"/pyproject.toml"] = fmt.Sprintf("[project]\nname = %q\nversion = \"1.0.0\"\ndescription = \"Collection %d\"\n\n[tool.amplifier.collection.requires]\nbase = \"^1.0.0\"\n", c, i)
		files[c+"/profiles/dev.md"] = "---\nprofile:\n  name: dev\n  version: 1.0.0\n  description: Dev\n  extends: base:root\nagents:\n  - helper\n  - " + c + ":local\n---\nSee @base:context/guide.md\n"
		files[c+"/agents/local.md"] = "---\nmeta:\n  name: local\n  description: Local\n---\nUses @" + c + ":context/notes.md\n"
		files[c+"/context/notes.md"] = "Notes, see @base:context/guide.md\n"
	}
	for rel, text := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

// BenchmarkOneSave measures what one saved profile costs the catalog at
// 100, 1,000 and 10,000 collections: the collection is read again, its
// names resolved again and the collections that refer to it checked
// again, a subscriber's diagnostics gathered, and a query's for the saved
// file answered. The figure must stay flat as the collections grow.
func BenchmarkOneSave(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			home := b.TempDir()
			root := writeTree(b, home, n)
			cat := catalog.New(catalog.Options{Home: home, Loader: &discovery.Loader{}})
			cat.AddProject("")
			dir := filepath.Join(root, "c00042")
			if n < 100 {
				dir = filepath.Join(root, "c00001")
			}
			profile := filepath.Join(dir, "profiles", "dev.md")
			src, err := os.ReadFile(profile)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				if err := os.WriteFile(profile, fmt.Appendf(src, "\nEdit %d.\n", i), 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				st, d := cat.Update(catalog.Change{Root: root, Dir: dir})
				// What a subscriber then does: the diagnostics of each
				// collection that may have changed.
				v, _ := st.View("")
				for _, dir := range d.Views[""].Dirs {
					if c := v.Set.At(dir); c != nil {
						_ = v.CollectionDiagnostics(c)
					}
				}
				// What a query for the saved file then asks.
				if len(v.DiagnosticsUnder(profile)) != 0 {
					b.Fatal("the saved profile has diagnostics")
				}
			}
		})
	}
}
