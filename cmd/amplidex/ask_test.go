package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
	"github.com/amplidex/amplidex/query/server"
)

// askDaemon is a stand-in daemon for `query resolve`: it answers resolve
// and version, as a foreground daemon of the given build, and counts
// both.
type askDaemon struct {
	build             query.Build
	resolves, version atomic.Int32
}

func (d *askDaemon) mux() *query.Mux {
	m := query.NewMux()
	query.Handle(m, query.MethodResolve, func(_ context.Context, p query.NameParams) (*query.ResolveResult, error) {
		d.resolves.Add(1)
		return d.resolve(p.Name), nil
	})
	query.Handle(m, query.MethodVersion, func(context.Context, query.VersionParams) (*query.DaemonInfo, error) {
		d.version.Add(1)
		return d.info(), nil
	})
	return m
}

func (d *askDaemon) resolve(name string) *query.ResolveResult {
	return &query.ResolveResult{Name: name, Found: true,
		Winner: &query.CollectionInfo{Name: name, Version: "1.0.0", Root: "user", Dir: "/c/" + name, Valid: true, Status: "active"}}
}

func (d *askDaemon) info() *query.DaemonInfo {
	return &query.DaemonInfo{PID: 4321, Build: d.build, Mode: query.ModeForeground}
}

// askEnv is the environment of an App whose daemon socket is in a fresh
// AMPLIDEX_HOME, with auto-start off; it returns the socket's path.
func askEnv(t *testing.T) (getenv func(string) string, socket string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "ask")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	env := map[string]string{
		"HOME":             filepath.Join(dir, "home"),
		"AMPLIDEX_HOME":    filepath.Join(dir, "amplidex"),
		"XDG_CONFIG_HOME":  filepath.Join(dir, "config"),
		"XDG_STATE_HOME":   filepath.Join(dir, "state"),
		"XDG_RUNTIME_DIR":  filepath.Join(dir, "run"),
		"NO_COLOR":         "1",
		service.NoSpawnEnv: "1",
	}
	return func(k string) string { return env[k] }, filepath.Join(env["AMPLIDEX_HOME"], "amplidex.sock")
}

// runResolve runs `amplidex query resolve foundation` against the daemon
// on socket.
func runResolve(t *testing.T, getenv func(string) string) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	app := NewApp(strings.NewReader(""), &out, &errb, getenv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if code := app.Run(ctx, []string{"--project", t.TempDir(), "query", "resolve", "foundation"}); code != exitOK {
		t.Fatalf("exit code %d; stderr:\n%s", code, errb.String())
	}
	return out.String(), errb.String()
}

// TestQueryChecksBuildWithTheQuestion: a query to a daemon of this build
// asks it nothing but the question; one of another build says so, and the
// question it refused is asked again (after what connect would do: here,
// leave a foreground daemon alone).
func TestQueryChecksBuildWithTheQuestion(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build query.Build
		// version is how many times the client asks "version".
		version int32
		stderr  string
	}{
		{"same build", query.ReadBuild(), 0, ""},
		{"another build", query.Build{Version: "v0.0.1", Revision: "feed", GoVersion: "go1.0", Platform: "plan9/386"}, 1,
			"amplidex: the daemon (pid 4321) runs another build: v0.0.1 (feed, go1.0 plan9/386); this is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv, socket := askEnv(t)
			d := &askDaemon{build: tc.build}
			srv := server.New(d.mux(), nil)
			srv.Build = tc.build
			if err := srv.Listen(socket); err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			stdout, stderr := runResolve(t, getenv)
			if !strings.HasPrefix(stdout, "foundation  1.0.0  user  /c/foundation") {
				t.Errorf("stdout %q, want the answer", stdout)
			}
			if tc.stderr == "" && stderr != "" || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
			if n := d.version.Load(); n != tc.version {
				t.Errorf("version asked %d times, want %d", n, tc.version)
			}
			if n := d.resolves.Load(); n != 1 {
				t.Errorf("resolve run %d times, want once", n)
			}
		})
	}
}

// TestQueryOfOlderDaemon: a daemon older than the build check refuses a
// request that names a build as invalid; the client then asks its
// version, names it, and asks again without.
func TestQueryOfOlderDaemon(t *testing.T) {
	getenv, socket := askEnv(t)
	d := &askDaemon{build: query.Build{Version: "v0.0.1", Revision: "feed", GoVersion: "go1.0", Platform: "plan9/386"}}
	if err := os.MkdirAll(filepath.Dir(socket), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go serveOlder(ln, d)
	stdout, stderr := runResolve(t, getenv)
	if !strings.HasPrefix(stdout, "foundation  1.0.0  user  /c/foundation") {
		t.Errorf("stdout %q, want the answer", stdout)
	}
	if !strings.Contains(stderr, "runs another build: v0.0.1 (feed, go1.0 plan9/386)") || !strings.Contains(stderr, "restart it to use this one") {
		t.Errorf("stderr %q, want the other build named", stderr)
	}
	if v, r := d.version.Load(), d.resolves.Load(); v != 1 || r != 1 {
		t.Errorf("version asked %d times and resolve run %d times, want once each", v, r)
	}
}

// serveOlder answers on ln as a daemon older than Request.Build did: a
// request with any member but id, method and params is invalid.
func serveOlder(ln net.Listener, d *askDaemon) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer nc.Close()
			sc := bufio.NewScanner(nc)
			for n := 1; sc.Scan(); n++ {
				var req struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
				}
				dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
				dec.DisallowUnknownFields()
				err := dec.Decode(&req)
				resp := map[string]any{"id": req.ID}
				if err != nil {
					resp["error"] = query.Errorf(query.CodeInvalidRequest, "line %d: decode request: %s", n, strings.TrimPrefix(err.Error(), "json: "))
				} else {
					switch req.Method {
					case "version":
						d.version.Add(1)
						resp["result"] = d.info()
					case "resolve":
						var p query.NameParams
						json.Unmarshal(req.Params, &p)
						d.resolves.Add(1)
						resp["result"] = d.resolve(p.Name)
					default:
						resp["error"] = query.Errorf(query.CodeUnknownMethod, "%s", req.Method)
					}
				}
				line, _ := json.Marshal(resp)
				if _, err := fmt.Fprintf(nc, "%s\n", line); err != nil {
					return
				}
			}
		}()
	}
}

// syncBuffer is a bytes.Buffer safe for the status line's writes from
// the watcher's goroutine.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestQuestionShowsScanProgress: a question the daemon does not answer at
// once, while its first scan runs, shows how far the scan got on the
// status line, and clears it once answered.
func TestQuestionShowsScanProgress(t *testing.T) {
	_, socket := askEnv(t)
	release := make(chan struct{})
	m := query.NewMux()
	query.Handle(m, query.MethodResolve, func(ctx context.Context, p query.NameParams) (*query.ResolveResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return (&askDaemon{}).resolve(p.Name), nil
	})
	query.Handle(m, query.MethodStatus, func(context.Context, query.StatusParams) (*query.Status, error) {
		return &query.Status{Scanning: true, Progress: &query.ScanProgress{Phase: "reading roots", Files: 12, Collections: 3, Elapsed: "2s"}}, nil
	})
	srv := server.New(m, nil)
	if err := srv.Listen(socket); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	var stderr syncBuffer
	a := NewApp(strings.NewReader(""), &bytes.Buffer{}, &stderr, nil)
	a.line = service.NewStatusLine(&stderr, true)
	ws := &lint.Workspace{Paths: query.Paths{Socket: socket}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := query.DialSync(ctx, socket)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const want = "amplidex: waiting for the daemon's first scan: 12 files, 3 collections, 2s"
	go func() {
		for !strings.Contains(stderr.String(), want) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond) // polls a condition; no timing asserted
		}
		close(release)
	}()
	var res *query.ResolveResult
	err = a.launcher().Call(ctx, ws, true, func(cctx context.Context) (err error) {
		res, _, err = query.Ask(cctx, s, query.MethodResolve, query.NameParams{Name: "foundation"})
		return err
	})
	if err != nil || res == nil || !res.Found {
		t.Fatalf("answer %+v, %v", res, err)
	}
	if out := stderr.String(); !strings.Contains(out, want) || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("stderr %q: want the progress line, then cleared", out)
	}
}
