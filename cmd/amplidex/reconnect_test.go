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

// TestWatchGivesUpWithoutDaemon: watch whose daemon stopped, with none to
// take its place (auto-start off), looks for one for its bound, then
// exits 3 saying why, on a line of its own.
func TestWatchGivesUpWithoutDaemon(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "AMPLIDEX_HOME": filepath.Join(dir, "state"), service.NoSpawnEnv: "1"}
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
	var stderr syncBuffer
	app := NewApp(strings.NewReader(""), w, &stderr, getenv)
	app.rejoinLimit = 300 * time.Millisecond
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
	d.Close()
	select {
	case code := <-done:
		msg := stderr.String()
		t.Logf("watch exited %d: %s", code, msg)
		// The cause in brackets: the daemon's shutting-down notice, or the
		// connection's loss when the daemon closed it first.
		if code != exitUnreachable || !strings.Contains(msg, "watch: no daemon answered for 300ms after the daemon went away (") ||
			!strings.HasSuffix(msg, "\n") || strings.Contains(msg, "watching again") {
			t.Errorf("watch exited %d, saying %q", code, msg)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch goes on without a daemon")
	}
}

// TestLSPReconnects: the language server whose daemon stopped and another
// took its place (at once, or while the next question looks for it)
// answers through the new one, and says so once in its log, without
// falling back to answering in process.
func TestLSPReconnects(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "AMPLIDEX_HOME": filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"), "XDG_RUNTIME_DIR": filepath.Join(dir, "run"),
		"NO_COLOR": "1", service.NoSpawnEnv: "1"}
	coll := filepath.Join(env["HOME"], ".amplifier", "collections", "demo")
	agent := filepath.Join(coll, "agents", "helper.md")
	text := []byte("---\nmeta:\n  name: helper\n  description: Helps\nodd: 1\n---\n")
	for p, s := range map[string]string{
		filepath.Join(coll, "pyproject.toml"): "[project]\nname = \"demo\"\nversion = \"1.0.0\"\ndescription = \"Demo\"\n",
		agent:                                 string(text),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := query.DefaultPaths(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	start := func() (*daemon.Daemon, error) {
		return daemon.Start(context.Background(), daemon.Options{Paths: paths, Home: env["HOME"], NoSync: true,
			Watch: watcher.Options{Debounce: 5 * time.Millisecond}})
	}
	first, err := start()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	s := startLSP(t, env)
	check := func() {
		t.Helper()
		if ds := s.diagnose(agent, text); len(ds) != 1 || ds[0].Code != "schema/unknown-key" {
			t.Fatalf("diagnostics %+v; log:\n%s", ds, s.stderr.String())
		}
	}
	check()
	first.Close()
	// The next daemon comes up while the next question is asked.
	next := make(chan *daemon.Daemon, 1)
	go func() {
		d, err := start()
		if err != nil {
			t.Error(err)
		}
		next <- d
	}()
	defer func() {
		if d := <-next; d != nil {
			d.Close()
		}
	}()
	check()
	check()
	log := s.stderr.String()
	if !strings.Contains(log, "answering through the daemon") || strings.Count(log, "answering through a new connection") != 1 ||
		strings.Contains(log, "does not answer") {
		t.Errorf("the log says:\n%s", log)
	}
}
