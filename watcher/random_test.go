package watcher_test

import (
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/amplidex/amplidex/watcher"
)

var randomSeed = flag.Uint64("seed", 0, "seed of TestRandomOperations (0: random)")

// TestRandomOperations applies random file system operations to a root and
// to a directory outside it that collections are linked from, checking
// after every few of them that a consumer of the batches holds exactly what
// is on disk.
func TestRandomOperations(t *testing.T) {
	const ops, checkEvery = 600, 15
	seed := *randomSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (rerun with -seed)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	root := fastTempDir(t)
	outside := fastTempDir(t)
	unpack(t, "collections.txtar", root)
	unpack(t, "collections.txtar", outside)
	var m *model
	w, rec := start(t, watcher.Options{})
	addRoot(t, w, root)
	m = newModel(t, root)

	seq := 0
	fresh := func(prefix string) string {
		seq++
		return fmt.Sprintf("%s%d", prefix, seq)
	}
	// entries lists what is under dir (without following symlinks).
	entries := func(dir string, dirsOnly bool) []string {
		var out []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return nil
			}
			if !dirsOnly || d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
		slices.Sort(out)
		return out
	}
	pick := func(list []string) (string, bool) {
		if len(list) == 0 {
			return "", false
		}
		return list[rng.IntN(len(list))], true
	}
	anyDir := func() string {
		base := root
		if rng.IntN(3) == 0 {
			base = outside
		}
		if d, ok := pick(entries(base, true)); ok && rng.IntN(4) > 0 {
			return d
		}
		return base
	}
	rootLinks := func() []string {
		var links []string
		des, _ := os.ReadDir(root)
		for _, de := range des {
			if de.Type()&fs.ModeSymlink != 0 {
				links = append(links, filepath.Join(root, de.Name()))
			}
		}
		return links
	}

	type op struct {
		name string
		do   func() string
	}
	operations := []op{
		{"create file", func() string {
			p := filepath.Join(anyDir(), fresh("f")+".md")
			os.WriteFile(p, []byte("x"), 0o644)
			return p
		}},
		{"write file", func() string {
			p, ok := pick(entries(anyDir(), false))
			if ok {
				os.WriteFile(p, []byte("y"), 0o644)
			}
			return p
		}},
		{"mkdir -p", func() string {
			p := filepath.Join(anyDir(), fresh("d"), fresh("e"))
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(p, "in.md"), nil, 0o644)
			return p
		}},
		{"remove", func() string {
			p, ok := pick(entries(anyDir(), false))
			if ok {
				os.RemoveAll(p)
			}
			return p
		}},
		{"rename within", func() string {
			p, ok := pick(entries(anyDir(), false))
			if ok {
				os.Rename(p, filepath.Join(anyDir(), fresh("r")))
			}
			return p
		}},
		{"move between root and outside", func() string {
			p, ok := pick(entries(root, true))
			if ok && rng.IntN(2) == 0 {
				os.Rename(p, filepath.Join(outside, fresh("out")))
			} else if p, ok = pick(entries(outside, true)); ok {
				os.Rename(p, filepath.Join(root, fresh("in")))
			}
			return p
		}},
		{"link a collection", func() string {
			target, ok := pick(entries(outside, true))
			if !ok {
				return ""
			}
			p := filepath.Join(root, fresh("link"))
			os.Symlink(target, p)
			return p
		}},
		{"unlink or retarget a collection", func() string {
			p, ok := pick(rootLinks())
			if !ok {
				return ""
			}
			if target, ok := pick(entries(outside, true)); ok && rng.IntN(2) == 0 {
				tmp := p + ".tmp"
				os.Symlink(target, tmp)
				os.Rename(tmp, p)
			} else {
				os.Remove(p)
			}
			return p
		}},
		{"replace the root", func() string {
			if rng.IntN(10) > 0 {
				return "(skipped)"
			}
			os.Rename(root, root+".old")
			os.Mkdir(root, 0o755)
			os.Rename(filepath.Join(root+".old", "alpha"), filepath.Join(root, "alpha"))
			os.RemoveAll(root + ".old")
			return root
		}},
	}

	var log []string
	for i := range ops {
		o := operations[rng.IntN(len(operations))]
		log = append(log, o.name+" "+o.do())
		if (i+1)%checkEvery != 0 {
			continue
		}
		flush(t, w)
		for _, b := range rec.take() {
			m.apply(b)
		}
		if t.Failed() {
			return
		}
		func() {
			defer func() {
				if t.Failed() {
					t.Logf("operations since the last check:\n%s", joinLines(log))
				}
			}()
			m.check()
		}()
		log = log[:0]
	}
}

func joinLines(lines []string) string {
	var s string
	for _, l := range lines {
		s += "  " + l + "\n"
	}
	return s
}
