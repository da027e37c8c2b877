//go:build unix

package prepare_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/prepare"
)

// stallServer listens on 127.0.0.1, accepts every connection and never
// answers, as a remote that hangs does. It returns the address and a
// channel that receives once per accepted connection. The connections are
// closed on cleanup.
func stallServer(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.1: %v", err)
	}
	acc := make(chan struct{}, 64)
	var (
		mu    sync.Mutex // guards fields below
		conns []net.Conn
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			select {
			case acc <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), acc
}

// stallURL returns a repository URL on the server at addr that no other
// test uses, so that the processes working on it can be told by their
// command lines.
func stallURL(addr string) string {
	var nonce [8]byte
	rand.Read(nonce[:])
	return fmt.Sprintf("http://%s/stall-%s.git", addr, hex.EncodeToString(nonce[:]))
}

// replaceSource rewrites the source old in the fixture's manifest to new.
func (f *fixture) replaceSource(t *testing.T, old, new string) {
	t.Helper()
	raw, err := os.ReadFile(f.manifest)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(old)) {
		t.Fatalf("%s has no source %s", f.manifest, old)
	}
	if err := os.WriteFile(f.manifest, bytes.ReplaceAll(raw, []byte(old), []byte(new)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// envGit writes a git that records its environment in the returned file,
// one variable a line, and runs the real git.
func envGit(t *testing.T) (git, env string) {
	t.Helper()
	dir := t.TempDir()
	git, env = filepath.Join(dir, "env-git"), filepath.Join(dir, "env")
	script := "#!/bin/sh\nenv > '" + env + "'\nexec git \"$@\"\n"
	if err := os.WriteFile(git, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return git, env
}

// TestGitEnvironment checks the environment git runs in: no variable that
// points it at another repository, no prompt, and a bound on a stalled
// transfer unless the user's environment sets one.
func TestGitEnvironment(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		env  map[string]string // "" unsets
		want []string
	}{
		{
			name: "defaults",
			env:  map[string]string{"GIT_HTTP_LOW_SPEED_LIMIT": "", "GIT_HTTP_LOW_SPEED_TIME": ""},
			want: []string{"GIT_HTTP_LOW_SPEED_LIMIT=" + prepare.LowSpeedLimit, "GIT_HTTP_LOW_SPEED_TIME=" + prepare.LowSpeedTime},
		},
		{
			name: "the user's bound",
			env:  map[string]string{"GIT_HTTP_LOW_SPEED_LIMIT": "5", "GIT_HTTP_LOW_SPEED_TIME": "0"},
			want: []string{"GIT_HTTP_LOW_SPEED_LIMIT=5", "GIT_HTTP_LOW_SPEED_TIME=0"},
		},
		{
			name: "the user's time only",
			env:  map[string]string{"GIT_HTTP_LOW_SPEED_LIMIT": "", "GIT_HTTP_LOW_SPEED_TIME": "7"},
			want: []string{"GIT_HTTP_LOW_SPEED_LIMIT=" + prepare.LowSpeedLimit, "GIT_HTTP_LOW_SPEED_TIME=7"},
		},
		{
			name: "a hook's repository and prompt",
			env:  map[string]string{"GIT_DIR": "/elsewhere/.git", "GIT_INDEX_FILE": "/elsewhere/index", "GIT_TERMINAL_PROMPT": "1"},
			want: []string{"GIT_TERMINAL_PROMPT=0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
				if v == "" {
					os.Unsetenv(k)
				}
			}
			git, envFile := envGit(t)
			g := f.fresh(t)
			c, _ := g.cache(t, func(o *prepare.Options) { o.Git = git })
			ensure(t, c, g.manifest)
			data, err := os.ReadFile(envFile)
			if err != nil {
				t.Fatalf("git did not run: %v", err)
			}
			got := make(map[string][]string)
			for _, kv := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				name, _, _ := strings.Cut(kv, "=")
				got[name] = append(got[name], kv)
			}
			for _, w := range tc.want {
				name, _, _ := strings.Cut(w, "=")
				if len(got[name]) != 1 || got[name][0] != w {
					t.Errorf("git's environment has %q, want %q", got[name], w)
				}
			}
			for k := range tc.env {
				if k == "GIT_DIR" || k == "GIT_INDEX_FILE" {
					if len(got[k]) > 0 {
						t.Errorf("git's environment has %q", got[k])
					}
				}
			}
		})
	}
}

// TestStalledFetchEnds fetches from a remote that accepts and never
// answers: git gives up by itself once the transfer has been too slow for
// GIT_HTTP_LOW_SPEED_TIME, here the user's one second with the cache's
// limit, and the build fails saying so.
func TestStalledFetchEnds(t *testing.T) {
	addr, accepted := stallServer(t)
	f := newFixture(t)
	url := stallURL(addr)
	f.replaceSource(t, "git+file://"+f.repos["a"], "git+"+url)
	t.Setenv("GIT_HTTP_LOW_SPEED_LIMIT", "")
	os.Unsetenv("GIT_HTTP_LOW_SPEED_LIMIT")
	t.Setenv("GIT_HTTP_LOW_SPEED_TIME", "1")
	c, _ := f.cache(t, func(o *prepare.Options) { o.Git = "git" })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Ensure(ctx, f.manifest)
		errc <- err
	}()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "too slow") {
			t.Errorf("Ensure: %v, want git's error for %s saying it was too slow", err, url)
		}
	case <-time.After(childDeadline):
		t.Fatalf("a stalled fetch did not end within %s", childDeadline)
	}
	select {
	case <-accepted:
	default:
		t.Error("git never reached the remote")
	}
}
