package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
	"github.com/amplidex/amplidex/watcher"
)

// TestQueryShowsRegistration: a query whose project the daemon reads for
// the first time shows, on a terminal, how far that read got, and gets
// its answer once the read ends.
func TestQueryShowsRegistration(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "AMPLIDEX_HOME": filepath.Join(dir, "state"), service.NoSpawnEnv: "1"}
	getenv := func(k string) string { return env[k] }
	project := filepath.Join(dir, "proj")
	coll := filepath.Join(project, ".amplifier", "collections", "demo")
	held := filepath.Join(coll, "agents", "helper.md")
	for p, s := range map[string]string{
		filepath.Join(coll, "pyproject.toml"): "[project]\nname = \"demo\"\nversion = \"1.0.0\"\ndescription = \"Demo\"\n",
		held:                                  "---\nmeta:\n  name: helper\n  description: Helps\n---\n",
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
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	d, err := daemon.Start(context.Background(), daemon.Options{Paths: paths, Home: env["HOME"], NoSync: true,
		Watch: watcher.Options{Debounce: 5 * time.Millisecond},
		ReadFile: func(p string) ([]byte, error) {
			if p == held {
				<-release
			}
			return os.ReadFile(p)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	var stderr syncBuffer
	a := NewApp(strings.NewReader(""), &strings.Builder{}, &stderr, getenv)
	a.line = service.NewStatusLine(&stderr, true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := query.DialSync(ctx, paths.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ws := &lint.Workspace{Paths: paths, Project: project}
	answered := make(chan error, 1)
	// A resolve is answered before the read ends (from the collections'
	// names); a listing of the collections waits for it.
	var res []query.CollectionInfo
	go func() {
		answered <- a.launcher().Call(ctx, ws, true, func(cctx context.Context) (err error) {
			res, _, err = query.Ask(cctx, c, query.MethodCollections, query.ListParams{Common: query.Common{Project: project}})
			return err
		})
	}()
	for !strings.Contains(stderr.String(), "waiting for the daemon to read the project (reading collections): ") {
		select {
		case err := <-answered:
			t.Fatalf("answered (%v) before the read ended; stderr %q", err, stderr.String())
		case <-ctx.Done():
			t.Fatalf("no progress line; stderr %q", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	free()
	select {
	case err := <-answered:
		if err != nil || len(res) != 1 || res[0].Name != "demo" {
			t.Fatalf("answer %+v, %v", res, err)
		}
	case <-ctx.Done():
		t.Fatal("no answer once the read went on")
	}
	if !strings.HasSuffix(stderr.String(), "\r\x1b[K") {
		t.Errorf("the progress line was not cleared: %q", stderr.String())
	}
}
