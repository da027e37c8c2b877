package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

// TestProjectConfigEverySurface: a team's committed configuration
// (.amplidex.toml at the project's top, or [tool.amplidex] in a
// collection's pyproject.toml) changes check, query diagnostics, watch and
// the language server alike: each reports the same diagnostics, as
// severe.
func TestProjectConfigEverySurface(t *testing.T) {
	pyproject := "[project]\nname = \"team\"\nversion = \"1.0.0\"\ndescription = \"Team\"\n"
	tests := []struct {
		name  string
		files map[string]string // below the project
		want  []string          // path:code:severity, below the collection
	}{
		{"no configuration", nil, []string{
			"agents/a.md:schema/unknown-key:error", "context/c.md:ref/mention-unresolved:error"}},
		{".amplidex.toml", map[string]string{".amplidex.toml": "[check]\nignore = [\"schema/\"]\n"}, []string{
			"context/c.md:ref/mention-unresolved:error"}},
		{"[tool.amplidex]", map[string]string{".amplifier/collections/team/pyproject.toml": pyproject +
			"\n[tool.amplidex.schema]\nunknown_key = \"warning\"\n\n[tool.amplidex.check.per-path]\n\"context/**\" = [\"ref/\"]\n"}, []string{
			"agents/a.md:schema/unknown-key:warning"}},
		// Suppression comments: the one on colour covers its diagnostic,
		// the one on description covers nothing and says so, in every
		// surface.
		{"suppression comments", map[string]string{".amplifier/collections/team/agents/a.md": "---\nname: a\n" +
			"description: A  # amplidex: ignore[ref/]\ncolour: red  # amplidex: ignore[schema/unknown-key]\n---\n"}, []string{
			"agents/a.md:suppress/unused:info", "context/c.md:ref/mention-unresolved:error"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range map[string]string{"HOME": "home", "AMPLIDEX_HOME": "amplidex", "XDG_CONFIG_HOME": "config",
				"XDG_STATE_HOME": "state", "XDG_RUNTIME_DIR": "run"} {
				env[k] = filepath.Join(t.TempDir(), v)
			}
			env["NO_COLOR"], env[service.NoSpawnEnv] = "1", "1"
			getenv := func(k string) string { return env[k] }
			project := t.TempDir()
			coll := filepath.Join(project, ".amplifier", "collections", "team")
			files := map[string]string{
				".amplifier/collections/team/pyproject.toml": pyproject,
				".amplifier/collections/team/agents/a.md":    "---\nname: a\ndescription: A\ncolour: red\n---\n",
				".amplifier/collections/team/context/c.md":   "See @team:context/none.md.\n",
			}
			for p, s := range tc.files {
				files[p] = s
			}
			for p, s := range files {
				writeFile(t, filepath.Join(project, p), s)
			}
			rel := func(path, code, sev string) string {
				r, err := filepath.Rel(coll, path)
				if err != nil {
					t.Fatal(err)
				}
				return fmt.Sprintf("%s:%s:%s", filepath.ToSlash(r), code, sev)
			}

			// check
			var stdout, stderr bytes.Buffer
			NewApp(strings.NewReader(""), &stdout, &stderr, getenv).Run(context.Background(), []string{"--project", project, "check", "--format", "json"})
			var report lint.Report
			if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
				t.Fatalf("check: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			var checked []string
			for _, d := range report.Diagnostics {
				checked = append(checked, rel(d.Path, d.Code, string(d.Severity)))
			}

			// query diagnostics, in process
			stdout.Reset()
			stderr.Reset()
			NewApp(strings.NewReader(""), &stdout, &stderr, getenv).Run(context.Background(), []string{"--project", project, "query", "diagnostics", "--json"})
			var answer query.DiagnosticsResult
			if err := json.Unmarshal(stdout.Bytes(), &answer); err != nil {
				t.Fatalf("query diagnostics: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			var queried []string
			for _, d := range answer.Diagnostics {
				queried = append(queried, rel(d.Path, d.Code, string(d.Severity)))
			}

			// watch, in process: what it prints before a change made after
			// its first line.
			watched := watchFirst(t, getenv, project, func() {
				writeFile(t, filepath.Join(coll, "agents", "z.md"), "---\nmeta: [unclosed\n---\n")
			}, func(path, code, sev string) string { return rel(path, code, sev) }, "agents/z.md:frontmatter/yaml-syntax:error")

			// the language server, on the files it serves (not context)
			s := startLSP(t, env)
			var published []string
			for _, f := range []string{"agents/a.md"} {
				path := filepath.Join(coll, f)
				text, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range s.diagnose(path, text) {
					published = append(published, rel(path, d.Code, map[int]string{1: "error", 2: "warning", 3: "info"}[d.Severity]))
				}
			}
			surfaces := map[string][]string{"check": checked, "query": queried, "watch": watched, "lsp": published}
			for name, got := range surfaces {
				want := tc.want
				if name == "lsp" {
					want = slices.DeleteFunc(slices.Clone(want), func(k string) bool { return !strings.HasPrefix(k, "agents/") })
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%s reports %q, want %q", name, got, want)
				}
			}
		})
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// watchFirst runs `watch --json` in process over the project and returns
// the diagnostics it reports first, as key makes them: what it prints
// before the one change makes, once it has printed a line.
func watchFirst(t *testing.T, getenv func(string) string, project string, change func(), key func(path, code, sev string) string, sentinel string) []string {
	t.Helper()
	out, w := io.Pipe()
	var stderr lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- NewApp(strings.NewReader(""), w, &stderr, getenv).Run(ctx, []string{"--project", project, "watch", "--json"})
		w.Close()
	}()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	defer func() {
		cancel()
		for range lines {
		}
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("watch did not end")
		}
	}()
	var got []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("watch ended; stderr: %s", stderr.String())
			}
			var ev lint.ChangeEvent
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("watch printed %q: %v", l, err)
			}
			k := key(ev.Diagnostic.Path, ev.Diagnostic.Code, string(ev.Diagnostic.Severity))
			if k == sentinel {
				return got
			}
			if ev.Event == "appeared" {
				got = append(got, k)
			}
			if len(got) == 1 {
				change()
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("watch printed no more after %q; stderr: %s", got, stderr.String())
		}
	}
}
