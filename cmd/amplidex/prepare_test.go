package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/prepare"
)

// prepareEnv is a test's environment: a bundle of local modules, an
// AMPLIDEX_HOME and a cache home, all in a temporary directory.
type prepareEnv struct {
	dir      string
	bundle   string // the bundle directory
	manifest string
	home     string // the cache home
	env      map[string]string
}

func newPrepareEnv(t *testing.T) *prepareEnv {
	t.Helper()
	dir := t.TempDir()
	p := &prepareEnv{
		dir:    dir,
		bundle: filepath.Join(dir, "bundle"),
		home:   filepath.Join(dir, "agent-home"),
	}
	p.manifest = filepath.Join(p.bundle, "bundle.md")
	ar, err := txtar.ParseFile(filepath.Join("testdata", "prepare", "bundle.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		path := filepath.Join(p.bundle, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.env = map[string]string{
		"HOME":                 filepath.Join(dir, "home"),
		"AMPLIDEX_HOME":        filepath.Join(dir, "amplidex"),
		"AMPLIFIER_AGENT_HOME": p.home,
		"NO_COLOR":             "1",
	}
	return p
}

// run runs amplidex with args and returns its exit code and output.
func (p *prepareEnv) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := NewApp(strings.NewReader(""), &stdout, &stderr, func(k string) string { return p.env[k] })
	code := a.Run(context.Background(), args)
	return code, stdout.String(), stderr.String()
}

// writeConfig writes AMPLIDEX_HOME/config.toml.
func (p *prepareEnv) writeConfig(t *testing.T, text string) {
	t.Helper()
	path := filepath.Join(p.env["AMPLIDEX_HOME"], "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPrepareSetup(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		config      string
		flags       prepareFlags
		wantVersion string
		wantHome    string // relative to the test directory
		wantErr     string
	}{
		{name: "flags", flags: prepareFlags{manifest: "bundle/bundle.md", appVersion: "1.0.0"}, wantVersion: "1.0.0", wantHome: "agent-home"},
		{name: "flag over environment over configuration", env: map[string]string{service.VersionEnv: "2.0.0"},
			config: "[prepare]\nmanifest = \"../bundle/bundle.md\"\napp_version = \"3.0.0\"\n",
			flags:  prepareFlags{appVersion: "1.0.0"}, wantVersion: "1.0.0", wantHome: "agent-home"},
		{name: "environment over configuration", env: map[string]string{service.VersionEnv: "2.0.0"},
			config: "[prepare]\nmanifest = \"../bundle/bundle.md\"\napp_version = \"3.0.0\"\n", wantVersion: "2.0.0", wantHome: "agent-home"},
		{name: "configuration", config: "[prepare]\nmanifest = \"../bundle/bundle.md\"\napp_version = \"3.0.0\"\n", wantVersion: "3.0.0", wantHome: "agent-home"},
		{name: "cache home from configuration", env: map[string]string{"AMPLIFIER_AGENT_HOME": ""},
			config: "[prepare]\ncache_home = \"cache-home\"\n", flags: prepareFlags{manifest: "bundle/bundle.md", appVersion: "1.0.0"},
			wantVersion: "1.0.0", wantHome: "amplidex/cache-home"},
		{name: "default cache home", env: map[string]string{"AMPLIFIER_AGENT_HOME": ""},
			flags: prepareFlags{manifest: "bundle/bundle.md", appVersion: "1.0.0"}, wantVersion: "1.0.0", wantHome: "home/.amplifier-agent"},
		{name: "no manifest", flags: prepareFlags{appVersion: "1.0.0"}, wantErr: "no bundle manifest"},
		{name: "no version", flags: prepareFlags{manifest: "bundle/bundle.md"}, wantErr: "no application version"},
		{name: "bad version", flags: prepareFlags{manifest: "bundle/bundle.md", appVersion: "v1"}, wantErr: `--app-version: "v1" is not a semantic version`},
		{name: "bad configured version", config: "[prepare]\napp_version = \"latest\"\n", flags: prepareFlags{manifest: "bundle/bundle.md"},
			wantErr: `[prepare] app_version: "latest" is not a semantic version`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPrepareEnv(t)
			for k, v := range tc.env {
				p.env[k] = v
			}
			if tc.config != "" {
				p.writeConfig(t, tc.config)
			}
			t.Chdir(p.dir)
			a := NewApp(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, func(k string) string { return p.env[k] })
			s, err := a.prepareSetup(tc.flags)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Manifest != p.manifest {
				t.Errorf("manifest %s, want %s", s.Manifest, p.manifest)
			}
			if s.Cache.Version() != tc.wantVersion {
				t.Errorf("version %s, want %s", s.Cache.Version(), tc.wantVersion)
			}
			if want := filepath.Join(p.dir, tc.wantHome); s.Cache.Home() != want {
				t.Errorf("cache home %s, want %s", s.Cache.Home(), want)
			}
		})
	}
}

func TestPrepareCommand(t *testing.T) {
	p := newPrepareEnv(t)
	args := []string{"prepare", "--manifest", p.manifest, "--app-version", "1.0.0"}
	code, stdout, stderr := p.run(t, args...)
	if code != exitOK {
		t.Fatalf("prepare: exit %d\n%s", code, stderr)
	}
	raw, _ := os.ReadFile(p.manifest)
	k, _ := prepare.NewKey("1.0.0", raw)
	dir := filepath.Join(p.home, "cache", "prepared", "1.0.0", k.Hash)
	for _, want := range []string{"key    1.0.0/" + k.Hash + "\n", "entry  " + dir + "\n", "state  cold\n", "time   "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}

	code, stdout, stderr = p.run(t, append(args, "--json")...)
	if code != exitOK {
		t.Fatalf("prepare --json: exit %d\n%s", code, stderr)
	}
	var e prepare.Entry
	if err := json.Unmarshal([]byte(stdout), &e); err != nil {
		t.Fatalf("prepare --json printed %q: %v", stdout, err)
	}
	if e.State != prepare.StateWarm || e.Dir != dir || e.Key != k || e.Artifact != filepath.Join(dir, "prepared.json") {
		t.Errorf("prepare --json = %+v", e)
	}
}

func TestPrepareMissingDefaultProvider(t *testing.T) {
	p := newPrepareEnv(t)
	manifest := filepath.Join(p.bundle, "no-provider.md")
	code, stdout, stderr := p.run(t, "prepare", "--manifest", manifest, "--app-version", "1.0.0")
	if code != exitUsage {
		t.Errorf("exit %d, want 2", code)
	}
	// The runtime's message, word for word; then, for the bundle's author,
	// the diagnostic that says what to write.
	want := "amplidex: bundle_load_failed (protocol): " + prepare.DefaultProviderMessage + "\n"
	if !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, schema.BundleDefaultProviderMessage+" [bundle/missing-default-provider]") || stdout != "" {
		t.Errorf("stdout %q, stderr:\n%s\nwant it to start with %q", stdout, stderr, want)
	}

	code, stdout, _ = p.run(t, "prepare", "--manifest", manifest, "--app-version", "1.0.0", "--json")
	var out prepareError
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != exitUsage {
		t.Fatalf("prepare --json: exit %d, %q: %v", code, stdout, err)
	}
	if out.Code != "bundle_load_failed" || out.Classification != "protocol" || out.Message != prepare.DefaultProviderMessage || len(out.Diagnostics) == 0 ||
		out.Diagnostics[0].Code != diag.CodeBundleDefaultProvider || out.Diagnostics[0].Message != schema.BundleDefaultProviderMessage {
		t.Errorf("prepare --json = %+v", out)
	}
	if _, err := os.Stat(filepath.Join(p.home, "cache", "prepared")); !os.IsNotExist(err) {
		t.Errorf("a failed prepare wrote into the cache: %v", err)
	}
}

func TestPrepareErrors(t *testing.T) {
	p := newPrepareEnv(t)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no version", []string{"prepare", "--manifest", p.manifest}, exitUsage, "no application version"},
		{"missing manifest", []string{"prepare", "--manifest", filepath.Join(p.dir, "none.md"), "--app-version", "1.0.0"}, exitUsage, "no such file"},
		{"argument", []string{"prepare", "extra"}, exitUsage, "prepare takes no arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := p.run(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.msg) {
				t.Errorf("exit %d, stderr %q; want %d with %q", code, stderr, tc.code, tc.msg)
			}
		})
	}
}

func TestPrepareDryRun(t *testing.T) {
	p := newPrepareEnv(t)
	code, stdout, stderr := p.run(t, "prepare", "--manifest", p.manifest, "--app-version", "1.0.0", "--dry-run")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"(valid)", "agents    1: helper", "modules   4 sources, 0 repositories to fetch", "session.orchestrator  loop-basic"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(p.home); !os.IsNotExist(err) {
		t.Errorf("a dry run wrote into the cache home")
	}
}

func TestCacheClear(t *testing.T) {
	p := newPrepareEnv(t)
	for _, v := range []string{"1.0.0", "2.0.0"} {
		if code, _, stderr := p.run(t, "prepare", "--manifest", p.manifest, "--app-version", v); code != exitOK {
			t.Fatalf("prepare: %s", stderr)
		}
	}
	sibling := filepath.Join(p.home, "cache", "modules")
	if err := os.MkdirAll(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	prepared := filepath.Join(p.home, "cache", "prepared")
	for i := range 2 {
		code, stdout, stderr := p.run(t, "cache", "clear")
		if code != exitOK || stdout != prepared+"\n" {
			t.Errorf("cache clear %d: exit %d, stdout %q, stderr %q", i+1, code, stdout, stderr)
		}
		if _, err := os.Stat(prepared); !os.IsNotExist(err) {
			t.Errorf("cache clear %d left %s", i+1, prepared)
		}
	}
	if _, err := os.Stat(sibling); err != nil {
		t.Errorf("cache clear removed a sibling: %v", err)
	}
	code, stdout, _ := p.run(t, "cache", "clear", "--json")
	if code != exitOK || !strings.Contains(stdout, `"existed": false`) {
		t.Errorf("cache clear --json: exit %d, %s", code, stdout)
	}
}

func TestPostInstall(t *testing.T) {
	p := newPrepareEnv(t)
	args := []string{"post-install", "--manifest", p.manifest, "--app-version", "1.0.0"}
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"cold", args, "primed "},
		{"warm", args, "already primed: "},
		{"failure", []string{"post-install", "--manifest", filepath.Join(p.bundle, "no-provider.md"), "--app-version", "1.0.0"}, prepare.DefaultProviderMessage},
		{"no version", []string{"post-install", "--manifest", p.manifest}, "not primed: no application version"},
		{"unknown flag", append([]string{"post-install", "--from-installer"}, args[1:]...), "already primed: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := p.run(t, tc.args...)
			if code != exitOK || stdout != "" || !strings.Contains(stderr, tc.msg) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0 and %q on stderr", code, stdout, stderr, tc.msg)
			}
		})
	}
}

func TestPrepareCorpus(t *testing.T) {
	corpus := os.Getenv("AMPLIDEX_CORPUS")
	if corpus == "" {
		t.Skip("AMPLIDEX_CORPUS is not set: no corpus to test against")
	}
	p := newPrepareEnv(t)
	code, stdout, stderr := p.run(t, "prepare", "--manifest", filepath.Join(corpus, "bundle", "amplifier-agent", "bundle.md"),
		"--app-version", "0.14.1", "--dry-run", "--json")
	var d prepare.DryRun
	if code != exitOK || json.Unmarshal([]byte(stdout), &d) != nil {
		t.Fatalf("dry run: exit %d\n%s", code, stderr)
	}
	if len(d.Agents) != 6 || len(d.Modules) != 30 {
		t.Errorf("dry run: %d agents, %d module sources; want 6 and 30", len(d.Agents), len(d.Modules))
	}
	code, _, stderr = p.run(t, "prepare", "--manifest", filepath.Join(corpus, "bundle", "foundation-anchors", "bundle.md"), "--app-version", "0.14.1")
	if code != exitUsage || !strings.Contains(stderr, "amplidex: bundle_load_failed (protocol): "+prepare.DefaultProviderMessage) {
		t.Errorf("foundation-anchors: exit %d\n%s", code, stderr)
	}
}
