package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// TestBundleCorpus: for every bundle file of the corpus, `query bundle
// FILE --composed --json` run from the file's directory gives the mount
// plan compose.Compose gives, the includes coming from a runtime cache
// laid out as the runtime lays it: in process, and through the daemon.
// (The differential test of package compose holds Compose to the
// reference.)
func TestBundleCorpus(t *testing.T) {
	corpus := os.Getenv("AMPLIDEX_CORPUS")
	if corpus == "" {
		t.Skip("AMPLIDEX_CORPUS is not set: no corpus to test against")
	}
	src := filepath.Join(corpus, "bundles")
	if _, err := os.Stat(filepath.Join(src, "SOURCES.md")); err != nil {
		t.Skipf("no bundle corpus at %s: %v", src, err)
	}
	dir := t.TempDir()
	amp := filepath.Join(dir, "amp")
	layoutBundleCache(t, src, amp)
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "AMPLIDEX_HOME": filepath.Join(dir, "amplidex"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"), "XDG_STATE_HOME": filepath.Join(dir, "state"),
		"XDG_RUNTIME_DIR": filepath.Join(dir, "run"), "AMPLIFIER_HOME": amp, "NO_COLOR": "1", service.NoSpawnEnv: "1"}
	solo := map[string]string{}
	for k, v := range env {
		solo[k] = v
	}
	solo["AMPLIDEX_HOME"] = filepath.Join(dir, "amplidex-solo")
	if err := os.MkdirAll(env["HOME"], 0o755); err != nil {
		t.Fatal(err)
	}
	paths, err := query.DefaultPaths(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Start(context.Background(), daemon.Options{Paths: paths, Home: env["HOME"], NoSync: true,
		Watch: watcher.Options{Debounce: 5 * time.Millisecond, PollInterval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })

	files := corpusBundleFiles(t, src)
	if len(files) < 90 {
		t.Fatalf("only %d bundle files in the corpus", len(files))
	}
	for _, f := range files {
		t.Chdir(filepath.Dir(f))
		a := NewApp(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, func(k string) string { return env[k] })
		ws, err := a.workspace()
		if err != nil {
			t.Fatal(err)
		}
		files := &compose.DiskFiles{}
		c := compose.Compose(compose.Locate(ws.BundleScope().Env(), files), files, f)
		want, err := json.Marshal(c.MountPlan)
		if err != nil {
			t.Fatal(err)
		}
		for name, e := range map[string]map[string]string{"in process": solo, "through the daemon": env} {
			var stdout, stderr bytes.Buffer
			if code := NewApp(strings.NewReader(""), &stdout, &stderr, func(k string) string { return e[k] }).Run(context.Background(),
				[]string{"query", "bundle", f, "--composed", "--json"}); code != 0 {
				t.Errorf("%s, %s: exit %d: %s", f, name, code, stderr.String())
				continue
			}
			if strings.Contains(stderr.String(), "in-process") != (name == "in process") {
				t.Errorf("%s, %s: stderr %q", f, name, stderr.String())
			}
			var res struct {
				MountPlan json.RawMessage `json:"mount_plan"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
				t.Fatalf("%s, %s: %v", f, name, err)
			}
			var got bytes.Buffer
			if err := json.Compact(&got, res.MountPlan); err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Errorf("%s, %s: mount plan\n%s\nwant\n%s", f, name, got.String(), want)
			}
		}
	}
}

var bundleSourceRow = regexp.MustCompile("^\\| ([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+) \\| `")

// layoutBundleCache lays out $AMPLIFIER_HOME/cache under home from the
// corpus at src as the runtime lays it after cloning each repository
// SOURCES.md lists, at @main.
func layoutBundleCache(t *testing.T, src, home string) {
	t.Helper()
	f, err := os.Open(filepath.Join(src, "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := bundleSourceRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		u := compose.ParseURI("git+https://github.com/" + m[1] + "/" + m[2] + "@main")
		dst := filepath.Join(home, "cache", u.CacheDir())
		from := filepath.Join(src, m[1]+"__"+m[2])
		err := filepath.WalkDir(from, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(from, p)
			if e.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dst, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// corpusBundleFiles returns every bundle file of the corpus at src.
func corpusBundleFiles(t *testing.T, src string) []string {
	var out []string
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if ext := filepath.Ext(p); ext != ".md" && ext != ".yaml" && ext != ".yml" {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		i := strings.IndexByte(rel, '/')
		if i < 0 {
			return nil
		}
		b, err := syntax.ReadFile(p, 0)
		if err != nil {
			return err
		}
		if bundle.Parse(p, b, bundle.Options{Rel: rel[i+1:]}).Kind == bundle.KindBundle {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
