package prepare_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/amplidex/amplidex/prepare"
)

func hash16(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

func TestEnsureColdThenWarm(t *testing.T) {
	f := newFixture(t)
	c, logs := f.cache(t)
	raw, err := os.ReadFile(f.manifest)
	if err != nil {
		t.Fatal(err)
	}
	e := ensure(t, c, f.manifest)
	if e.State != prepare.StateCold {
		t.Errorf("first Ensure: state %s, want cold", e.State)
	}
	wantDir := filepath.Join(f.home, "cache", "prepared", testVersion, hash16(raw))
	if e.Dir != wantDir {
		t.Errorf("entry dir %s, want %s", e.Dir, wantDir)
	}
	for _, name := range []string{prepare.ArtifactFile, prepare.MarkerFile} {
		if _, err := os.Stat(filepath.Join(wantDir, name)); err != nil {
			t.Errorf("entry file: %v", err)
		}
	}
	var mark map[string]string
	data, err := os.ReadFile(filepath.Join(wantDir, prepare.MarkerFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &mark); err != nil {
		t.Fatal(err)
	}
	if mark["aaa_version"] != testVersion || mark["bundle_sha256_prefix"] != hash16(raw) {
		t.Errorf("manifest.json = %v", mark)
	}

	p := e.Plan
	if p.DefaultProvider != "anthropic" || p.Bundle.Name != "test-bundle" {
		t.Errorf("plan bundle %+v, default_provider %q", p.Bundle, p.DefaultProvider)
	}
	commitB := gitRun(t, f.repos["b"], "rev-parse", "HEAD")
	orch := p.Session.Modules["orchestrator"]
	if orch.Commit != commitB || !strings.HasPrefix(orch.Path, c.ModulesDir()) || !strings.HasSuffix(orch.Path, "/modules/loop-basic") {
		t.Errorf("orchestrator = %+v, want a clone of b at %s", orch, commitB)
	}
	if got := p.Session.Settings["raw"]; got != true {
		t.Errorf("session settings raw = %v, want true", got)
	}
	if ctx := p.Session.Modules["context"]; ctx.Path != filepath.Join(f.bundleDir, "modules", "context-simple") || ctx.Commit != "" {
		t.Errorf("local context module = %+v", ctx)
	}
	if len(p.Providers) != 1 || p.Providers[0].Commit != gitRun(t, f.repos["a"], "rev-parse", "HEAD") {
		t.Errorf("providers = %+v", p.Providers)
	}
	if len(p.Tools) != 1 || p.Tools[0].Config["skills"] == nil {
		t.Errorf("tools = %+v", p.Tools)
	}
	if len(p.Agents) != 2 || p.Agents[0].Name != "helper" || p.Agents[1].Name != "reviewer" {
		t.Fatalf("agents = %+v", p.Agents)
	}
	if got := strings.Join(p.Agents[0].ModelRole, ","); got != "general,fast" {
		t.Errorf("helper model_role = %q", got)
	}
	if rt := p.Agents[1].Tools; len(rt) != 1 || !strings.HasSuffix(rt[0].Path, "/modules/tool-review") || rt[0].Commit != commitB {
		t.Errorf("reviewer tools = %+v", rt)
	}
	mentions := map[string]string{}
	for _, m := range p.Mentions {
		mentions[m.Text] = m.Path
	}
	if mentions["@test-bundle:context/system.md"] != filepath.Join(f.bundleDir, "context", "system.md") ||
		mentions["@test-bundle:skills"] != filepath.Join(f.bundleDir, "skills") {
		t.Errorf("mentions = %v", mentions)
	}
	if n := len(f.gitCalls(t, "clone")); n != 3 {
		t.Errorf("%d clones, want 3 (one per repository)", n)
	}

	calls := len(f.gitCalls(t, "ls-remote"))
	again := ensure(t, c, f.manifest)
	if again.State != prepare.StateWarm || again.Dir != e.Dir {
		t.Errorf("second Ensure: %s in %s, want warm in %s", again.State, again.Dir, e.Dir)
	}
	if n := len(f.gitCalls(t, "ls-remote")); n != calls {
		t.Errorf("a warm hit ran git")
	}
	a, _ := json.Marshal(e.Plan)
	b, _ := json.Marshal(again.Plan)
	if string(a) != string(b) {
		t.Errorf("warm plan differs from the one built:\n%s\n%s", a, b)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("unexpected warnings:\n%s", logs)
	}
}

func TestKey(t *testing.T) {
	src := []byte("---\ndefault_provider: anthropic\n---\n")
	base, err := prepare.NewKey("1.0.0", src)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		version string
		src     []byte
		same    bool
	}{
		{"same bytes", "1.0.0", append([]byte(nil), src...), true},
		{"one byte appended", "1.0.0", append(append([]byte(nil), src...), '\n'), false},
		{"one byte changed", "1.0.0", []byte(strings.Replace(string(src), "anthropic", "anthropiC", 1)), false},
		{"other version", "1.0.1", src, false},
		{"pre-release", "1.0.0-rc.1", src, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := prepare.NewKey(tc.version, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if len(k.Hash) != 16 {
				t.Errorf("hash %q is not 16 hex digits", k.Hash)
			}
			if (k == base) != tc.same {
				t.Errorf("key %s vs %s: same = %v, want %v", k, base, k == base, tc.same)
			}
		})
	}
}

func TestKeyDirectories(t *testing.T) {
	f := newFixture(t)
	c, _ := f.cache(t)
	first := ensure(t, c, f.manifest)

	t.Run("same bytes give the same directory", func(t *testing.T) {
		copyPath := filepath.Join(f.bundleDir, "copy.md")
		data, _ := os.ReadFile(f.manifest)
		if err := os.WriteFile(copyPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		e := ensure(t, c, copyPath)
		if e.Dir != first.Dir || e.State != prepare.StateWarm {
			t.Errorf("copy of the manifest: %s %s, want warm %s", e.State, e.Dir, first.Dir)
		}
	})
	t.Run("one appended byte is a new entry", func(t *testing.T) {
		f2 := filepath.Join(f.bundleDir, "appended.md")
		data, _ := os.ReadFile(f.manifest)
		if err := os.WriteFile(f2, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		e := ensure(t, c, f2)
		if e.Dir == first.Dir || e.State != prepare.StateCold {
			t.Errorf("appended byte: %s %s, want cold in a new directory", e.State, e.Dir)
		}
		if _, err := os.Stat(filepath.Join(first.Dir, prepare.MarkerFile)); err != nil {
			t.Errorf("the old entry is gone: %v", err)
		}
	})
	t.Run("another version is a new entry", func(t *testing.T) {
		c2, _ := f.cache(t, func(o *prepare.Options) { o.Version = "1.2.4" })
		e := ensure(t, c2, f.manifest)
		if e.Dir == first.Dir || e.State != prepare.StateCold || e.Key.Hash != first.Key.Hash {
			t.Errorf("new version: %s %s (key %s), want cold in a new directory", e.State, e.Dir, e.Key)
		}
		if filepath.Base(filepath.Dir(e.Dir)) != "1.2.4" {
			t.Errorf("entry %s is not under the version", e.Dir)
		}
	})
}

func TestCheckVersion(t *testing.T) {
	tests := []struct {
		v  string
		ok bool
	}{
		{"1.2.3", true},
		{"0.14.1", true},
		{"1.0.0-rc.1+build.5", true},
		{"", false},
		{"v1.2.3", false},
		{"1.2", false},
		{"latest", false},
		{"1.2.3/../x", false},
	}
	for _, tc := range tests {
		t.Run(tc.v, func(t *testing.T) {
			err := prepare.CheckVersion(tc.v)
			if (err == nil) != tc.ok {
				t.Errorf("CheckVersion(%q) = %v, want ok=%v", tc.v, err, tc.ok)
			}
			if err != nil && !errors.Is(err, prepare.ErrInvalidVersion) {
				t.Errorf("error %v is not ErrInvalidVersion", err)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		opts prepare.Options
	}{
		{"no version", prepare.Options{Home: "/tmp/x"}},
		{"bad version", prepare.Options{Home: "/tmp/x", Version: "one"}},
		{"relative home", prepare.Options{Home: "x", Version: "1.0.0"}},
		{"no home", prepare.Options{Version: "1.0.0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := prepare.New(tc.opts); err == nil {
				t.Errorf("New(%+v) succeeded", tc.opts)
			}
		})
	}
}

func TestResolveHome(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		configured string
		want       string
		err        bool
	}{
		{"environment first", map[string]string{"AMPLIFIER_AGENT_HOME": "/srv/aa", "HOME": "/home/u"}, "/etc/aa", "/srv/aa", false},
		{"then configuration", map[string]string{"HOME": "/home/u"}, "/etc/aa", "/etc/aa", false},
		{"then the home directory", map[string]string{"HOME": "/home/u"}, "", "/home/u/.amplifier-agent", false},
		{"nothing set", nil, "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := prepare.ResolveHome(func(k string) string { return tc.env[k] }, tc.configured)
			if (err != nil) != tc.err || got != tc.want {
				t.Errorf("ResolveHome = %q, %v; want %q (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestWarmNeedsBothFiles(t *testing.T) {
	shared := newFixture(t)
	for _, name := range []string{prepare.ArtifactFile, prepare.MarkerFile} {
		t.Run("without "+name, func(t *testing.T) {
			t.Parallel()
			f := shared.fresh(t)
			c, logs := f.cache(t)
			e := ensure(t, c, f.manifest)
			if err := os.Remove(filepath.Join(e.Dir, name)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Lookup(f.manifest); !errors.Is(err, prepare.ErrMiss) {
				t.Errorf("Lookup with %s missing: %v, want ErrMiss", name, err)
			}
			again := ensure(t, c, f.manifest)
			if again.State != prepare.StateCold {
				t.Errorf("state %s, want cold", again.State)
			}
			if len(again.Warnings) != 0 || strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("a missing file is a plain miss, not a warning: %v", again.Warnings)
			}
			if _, err := c.Lookup(f.manifest); err != nil {
				t.Errorf("Lookup after the rebuild: %v", err)
			}
		})
	}
}

func TestCorruptEntryRebuilds(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		damage func(t *testing.T, path string, c *prepare.Cache)
	}{
		{"truncated artifact", prepare.ArtifactFile, func(t *testing.T, p string, _ *prepare.Cache) {
			data, _ := os.ReadFile(p)
			write(t, p, data[:len(data)/2])
		}},
		{"garbage artifact", prepare.ArtifactFile, func(t *testing.T, p string, _ *prepare.Cache) {
			write(t, p, []byte("\x00\x01\x02 not json"))
		}},
		{"empty artifact", prepare.ArtifactFile, func(t *testing.T, p string, _ *prepare.Cache) { write(t, p, nil) }},
		{"artifact of the wrong shape", prepare.ArtifactFile, func(t *testing.T, p string, _ *prepare.Cache) {
			write(t, p, []byte(`{"format": 1, "providers": "none"}`))
		}},
		{"artifact with unknown fields", prepare.ArtifactFile, func(t *testing.T, p string, _ *prepare.Cache) {
			write(t, p, []byte(`{"pickle": "gASV"}`))
		}},
		{"artifact with data after it", prepare.ArtifactFile, func(t *testing.T, p string, _ *prepare.Cache) {
			data, _ := os.ReadFile(p)
			write(t, p, append(data, "{}"...))
		}},
		{"artifact is a directory", prepare.ArtifactFile, func(t *testing.T, p string, _ *prepare.Cache) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"unreadable artifact", prepare.ArtifactFile, func(t *testing.T, p string, _ *prepare.Cache) {
			if os.Geteuid() == 0 {
				t.Skip("root reads any file")
			}
			if err := os.Chmod(p, 0); err != nil {
				t.Fatal(err)
			}
		}},
		{"garbage marker", prepare.MarkerFile, func(t *testing.T, p string, _ *prepare.Cache) {
			write(t, p, []byte("aaa_version=1.2.3"))
		}},
		{"marker of another key", prepare.MarkerFile, func(t *testing.T, p string, _ *prepare.Cache) {
			write(t, p, []byte(`{"aaa_version": "9.9.9", "bundle_sha256_prefix": "0123456789abcdef"}`))
		}},
		{"module cache removed", prepare.ArtifactFile, func(t *testing.T, _ string, c *prepare.Cache) {
			if err := os.RemoveAll(c.ModulesDir()); err != nil {
				t.Fatal(err)
			}
		}},
	}
	shared := newFixture(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := shared.fresh(t)
			c, logs := f.cache(t)
			e := ensure(t, c, f.manifest)
			path := filepath.Join(e.Dir, tc.file)
			tc.damage(t, path, c)

			again := ensure(t, c, f.manifest)
			if again.State != prepare.StateCold {
				t.Errorf("state %s, want cold", again.State)
			}
			if len(again.Warnings) != 1 || !strings.Contains(again.Warnings[0], path) {
				t.Errorf("warnings %q, want one naming %s", again.Warnings, path)
			}
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), path) {
				t.Errorf("no warning naming %s in the log:\n%s", path, logs)
			}
			if w, err := c.Lookup(f.manifest); err != nil || w.Plan.DefaultProvider != "anthropic" {
				t.Errorf("after the rebuild: %v", err)
			}
		})
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentEnsure(t *testing.T) {
	f := newFixture(t)
	c, _ := f.cache(t)
	const n = 6
	entries := make([]prepare.Entry, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			entries[i], errs[i] = c.Ensure(context.Background(), f.manifest)
		}()
	}
	close(start)
	wg.Wait()
	cold := 0
	for i, e := range entries {
		if errs[i] != nil {
			t.Fatalf("Ensure %d: %v", i, errs[i])
		}
		if e.State == prepare.StateCold {
			cold++
		}
		if e.Dir != entries[0].Dir {
			t.Errorf("Ensure %d: entry %s, want %s", i, e.Dir, entries[0].Dir)
		}
	}
	if cold != 1 {
		t.Errorf("%d cold builds, want 1", cold)
	}
	if got := len(f.gitCalls(t, "clone")); got != 3 {
		t.Errorf("%d clones, want 3", got)
	}
}

func TestLookup(t *testing.T) {
	f := newFixture(t)
	c, _ := f.cache(t)
	if _, err := c.Lookup(f.manifest); !errors.Is(err, prepare.ErrMiss) {
		t.Fatalf("Lookup before any build: %v, want ErrMiss", err)
	}
	built := ensure(t, c, f.manifest)
	e, err := c.Lookup(f.manifest)
	if err != nil || e.State != prepare.StateWarm || e.Dir != built.Dir {
		t.Fatalf("Lookup after the build: %+v, %v", e, err)
	}
	if _, err := c.Lookup(filepath.Join(f.root, "missing.md")); err == nil || errors.Is(err, prepare.ErrMiss) {
		t.Errorf("Lookup of a missing manifest: %v, want a read error", err)
	}
}
