package prepare_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/prepare"
)

// rewrite replaces old by new in the fixture's manifest.
func (f *fixture) rewrite(t *testing.T, old, new string) {
	t.Helper()
	data, err := os.ReadFile(f.manifest)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("manifest has no %q", old)
	}
	write(t, f.manifest, []byte(strings.Replace(string(data), old, new, 1)))
}

func TestModuleFailureFailsThePrepare(t *testing.T) {
	shared := newFixture(t)
	tests := []struct {
		name   string
		old    string
		new    string
		module string
		why    string
	}{
		{"missing repository", "git+file://" + shared.repos["c"] + "@main", "git+file://" + shared.root + "/nowhere@main", "hooks-status", "ls-remote"},
		{"missing branch", "git+file://" + shared.repos["c"] + "@main", "git+file://" + shared.repos["c"] + "@release", "hooks-status", `no branch or tag "release"`},
		{"missing subdirectory", "#subdirectory=modules/loop-basic", "#subdirectory=modules/loop-missing", "loop-basic", "no subdirectory modules/loop-missing"},
		{"missing local directory", "./modules/context-simple", "./modules/context-missing", "context-simple", "no such file"},
		{"missing file URL", "./modules/context-simple", "file://" + shared.root + "/nowhere", "context-simple", "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := shared.fresh(t)
			f.bundleDir = t.TempDir()
			unpackBundle(t, f)
			f.rewrite(t, tc.old, tc.new)
			c, _ := f.cache(t)
			e, err := c.Ensure(context.Background(), f.manifest)
			var be *prepare.BuildError
			if !errors.As(err, &be) || !errors.Is(err, prepare.ErrModuleUnavailable) {
				t.Fatalf("Ensure: %v, want a *BuildError", err)
			}
			if len(be.Modules) != 1 || be.Modules[0].Module != tc.module || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q, want module %s failing with %q", err, tc.module, tc.why)
			}
			ds := be.Diagnostics()
			if len(ds) != 1 || ds[0].Path != f.manifest || ds[0].Range.Start.Line == 0 || !strings.Contains(ds[0].Message, tc.module) {
				t.Errorf("diagnostics %v, want one at the entry of %s", ds, tc.module)
			}
			if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
				t.Errorf("a failed prepare wrote %s (%v)", e.Dir, err)
			}
		})
	}
}

// unpackBundle writes the fixture's bundle into f.bundleDir.
func unpackBundle(t *testing.T, f *fixture) {
	t.Helper()
	unpack(t, "bundle.txtar", f.bundleDir, map[string]string{
		"${REPO_A}": "git+file://" + f.repos["a"],
		"${REPO_B}": "git+file://" + f.repos["b"],
		"${REPO_C}": "git+file://" + f.repos["c"],
	})
	f.manifest = filepath.Join(f.bundleDir, "bundle.md")
}

func TestManifestErrors(t *testing.T) {
	shared := newFixture(t)
	tests := []struct {
		name string
		old  string
		new  string
		code string
		msg  string
	}{
		{"missing default_provider", "default_provider: anthropic\n", "", diag.CodeBundleDefaultProvider, schema.BundleDefaultProviderMessage},
		{"default_provider not a string", "default_provider: anthropic\n", "default_provider: [anthropic]\n", diag.CodeBundleWrongType, "default_provider is a list"},
		{"unsupported source", "./modules/context-simple", "https://example.com/context.git", diag.CodeBundleSource, "unsupported scheme"},
		{"source mapping", "source: ./modules/context-simple", "source: {path: ./x}", diag.CodeBundleSource, "source must be a string"},
		{"missing agent", "    - helper\n", "    - helper\n    - ghost\n", diag.CodeBundleAgentMissing, "no agents/ghost.md"},
		{"agent of another bundle", "    - helper\n", "    - helper\n    - other:ghost\n", diag.CodeBundleAgentMissing, "names bundle other"},
		{"unresolved mention", "@test-bundle:context/system.md", "@test-bundle:context/missing.md", diag.CodeMentionUnresolved, "no context/missing.md"},
		{"escaping mention", "@test-bundle:context/system.md", "@test-bundle:../x.md", diag.CodeMentionEscapes, "leaves the bundle"},
		{"unknown key", "default_provider: anthropic\n", "default_provider: anthropic\nfallback_provider: openai\n", diag.CodeBundleUnknownKey, "fallback_provider"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := shared.fresh(t)
			f.bundleDir = t.TempDir()
			unpackBundle(t, f)
			f.rewrite(t, tc.old, tc.new)
			c, _ := f.cache(t)
			for _, call := range []func() error{
				func() error { _, err := c.DryRun(f.manifest); return err },
				func() error { _, err := c.Ensure(context.Background(), f.manifest); return err },
			} {
				err := call()
				var me *prepare.ManifestError
				if !errors.As(err, &me) || !errors.Is(err, prepare.ErrBundleLoadFailed) {
					t.Fatalf("err = %v, want a *ManifestError", err)
				}
				found := false
				for _, d := range me.Diagnostics {
					found = found || (d.Code == tc.code && strings.Contains(d.Message, tc.msg))
				}
				if !found {
					t.Errorf("diagnostics %v, want %s with %q", me.Diagnostics, tc.code, tc.msg)
				}
			}
			// The headline of a missing or malformed default_provider is
			// the runtime's own message, word for word.
			if strings.HasPrefix(tc.name, "missing default_provider") || strings.HasPrefix(tc.name, "default_provider") {
				var me *prepare.ManifestError
				_, err := c.Ensure(context.Background(), f.manifest)
				if errors.As(err, &me); me.Message() != prepare.DefaultProviderMessage {
					t.Errorf("message %q", me.Message())
				}
			}
			if n := len(f.gitCalls(t, "ls-remote")); n != 0 {
				t.Errorf("an invalid manifest ran git ls-remote %d times", n)
			}
		})
	}
}

func TestCommitRef(t *testing.T) {
	f := newFixture(t)
	commit := gitRun(t, f.repos["c"], "rev-parse", "HEAD")
	gitCommit(t, f.repos["c"], "second") // main moves on; the manifest pins the first
	f.rewrite(t, "git+file://"+f.repos["c"]+"@main", "git+file://"+f.repos["c"]+"@"+commit)
	c, _ := f.cache(t)
	e := ensure(t, c, f.manifest)
	if got := e.Plan.Hooks[0].Commit; got != commit {
		t.Errorf("hooks-status at %s, want the pinned %s", got, commit)
	}
	if n := len(f.gitCalls(t, "fetch")); n != 1 {
		t.Errorf("%d fetches, want 1 for the commit", n)
	}
}

func TestBranchMovesOnNextBuild(t *testing.T) {
	f := newFixture(t)
	c, _ := f.cache(t)
	first := ensure(t, c, f.manifest)
	oldA := first.Plan.Providers[0].Commit
	write(t, filepath.Join(f.repos["a"], "CHANGES"), []byte("more\n"))
	newA := gitCommit(t, f.repos["a"], "second")

	// The same manifest stays warm: the key is the manifest's bytes.
	if e := ensure(t, c, f.manifest); e.State != prepare.StateWarm || e.Plan.Providers[0].Commit != oldA {
		t.Fatalf("same manifest: %s at %s, want warm at %s", e.State, e.Plan.Providers[0].Commit, oldA)
	}
	f.rewrite(t, "# Test bundle", "# Test bundle, edited")
	clones := len(f.gitCalls(t, "clone"))
	e := ensure(t, c, f.manifest)
	if e.State != prepare.StateCold || e.Plan.Providers[0].Commit != newA {
		t.Errorf("edited manifest: %s at %s, want cold at %s", e.State, e.Plan.Providers[0].Commit, newA)
	}
	if got := len(f.gitCalls(t, "clone")) - clones; got != 1 {
		t.Errorf("%d new clones, want 1 (only the repository that moved)", got)
	}
	if _, err := os.Stat(first.Plan.Providers[0].Path); err != nil {
		t.Errorf("the old clone is gone: %v", err)
	}
}

func TestInstallCommand(t *testing.T) {
	shared := newFixture(t)
	t.Run("runs once per module directory", func(t *testing.T) {
		f := shared.fresh(t)
		log := filepath.Join(t.TempDir(), "install.log")
		script := filepath.Join(t.TempDir(), "install")
		write(t, script, []byte("#!/bin/sh\nprintf '%s %s %s\\n' \"$1\" \"$2\" \"$(pwd)\" >> '"+log+"'\n"))
		if err := os.Chmod(script, 0o755); err != nil {
			t.Fatal(err)
		}
		c, _ := f.cache(t, func(o *prepare.Options) { o.InstallCommand = script + " {module} -e {path}" })
		e := ensure(t, c, f.manifest)
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) != 6 {
			t.Fatalf("install ran %d times, want 6:\n%s", len(lines), data)
		}
		if want := "loop-basic -e " + e.Plan.Session.Modules["orchestrator"].Path; lines[0] != want {
			t.Errorf("first install %q, want %q", lines[0], want)
		}
	})
	t.Run("a failure fails the prepare", func(t *testing.T) {
		f := shared.fresh(t)
		c, _ := f.cache(t, func(o *prepare.Options) { o.InstallCommand = "false" })
		e, err := c.Ensure(context.Background(), f.manifest)
		var be *prepare.BuildError
		if !errors.As(err, &be) || !strings.Contains(err.Error(), "install command false") {
			t.Fatalf("Ensure: %v, want an install failure", err)
		}
		if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
			t.Errorf("a failed prepare wrote %s", e.Dir)
		}
	})
}

func TestDryRun(t *testing.T) {
	f := newFixture(t)
	c, _ := f.cache(t)
	d, err := c.DryRun(f.manifest)
	if err != nil {
		t.Fatal(err)
	}
	if d.Warm || len(d.Agents) != 2 || len(d.Modules) != 6 || len(d.Fetch) != 3 {
		t.Errorf("dry run: warm %v, %d agents, %d modules, %d repositories; want cold, 2, 6, 3", d.Warm, len(d.Agents), len(d.Modules), len(d.Fetch))
	}
	if d.Modules[len(d.Modules)-1].Section != "agent reviewer: tools" {
		t.Errorf("last module section %q", d.Modules[len(d.Modules)-1].Section)
	}
	if _, err := os.Stat(f.gitLog); !os.IsNotExist(err) {
		t.Errorf("a dry run ran git")
	}
	if _, err := os.Stat(f.home); !os.IsNotExist(err) {
		t.Errorf("a dry run wrote into the cache home")
	}
	ensure(t, c, f.manifest)
	if d, err := c.DryRun(f.manifest); err != nil || !d.Warm {
		t.Errorf("dry run after a build: warm %v, %v", d != nil && d.Warm, err)
	}
}

func TestClear(t *testing.T) {
	f := newFixture(t)
	c, _ := f.cache(t)
	ensure(t, c, f.manifest)
	c2, _ := f.cache(t, func(o *prepare.Options) { o.Version = "2.0.0" })
	ensure(t, c2, f.manifest)
	f.rewrite(t, "# Test bundle", "# Another bundle")
	ensure(t, c, f.manifest)
	sibling := filepath.Join(f.home, "cache", "other")
	if err := os.MkdirAll(sibling, 0o755); err != nil {
		t.Fatal(err)
	}

	for i, wantExisted := range []bool{true, false} {
		path, existed, err := prepare.Clear(context.Background(), f.home)
		if err != nil {
			t.Fatalf("Clear %d: %v", i+1, err)
		}
		if path != c.PreparedDir() || existed != wantExisted {
			t.Errorf("Clear %d = %s, existed %v; want %s, %v", i+1, path, existed, c.PreparedDir(), wantExisted)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("Clear %d left %s", i+1, path)
		}
	}
	for _, dir := range []string{sibling, c.ModulesDir(), filepath.Join(f.home, "cache", "locks")} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("Clear removed a sibling: %v", err)
		}
	}
	clones := len(f.gitCalls(t, "clone"))
	if e := ensure(t, c, f.manifest); e.State != prepare.StateCold {
		t.Errorf("after Clear: %s, want cold", e.State)
	}
	if n := len(f.gitCalls(t, "clone")); n != clones {
		t.Errorf("the rebuild after Clear cloned again (%d clones)", n-clones)
	}
}

func TestClearRefuses(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(home, "cache", "prepared"), []byte("not a directory"))
	if _, _, err := prepare.Clear(context.Background(), home); !errors.Is(err, prepare.ErrRefuseClear) {
		t.Errorf("Clear of a file named prepared: %v, want ErrRefuseClear", err)
	}
}

func TestInlineAgent(t *testing.T) {
	f := newFixture(t)
	f.rewrite(t, "    - test-bundle:reviewer\n", "    - test-bundle:reviewer\n  scout:\n    description: Looks around.\n    tools:\n      - module: tool-local\n        source: ./modules/context-simple\n")
	c, _ := f.cache(t)
	e := ensure(t, c, f.manifest)
	if len(e.Plan.Agents) != 3 {
		t.Fatalf("agents = %+v", e.Plan.Agents)
	}
	a := e.Plan.Agents[2]
	if a.Name != "scout" || a.Path != f.manifest || a.Description != "Looks around." ||
		len(a.Tools) != 1 || a.Tools[0].Path != filepath.Join(f.bundleDir, "modules", "context-simple") {
		t.Errorf("inline agent = %+v", a)
	}
}

// TestRepeatedAgentInclude: an agent included more than once, by its bare
// or its qualified name, is loaded and listed once.
func TestRepeatedAgentInclude(t *testing.T) {
	f := newFixture(t)
	f.rewrite(t, "    - helper\n", "    - helper\n    - helper\n    - test-bundle:helper\n")
	c, _ := f.cache(t)
	d, err := c.DryRun(f.manifest)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range d.Agents {
		names = append(names, a.Name)
	}
	if strings.Join(names, " ") != "helper reviewer" {
		t.Errorf("agents %q, want helper and reviewer once each", names)
	}
}

// TestFetchedReportsProgress: a cold build tells Fetched of each
// repository it fetches, counting up to the total; a warm hit fetches
// nothing and tells nothing.
func TestFetchedReportsProgress(t *testing.T) {
	f := newFixture(t)
	var calls []string
	c, _ := f.cache(t, func(o *prepare.Options) {
		o.Fetched = func(done, total int, repo string) {
			calls = append(calls, fmt.Sprintf("%d/%d %s", done, total, repo))
		}
	})
	ensure(t, c, f.manifest)
	if len(calls) < 2 {
		t.Fatalf("calls %q", calls)
	}
	total := len(calls) - 1
	if want := fmt.Sprintf("0/%d ", total); calls[0] != want {
		t.Errorf("first call %q, want %q", calls[0], want)
	}
	if last := calls[len(calls)-1]; !strings.HasPrefix(last, fmt.Sprintf("%d/%d ", total, total)) || strings.HasSuffix(last, " ") {
		t.Errorf("last call %q", last)
	}
	calls = nil
	ensure(t, c, f.manifest)
	if calls != nil {
		t.Errorf("a warm hit reported fetches: %q", calls)
	}
}
