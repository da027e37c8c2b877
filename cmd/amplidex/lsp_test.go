package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
)

// lspEnv is an environment that keeps a test away from the real home.
func lspEnv(t *testing.T) func(string) string {
	dir := t.TempDir()
	env := map[string]string{
		"HOME":             filepath.Join(dir, "home"),
		"AMPLIDEX_HOME":    filepath.Join(dir, "amplidex"),
		"XDG_CONFIG_HOME":  filepath.Join(dir, "config"),
		"XDG_STATE_HOME":   filepath.Join(dir, "state"),
		"XDG_RUNTIME_DIR":  filepath.Join(dir, "run"),
		"NO_COLOR":         "1",
		service.NoSpawnEnv: "1",
	}
	return func(k string) string { return env[k] }
}

func frames(msgs ...string) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(m), m)
	}
	return b.String()
}

const (
	lspInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`
	lspShutdown   = `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`
	lspExit       = `{"jsonrpc":"2.0","method":"exit"}`
)

func TestLSPExitCodes(t *testing.T) {
	tests := []struct {
		name  string
		input string
		code  int
	}{
		{"shutdown then exit", frames(lspInitialize, lspShutdown, lspExit), exitOK},
		{"shutdown then end of input", frames(lspInitialize, lspShutdown), exitOK},
		{"exit without shutdown", frames(lspInitialize, lspExit), exitFailed},
		{"end of input without shutdown", frames(lspInitialize), exitFailed},
		{"nothing at all", "", exitFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			app := NewApp(strings.NewReader(tc.input), &stdout, &stderr, lspEnv(t))
			if code := app.Run(context.Background(), []string{"--project", t.TempDir(), "lsp"}); code != tc.code {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if strings.Contains(tc.input, `"initialize"`) && !strings.Contains(stdout.String(), `"positionEncoding":"utf-16"`) {
				t.Errorf("no initialize result on stdout: %q", stdout.String())
			}
		})
	}
}

func TestLSPFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	app := NewApp(strings.NewReader(""), &stdout, &stderr, lspEnv(t))
	if code := app.Run(context.Background(), []string{"lsp", "--debounce", "1h"}); code != exitUsage {
		t.Fatalf("--debounce 1h: exit code %d, want %d", code, exitUsage)
	}
	if code := app.Run(context.Background(), []string{"lsp", "extra"}); code != exitUsage {
		t.Fatalf("an argument: exit code %d, want %d", code, exitUsage)
	}
}

func TestSchema(t *testing.T) {
	tests := []struct {
		kind string
		code int
		key  string // a property the schema must describe
	}{
		{"profile", exitOK, "profile"},
		{"agent", exitOK, "meta"},
		{"bundle", exitOK, "default_provider"},
		{"workflow", exitUsage, ""},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			app := NewApp(strings.NewReader(""), &stdout, &stderr, lspEnv(t))
			if code := app.Run(context.Background(), []string{"schema", tc.kind}); code != tc.code {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			if tc.code != exitOK {
				if !strings.Contains(stderr.String(), tc.kind) {
					t.Errorf("stderr %q does not name the kind", stderr.String())
				}
				return
			}
			var schema struct {
				Schema     string                     `json:"$schema"`
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &schema); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, stdout.String())
			}
			if !strings.Contains(schema.Schema, "json-schema.org") || schema.Properties[tc.key] == nil {
				t.Errorf("schema lacks $schema or the %q property: %.300s", tc.key, stdout.String())
			}
		})
	}
	t.Run("no kind", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		app := NewApp(strings.NewReader(""), &stdout, &stderr, lspEnv(t))
		if code := app.Run(context.Background(), []string{"schema"}); code != exitUsage {
			t.Fatalf("exit code %d, want %d", code, exitUsage)
		}
	})
}

// TestLSPDeepProjectConfig: a committed amplidex.toml nested deeper than
// the bound is not decoded; the language server says so in its log,
// naming the file and where, keeps answering, and diagnoses the file with
// the user's settings.
func TestLSPDeepProjectConfig(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"repo/.git/HEAD":           "ref: refs/heads/main\n",
		"repo/amplidex.toml":       "[check]\nignore = " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n",
		"repo/team/pyproject.toml": "[project]\nname = \"team\"\nversion = \"1.0.0\"\ndescription = \"Team\"\n",
		"repo/team/agents/a.md":    "---\nmeta:\n  name: a\n---\nHi.\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	get := lspEnv(t)
	env := map[string]string{}
	for _, k := range []string{"HOME", "AMPLIDEX_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "NO_COLOR", service.NoSpawnEnv} {
		env[k] = get(k)
	}
	s := startLSP(t, env)
	agent := filepath.Join(dir, "repo/team/agents/a.md")
	ds := s.diagnose(agent, []byte(files["repo/team/agents/a.md"]))
	if len(ds) == 0 || ds[0].Code != "schema/missing-key" {
		t.Errorf("diagnostics %+v, want schema/missing-key (the user's settings)", ds)
	}
	want := filepath.Join(dir, "repo/amplidex.toml") + ":2:42: TOML not read: arrays and inline tables nest more than 32 deep"
	if log := s.stderr.String(); !strings.Contains(log, want) {
		t.Errorf("the log does not say %q:\n%.2000s", want, log)
	}
	s.call("shutdown", nil)
}
