package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// TestWatch edits a file and reads the new diagnostic line, fixes it and
// reads the clearing line: once in process, once through a daemon.
func TestWatch(t *testing.T) {
	for _, viaDaemon := range []bool{false, true} {
		name := "in process"
		if viaDaemon {
			name = "through the daemon"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			env := map[string]string{
				"HOME": filepath.Join(dir, "home"), "AMPLIDEX_HOME": filepath.Join(dir, "state"), "NO_COLOR": "1",
				service.NoSpawnEnv: "1",
			}
			getenv := func(k string) string { return env[k] }
			project := filepath.Join(dir, "proj")
			coll := filepath.Join(project, ".amplifier", "collections", "demo")
			write := func(p, s string) {
				t.Helper()
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(filepath.Join(coll, "pyproject.toml"), "[project]\nname = \"demo\"\nversion = \"1.0.0\"\ndescription = \"Demo\"\n")
			agent := filepath.Join(coll, "agents", "helper.md")
			write(agent, "---\nmeta:\n  name: helper\n  description: Helps\n---\n")

			if viaDaemon {
				paths, err := query.DefaultPaths(getenv)
				if err != nil {
					t.Fatal(err)
				}
				d, err := daemon.Start(context.Background(), daemon.Options{Paths: paths, Home: env["HOME"], NoSync: true,
					Watch: watcher.Options{Debounce: 5 * time.Millisecond}})
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
			}

			out, w := io.Pipe()
			var stderr strings.Builder
			app := NewApp(strings.NewReader(""), w, &stderr, getenv)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int, 1)
			go func() {
				done <- app.Run(ctx, []string{"--project", project, "watch", coll})
				w.Close()
			}()
			lines := make(chan string, 16)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			next := func(want string) {
				t.Helper()
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("watch ended; stderr: %s", stderr.String())
					}
					if !strings.Contains(l, want) {
						t.Fatalf("line %q, want it to contain %q", l, want)
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("no line containing %q; stderr: %s", want, stderr.String())
				}
			}
			// Whether this write lands before or after watch has scanned, the
			// broken agent is reported: as found, or as changed.
			write(agent, "---\nmeta: [unclosed\n---\n")
			next("agents/helper.md:2:1: error: invalid YAML")
			write(agent, "---\nmeta:\n  name: helper\n  description: Helps\n---\n")
			next("agents/helper.md:2:1: cleared: invalid YAML")
			cancel()
			select {
			case code := <-done:
				// Stopped as Ctrl-C stops it: 130, as the README says.
				if code != 130 {
					t.Errorf("watch exited %d after Ctrl-C, want 130; stderr: %s", code, stderr.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatal("watch did not end after its context was cancelled")
			}
			if viaDaemon == strings.Contains(stderr.String(), "in process") {
				t.Errorf("stderr %q: wrong mode", stderr.String())
			}
		})
	}
}

// TestWatchEndsWhenProjectForgotten: `watch` through a daemon that then
// forgets the project ends, saying why on a line of its own, instead of
// waiting for changes that will never come.
func TestWatchEndsWhenProjectForgotten(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"HOME": filepath.Join(dir, "home"), "AMPLIDEX_HOME": filepath.Join(dir, "state"), "NO_COLOR": "1",
		service.NoSpawnEnv: "1",
	}
	getenv := func(k string) string { return env[k] }
	project := filepath.Join(dir, "proj")
	coll := filepath.Join(project, ".amplifier", "collections", "demo")
	for p, s := range map[string]string{
		filepath.Join(coll, "pyproject.toml"):      "[project]\nname = \"demo\"\nversion = \"1.0.0\"\ndescription = \"Demo\"\n",
		filepath.Join(coll, "agents", "helper.md"): "---\nmeta: [unclosed\n---\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := query.DefaultPaths(getenv)
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Start(context.Background(), daemon.Options{Paths: paths, Home: env["HOME"], NoSync: true,
		Watch: watcher.Options{Debounce: 5 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	out, w := io.Pipe()
	var stderr strings.Builder
	app := NewApp(strings.NewReader(""), w, &stderr, getenv)
	done := make(chan int, 1)
	go func() {
		done <- app.Run(context.Background(), []string{"--project", project, "watch"})
		w.Close()
	}()
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case first <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-first:
		if !strings.Contains(l, "invalid YAML") {
			t.Fatalf("first line %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("watch printed nothing; stderr: %s", stderr.String())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := query.Dial(ctx, paths.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := query.Call(ctx, c, query.MethodForget, query.ForgetParams{Dir: project}); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		msg := stderr.String()
		t.Logf("watch exited %d: %s", code, msg)
		if code != exitFailed || !strings.Contains(msg, "forgotten") || !strings.HasSuffix(msg, "\n") {
			t.Errorf("watch exited %d, saying %q", code, msg)
		}
	case <-ctx.Done():
		t.Fatal("watch goes on following a forgotten project")
	}
}
