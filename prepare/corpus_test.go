package prepare_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/prepare"
)

// corpusDir returns $AMPLIDEX_CORPUS or skips the test.
func corpusDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AMPLIDEX_CORPUS")
	if dir == "" {
		t.Skip("AMPLIDEX_CORPUS is not set: no corpus to test against")
	}
	return dir
}

func TestCorpusAmplifierAgent(t *testing.T) {
	manifest := filepath.Join(corpusDir(t), "bundle", "amplifier-agent", "bundle.md")
	f := newFixture(t)
	c, _ := f.cache(t)
	d, err := c.DryRun(manifest)
	if err != nil {
		t.Fatalf("DryRun: %v", err)
	}
	if d.Bundle.Name != "amplifier-agent-behavioral-anchor" || d.DefaultProvider != "anthropic" {
		t.Errorf("bundle %q, default_provider %q", d.Bundle.Name, d.DefaultProvider)
	}
	wantAgents := []string{"explorer", "architect", "builder", "debugger", "git-ops", "researcher"}
	if len(d.Agents) != len(wantAgents) {
		t.Fatalf("%d agents, want %d: %+v", len(d.Agents), len(wantAgents), d.Agents)
	}
	for i, a := range d.Agents {
		if a.Name != wantAgents[i] || a.Path != filepath.Join(filepath.Dir(manifest), "agents", a.Name+".md") || len(a.ModelRole) != 2 {
			t.Errorf("agent %d = %+v, want %s with two model roles", i, a, wantAgents[i])
		}
	}
	if len(d.Modules) != 30 {
		t.Errorf("%d module sources, want 30", len(d.Modules))
	}
	subdirs := 0
	for _, m := range d.Modules {
		if m.Parsed.Kind != prepare.SourceGit || m.Parsed.Ref != "main" {
			t.Errorf("module %s: source %+v, want git at main", m.Module, m.Parsed)
		}
		if m.Parsed.Subdirectory != "" {
			subdirs++
		}
	}
	if subdirs != 9 {
		t.Errorf("%d sources with a subdirectory, want 9", subdirs)
	}
	if errs := diag.CountErrors(d.Diagnostics); errs != 0 {
		t.Errorf("%d errors in a valid manifest: %v", errs, d.Diagnostics)
	}
	if n := len(f.gitCalls(t, "ls-remote")) + len(f.gitCalls(t, "clone")); n != 0 {
		t.Errorf("a dry run ran git %d times", n)
	}
}

func TestCorpusFoundationAnchors(t *testing.T) {
	manifest := filepath.Join(corpusDir(t), "bundle", "foundation-anchors", "bundle.md")
	f := newFixture(t)
	c, _ := f.cache(t)
	for name, call := range map[string]func() error{
		"DryRun": func() error { _, err := c.DryRun(manifest); return err },
		"Ensure": func() error { _, err := c.Ensure(t.Context(), manifest); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := call()
			var me *prepare.ManifestError
			if !errors.As(err, &me) || !errors.Is(err, prepare.ErrBundleLoadFailed) {
				t.Fatalf("err = %v, want a *ManifestError", err)
			}
			if me.Message() != prepare.DefaultProviderMessage || me.Code() != "bundle_load_failed" || me.Classification() != "protocol" {
				t.Errorf("%s (%s): %q", me.Code(), me.Classification(), me.Message())
			}
		})
	}
	if _, err := os.Stat(c.PreparedDir()); !os.IsNotExist(err) {
		t.Errorf("a failed prepare left %s: %v", c.PreparedDir(), err)
	}
}
