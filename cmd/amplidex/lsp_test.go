package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// lspEnv is an environment that keeps a test away from the real home.
func lspEnv(t *testing.T) func(string) string {
	dir := t.TempDir()
	env := map[string]string{
		"HOME":            filepath.Join(dir, "home"),
		"AMPLIDEX_HOME":   filepath.Join(dir, "amplidex"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"),
		"XDG_STATE_HOME":  filepath.Join(dir, "state"),
		"XDG_RUNTIME_DIR": filepath.Join(dir, "run"),
		"NO_COLOR":        "1",
		noSpawnEnv:        "1",
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
