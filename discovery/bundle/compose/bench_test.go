package compose_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
)

// BenchmarkFoundation measures, in CPU time, check of amplifier-foundation
// (every file, every bundle composed, its includes from a runtime cache
// laid out from the corpus) and, where python3, PyYAML and the reference's
// source are found, the reference's load of foundation's bundle.md (the
// load alone: the interpreter's start and the imports left out).
func BenchmarkFoundation(b *testing.B) {
	corpus := corpusDir(b)
	home := b.TempDir()
	layoutCache(b, corpus, home)
	root := filepath.Join(corpus, "microsoft__amplifier-foundation")
	env := corpusEnv(home, filepath.Join(root, "bundle.md"))

	b.Run("amplidex-check", func(b *testing.B) {
		start := cpuTime(b)
		files := 0
		for b.Loop() {
			fs := &compose.DiskFiles{}
			res := check.Check(compose.Locate(env, fs), fs, root, check.Options{})
			files = res.FilesChecked()
		}
		b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N)/1e6, "cpu-ms/op")
		b.ReportMetric(float64(files), "files")
	})
	b.Run("amplidex-compose", func(b *testing.B) {
		start := cpuTime(b)
		for b.Loop() {
			fs := &compose.DiskFiles{}
			compose.Compose(compose.Locate(env, fs), fs, filepath.Join(root, "bundle.md"))
		}
		b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N)/1e6, "cpu-ms/op")
	})
	b.Run("reference-load", func(b *testing.B) {
		dir := referenceSource(b)
		const repeat = 5
		var cpu float64
		for b.Loop() {
			results, _ := runReference(b, dir, home, []string{filepath.Join(root, "bundle.md")}, repeat)
			cpu += results[0].CPUSeconds
		}
		b.ReportMetric(cpu/float64(b.N)*1e3, "cpu-ms/op")
	})
}

// memFiles is a daemon's file cache in small: every file of some trees
// read once, parses kept until the file is saved.
type memFiles struct {
	mu     sync.Mutex
	data   map[string][]byte
	dirs   map[string][]string
	parsed map[string]map[bundle.Kind]*bundle.File
}

func loadTrees(tb testing.TB, roots ...string) *memFiles {
	m := &memFiles{data: map[string][]byte{}, dirs: map[string][]string{}, parsed: map[string]map[bundle.Kind]*bundle.File{}}
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != root {
				d := filepath.Dir(p)
				m.dirs[d] = append(m.dirs[d], e.Name())
			}
			if e.IsDir() {
				if m.dirs[p] == nil {
					m.dirs[p] = []string{}
				}
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				tb.Fatal(err)
			}
			m.data[p] = b
			return nil
		})
	}
	for d := range m.dirs {
		sort.Strings(m.dirs[d])
	}
	return m
}

func (m *memFiles) Stat(p string) compose.Entry {
	if _, ok := m.data[p]; ok {
		return compose.RegularFile
	}
	if _, ok := m.dirs[p]; ok {
		return compose.Directory
	}
	return compose.Missing
}

func (m *memFiles) Parse(p string, k bundle.Kind) (*bundle.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f := m.parsed[p][k]; f != nil {
		return f, nil
	}
	src, ok := m.data[p]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	f := bundle.Parse(p, src, bundle.Options{Kind: k})
	if m.parsed[p] == nil {
		m.parsed[p] = map[bundle.Kind]*bundle.File{}
	}
	m.parsed[p][k] = f
	return f, nil
}

func (m *memFiles) List(dir string) ([]string, error) {
	if names, ok := m.dirs[dir]; ok {
		return names, nil
	}
	return nil, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrNotExist}
}

// save replaces a file's bytes and forgets its parses.
func (m *memFiles) save(p string, b []byte) {
	m.mu.Lock()
	m.data[p] = b
	delete(m.parsed, p)
	m.mu.Unlock()
}

// BenchmarkSave measures what one save of a behavior costs a daemon that
// keeps every file's parse and every bundle's composition: the
// compositions that read the behavior (found by a Graph) are composed
// again, from the kept parses of every other file. The bundles that do not
// include the behavior (0 to 2,000 repositories of their own) are not
// touched: the time must not grow with them.
func BenchmarkSave(b *testing.B) {
	corpus := corpusDir(b)
	home := b.TempDir()
	layoutCache(b, corpus, home)
	root := filepath.Join(corpus, "microsoft__amplifier-foundation")
	behavior := filepath.Join(root, "behaviors", "sessions.yaml")
	for _, others := range []int{0, 200, 2000} {
		b.Run(fmt.Sprintf("unrelated=%d", others), func(b *testing.B) {
			extra := b.TempDir()
			for i := range others {
				dir := filepath.Join(extra, fmt.Sprintf("repo%d", i))
				os.MkdirAll(filepath.Join(dir, "behaviors"), 0o755)
				os.WriteFile(filepath.Join(dir, "bundle.md"), fmt.Appendf(nil, "---\nbundle: {name: other%d}\nincludes:\n  - bundle: other%d:behaviors/b\n---\nBody.\n", i, i), 0o644)
				os.WriteFile(filepath.Join(dir, "behaviors", "b.yaml"), fmt.Appendf(nil, "bundle: {name: other%d-b}\ntools:\n  - module: tool-%d\n", i, i), 0o644)
			}
			files := loadTrees(b, root, filepath.Join(home, "cache"), extra)
			loc := compose.Locate(corpusEnv(home, filepath.Join(root, "bundle.md")), files)
			var g compose.Graph
			var bundles []string
			for p := range files.data {
				if files.Stat(p) == compose.RegularFile && (filepath.Base(p) == "bundle.md" && filepath.Dir(filepath.Dir(p)) == extra ||
					filepath.Dir(p) == filepath.Join(root, "bundles") || filepath.Dir(p) == filepath.Join(root, "behaviors") || p == filepath.Join(root, "bundle.md")) {
					bundles = append(bundles, p)
				}
			}
			for _, p := range bundles {
				c := compose.Compose(loc, files, p)
				g.Set(p, c.Reads)
			}
			orig := files.data[behavior]
			recomposed := 0
			i := 0
			runtime.GC()
			start := cpuTime(b)
			for b.Loop() {
				i++
				files.save(behavior, fmt.Appendf(append([]byte(nil), orig...), "\n# save %d\n", i))
				for _, p := range g.Dependents(behavior) {
					c := compose.Compose(loc, files, p)
					g.Set(p, c.Reads)
					recomposed++
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N)/1e6, "cpu-ms/op")
			b.ReportMetric(float64(recomposed)/float64(b.N), "recomposed/op")
			b.ReportMetric(float64(len(bundles)), "bundles")
		})
	}
}
