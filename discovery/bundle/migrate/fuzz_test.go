package migrate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/bundle/migrate"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// apply applies the hunks of a unified diff (no file headers) to a; it
// fails on a hunk whose header does not count its lines, or whose
// removed and kept lines are not a's.
func apply(a []string, diff string) ([]string, error) {
	var out []string
	next := 0 // the next line of a not yet copied
	lines := strings.SplitAfter(diff, "\n")
	for i := 0; i < len(lines) && lines[i] != ""; {
		h := lines[i]
		var oldStart, oc, nc int
		if !strings.HasPrefix(h, "@@ -") {
			return nil, fmt.Errorf("line %d: %q is no hunk header", i, h)
		}
		parts := strings.Fields(h)
		parse := func(s string) (int, int) {
			start, count, ok := strings.Cut(s[1:], ",")
			st, _ := strconv.Atoi(start)
			c := 1
			if ok {
				c, _ = strconv.Atoi(count)
			}
			return st, c
		}
		oldStart, oc = parse(parts[1])
		_, nc = parse(parts[2])
		from := oldStart - 1
		if oc == 0 {
			from = oldStart
		}
		if from < next {
			return nil, fmt.Errorf("hunk %q overlaps", h)
		}
		out = append(out, a[next:from]...)
		next = from
		i++
		gotOld, gotNew := 0, 0
		for i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			i++
			text := l[1:]
			if i < len(lines) && lines[i] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if next >= len(a) || a[next] != text {
					return nil, fmt.Errorf("hunk %q: line %d is %q, not %q", h, next, a[min(next, len(a)-1)], text)
				}
				next++
				gotOld++
				if l[0] == ' ' {
					out = append(out, text)
					gotNew++
				}
			case '+':
				out = append(out, text)
				gotNew++
			default:
				return nil, fmt.Errorf("hunk %q: line %q", h, l)
			}
		}
		if gotOld != oc || gotNew != nc {
			return nil, fmt.Errorf("hunk %q counts %d,%d; holds %d,%d", h, oc, nc, gotOld, gotNew)
		}
	}
	return append(out, a[next:]...), nil
}

// FuzzDiff: the diff between any two texts, applied to the first, gives
// the second.
func FuzzDiff(f *testing.F) {
	for _, s := range [][2]string{
		{"a\nb\nc\n", "a\nc\n"}, {"", "x\n"}, {"x\n", ""}, {"a\nb", "a\nb\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\nX\n4\n5\n6\n7\n8\nY\n10\n"},
		{"same\n", "same\n"}, {"a\na\na\n", "a\nb\na\n"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		al, bl := migrate.Lines([]byte(a)), migrate.Lines([]byte(b))
		d := migrate.Unified(al, bl)
		if a == b && d != "" {
			t.Fatalf("a diff of equal texts: %q", d)
		}
		got, err := apply(al, d)
		if err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
		if strings.Join(got, "") != b {
			t.Fatalf("applied: %q, want %q\n%s", strings.Join(got, ""), b, d)
		}
	})
}

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
