package discovery_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/check"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
)

// writeSyntheticRoot writes n collections of about twelve files each: a
// pyproject.toml, two profiles (one extending another collection's), three
// agents, and six context files, some mentioning others.
func writeSyntheticRoot(b testing.TB, root string, n int) {
	b.Helper()
	w := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		name := "c" + strconv.Itoa(i)
		dir := filepath.Join(root, name)
		w(filepath.Join(dir, "pyproject.toml"), fmt.Sprintf("[project]\nname = %q\nversion = \"1.0.0\"\ndescription = \"C\"\n\n[tool.amplifier.collection.requires]\nc0 = \"^1.0.0\"\n", name))
		w(filepath.Join(dir, "profiles", "base.md"), "---\nprofile:\n  name: base\n  version: 1.0.0\n  description: B\nsession:\n  orchestrator:\n    module: loop-basic\n  context:\n    module: context-simple\ntools:\n  - module: tool-x\n    source: git+https://example.invalid/x@main\n---\n@"+name+":context/a.md\n")
		w(filepath.Join(dir, "profiles", "dev.md"), "---\nprofile:\n  name: dev\n  version: 1.0.0\n  description: D\n  extends: c0:base\nagents:\n  - a0\n  - a1\n---\n")
		for a := 0; a < 3; a++ {
			w(filepath.Join(dir, "agents", "a"+strconv.Itoa(a)+".md"), "---\nmeta:\n  name: a"+strconv.Itoa(a)+"\n  description: A\n---\nSee @"+name+":context/b/b.md\n")
		}
		for c := 0; c < 6; c++ {
			sub := ""
			if c%2 == 1 {
				sub = "b"
			}
			w(filepath.Join(dir, "context", sub, string(rune('a'+c))+".md"), "# Context\nSee @c0:context/a.md\n")
		}
	}
}

// BenchmarkPublish measures a View built from scratch over 10,000
// collections (1,000 with -short): resolve the set, check every
// cross-reference and gather the diagnostics. (What one save costs is
// BenchmarkOneSave in discovery/catalog.) The tree is written and
// loaded once, outside the measured loop.
func BenchmarkPublish(b *testing.B) {
	n := 10_000
	if testing.Short() {
		n = 1000
	}
	root := b.TempDir()
	writeSyntheticRoot(b, root, n)
	loader := &discovery.Loader{}
	r := discovery.Root{Kind: discovery.RootUser, Path: root}
	cols, err := loader.ScanRoot(r)
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("collections=%d", n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			set := resolve.NewSet([]discovery.Root{r}, [][]*discovery.Collection{cols})
			var ds []diag.Diagnostic
			for _, c := range set.Collections() {
				ds = append(ds, c.Diagnostics...)
			}
			ds = append(ds, check.All(set)...)
			diag.Sort(ds)
		}
	})
}

// BenchmarkColdScan measures what a cold check does with a root, on one
// goroutine: every collection listed and loaded, every file read and
// analyzed (ScanRoot), then the set resolved and every cross-reference
// checked. The root holds 2,000 synthetic collections (200 with -short);
// AMPLIDEX_BENCH_ROOT names an existing root to scan instead, such as the
// user root of a tree cmd/amplidex-bench generates:
//
//	go run ./cmd/amplidex-bench -collections 2000 -dir /tmp/t2k -keep -skip-watchman -samples 1
//	AMPLIDEX_BENCH_ROOT=/tmp/t2k/home/.amplifier/collections go test -run '^$' -bench ColdScan ./discovery/
func BenchmarkColdScan(b *testing.B) {
	root := os.Getenv("AMPLIDEX_BENCH_ROOT")
	if root == "" {
		n := 2000
		if testing.Short() {
			n = 200
		}
		root = b.TempDir()
		writeSyntheticRoot(b, root, n)
	}
	r := discovery.Root{Kind: discovery.RootUser, Path: root}
	b.ReportAllocs()
	var files, diags int
	for b.Loop() {
		cols, err := (&discovery.Loader{}).ScanRoot(r)
		if err != nil {
			b.Fatal(err)
		}
		set := resolve.NewSet([]discovery.Root{r}, [][]*discovery.Collection{cols})
		var ds []diag.Diagnostic
		files = 0
		for _, c := range set.Collections() {
			files += len(c.Facts)
			ds = append(ds, c.OwnDiagnostics()...)
		}
		ds = append(ds, check.All(set)...)
		diag.Sort(ds)
		diags = len(ds)
	}
	b.ReportMetric(float64(files), "files/op")
	b.ReportMetric(float64(diags), "diagnostics/op")
}

// BenchmarkAnalyze measures the analysis of every file of one kind of a
// root (pyproject.toml files under "pyproject"), the files read into
// memory beforehand, as a Loader analyzes the files it reads: parsing,
// schemas, mentions and suppressions, without the reads. The root is
// BenchmarkColdScan's.
func BenchmarkAnalyze(b *testing.B) {
	root := os.Getenv("AMPLIDEX_BENCH_ROOT")
	if root == "" {
		n := 2000
		if testing.Short() {
			n = 200
		}
		root = b.TempDir()
		writeSyntheticRoot(b, root, n)
	}
	cols, err := (&discovery.Loader{}).ScanRoot(discovery.Root{Kind: discovery.RootUser, Path: root})
	if err != nil {
		b.Fatal(err)
	}
	type file struct {
		path string
		src  []byte
		kind discovery.Kind
	}
	byKind := map[string][]file{}
	add := func(group, p string, k discovery.Kind) {
		src, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		byKind[group] = append(byKind[group], file{p, src, k})
	}
	for _, c := range cols {
		for p, f := range c.Facts {
			if f.Kind == "" {
				add("pyproject", p, "")
			}
		}
		for _, r := range c.Resources {
			switch r.Kind {
			case discovery.KindProfile, discovery.KindAgent, discovery.KindContext:
				add(string(r.Kind), r.Path, r.Kind)
			}
		}
	}
	for _, group := range []string{"pyproject", "profile", "agent", "context"} {
		files := byKind[group]
		b.Run(group, func(b *testing.B) {
			b.ReportAllocs()
			loader := &discovery.Loader{}
			cpu := processCPU()
			for b.Loop() {
				for _, f := range files {
					discovery.AnalyzeBytes(loader, f.path, f.src, f.kind)
				}
			}
			// CPU time, not wall time: the machine may be shared.
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N*len(files)), "cpu-ns/file")
			b.ReportMetric(float64(len(files)), "files")
		})
	}
}
