package migrate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/bundle/migrate"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// FuzzManifest reads any MIGRATION.md: no panic, and what it accepts
// names only paths inside a directory.
func FuzzManifest(f *testing.F) {
	f.Add("# M\n\n<!-- amplidex migrate tools\n" + strings.Repeat("a", 64) + " bundle.md\n-->\n")
	f.Add("<!-- amplidex migrate x\n-->\n")
	f.Add("\n<!-- amplidex migrate x\n" + strings.Repeat("0", 64) + " ../etc/passwd\n-->\n")
	f.Add("\n<!-- amplidex migrate \n-->")
	f.Fuzz(func(t *testing.T, src string) {
		coll, files, ok := migrate.ParseManifest([]byte(src))
		if !ok {
			return
		}
		if coll == "" {
			t.Fatal("a record of no collection")
		}
		for p, h := range files {
			if len(h) != 64 || p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") && strings.Contains("/"+p+"/", "/../") {
				t.Fatalf("accepted %q %q", h, p)
			}
		}
	})
}

// FuzzMigrate migrates a collection of one profile and one agent of any
// bytes: no error but for a profile named, no panic, and the front matter
// of every bundle file it makes is YAML.
func FuzzMigrate(f *testing.F) {
	for _, s := range [][2]string{
		{"---\nprofile:\n  name: p\n  extends: foundation:base\nagents: all\n---\nBody @c:profiles/p.md.\n", "---\nname: a\ndescription: d\n---\n"},
		{"---\nprofile: {extends: [x]}\nsession: 3\ntools: {a: 1}\nagents: {dirs: agents, inline: [1]}\n---\n", "# no front matter\n"},
		{"---\na: &x {b: *x}\n---\n", "---\nmeta: 3\nname: [1]\n---\n"},
		{"---\nprofile:\n  extends: \"c:p\"\nsession:\n  orchestrator: {config: {}}\ntools:\n  - module: m\n    source: ./x/../../y\n---\n", "---\n- a\n---\n"},
		{"---\r\nprofile:\r\n  name: p\r\n---\r\n@c:context/x.md:\r\n", "---\nmeta:\n  name: a\n  description: \"\"\n  extra: 1\n---\n"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, profile, agent string) {
		dir := filepath.Join(t.TempDir(), "c")
		for p, data := range map[string]string{
			"pyproject.toml":   "[project]\nname = \"c\"\nversion = \"1.0.0\"\ndescription = \"d\"\n",
			"profiles/p.md":    profile,
			"agents/a.md":      agent,
			"context/x.md":     "x",
			"modules/m/m.py":   "",
			"profiles/base.md": "---\nprofile:\n  name: base\n---\n",
		} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		col := (&discovery.Loader{}).Load(discovery.Root{Kind: discovery.RootArgument, Path: filepath.Dir(dir)}, dir)
		res, err := migrate.Migrate(col, migrate.Options{Profiles: []string{"p"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range res.Files {
			var text string
			switch {
			case strings.HasPrefix(file.Path, "behaviors/"):
				text = string(file.Data)
			case file.Path == "bundle.md" || strings.HasPrefix(file.Path, "bundles/"):
				fm, err := syntax.SplitFrontMatter(file.Data)
				if err != nil {
					t.Fatalf("%s: %v\n%s", file.Path, err, file.Data)
				}
				text = string(file.Data[fm.Start:fm.End])
			default:
				continue
			}
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(text), &n); err != nil {
				t.Fatalf("%s: %v\n%s", file.Path, err, text)
			}
		}
	})
}
