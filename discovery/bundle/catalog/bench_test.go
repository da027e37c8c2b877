package catalog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
)

// BenchmarkSave measures one save in a behavior, as the daemon takes it
// in: the file written, the catalog's Update (the file cache forgets it;
// the compositions that read it, found through the graph, are made again
// from the kept parses of every other file; the repository's check is
// made again), and the composed bundle asked for; the write itself is not
// timed. cpu-ms/op is the process's CPU time for that work (the machines
// are shared: wall time is noisy). Around it, 10 or 1,000
// unrelated bundles (repositories of their own, each composed and kept)
// must not change the cost. With $AMPLIDEX_CORPUS set, the behavior is
// amplifier-foundation's behaviors/sessions.yaml (its includes in a
// runtime cache); else a small repository whose root bundle includes
// three behaviors.
func BenchmarkSave(b *testing.B) {
	for _, unrelated := range []int{10, 1000} {
		b.Run(fmt.Sprintf("unrelated=%d", unrelated), func(b *testing.B) {
			dir := b.TempDir()
			env, repo, behavior := saveFixture(b, dir)
			cat := catalog.New(catalog.Options{})
			v := cat.View(env)
			for i := range unrelated {
				p := filepath.Join(dir, "others", fmt.Sprintf("r%d", i), "bundle.md")
				write(b, p, fmt.Sprintf("---\nbundle: {name: other%d}\nincludes:\n  - bundle: other%d:behaviors/b\n---\nBody.\n", i, i))
				write(b, filepath.Join(filepath.Dir(p), "behaviors", "b.yaml"), fmt.Sprintf("bundle: {name: other%d-b}\ntools:\n  - module: tool-%d\n", i, i))
				v.Compose(p)
			}
			v.Check(repo)
			root := v.Repo()
			if root == "" {
				b.Fatal("no repository")
			}
			orig := readFile(b, behavior)
			rootBundle := filepath.Join(root, "bundle.md")
			if _, err := os.Stat(rootBundle); err != nil {
				rootBundle = filepath.Join(root, "bundle.yaml")
			}
			composed := cat.Composed()
			var cpu time.Duration
			i := 0
			runtime.GC()
			for b.Loop() {
				i++
				b.StopTimer()
				write(b, behavior, fmt.Sprintf("%s\n# save %d\n", orig, i))
				b.StartTimer()
				start := cpuTime(b)
				cat.Update([]string{behavior}, nil)
				cat.View(env).Compose(rootBundle)
				cpu += cpuTime(b) - start
			}
			b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
			b.ReportMetric(float64(cat.Composed()-composed)/float64(b.N), "recomposed/op")
			b.ReportMetric(float64(cat.Files().Len()), "paths-known")
		})
	}
}

// saveFixture lays out the benchmark's repository in dir and returns the
// Env standing in it, the repository and the behavior saved.
func saveFixture(b *testing.B, dir string) (compose.Env, string, string) {
	if corpus := os.Getenv("AMPLIDEX_CORPUS"); corpus != "" {
		src := filepath.Join(corpus, "bundles")
		if _, err := os.Stat(filepath.Join(src, "SOURCES.md")); err == nil {
			home := filepath.Join(dir, "amp")
			layoutCache(b, src, home)
			repo := filepath.Join(dir, "foundation")
			if err := copyTree(filepath.Join(src, "microsoft__amplifier-foundation"), repo); err != nil {
				b.Fatal(err)
			}
			env := compose.Env{WorkDir: repo, AmplifierHome: home, Home: dir}
			return env, repo, filepath.Join(repo, "behaviors", "sessions.yaml")
		}
	}
	repo := filepath.Join(dir, "repo")
	write(b, filepath.Join(repo, "bundle.md"), "---\nbundle: {name: app, version: 1.0.0}\nincludes:\n"+
		"  - bundle: app:behaviors/a\n  - bundle: app:behaviors/b\n  - bundle: app:behaviors/c\n---\nThe app.\n")
	for _, n := range []string{"a", "b", "c"} {
		write(b, filepath.Join(repo, "behaviors", n+".yaml"), "bundle: {name: app-"+n+"}\ntools:\n  - module: tool-"+n+"\n"+
			"context:\n  include: [app:context/"+n+".md]\n")
		write(b, filepath.Join(repo, "context", n+".md"), "Context "+n+".\n")
	}
	return envIn(dir, "repo"), repo, filepath.Join(repo, "behaviors", "a.yaml")
}
