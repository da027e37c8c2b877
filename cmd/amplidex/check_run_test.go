//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheckNonRegularFile: a FIFO or a link to a device named on the
// command line, as a bundle manifest or another document, is a usage error
// naming it, from check and from prepare, and never a hang.
func TestCheckNonRegularFile(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	kinds := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"FIFO", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("no FIFOs here: %v", err)
			}
			t.Cleanup(func() {
				// Let go of a reader stuck in open(2), should one be.
				if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			})
		}, "a FIFO"},
		{"link to the zero device", func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "a character device"},
	}
	for _, kind := range kinds {
		for _, rel := range []string{"bundle.md", "profiles/dev.md", "agents/x.md"} {
			t.Run(kind.name+" "+strings.ReplaceAll(rel, "/", " "), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "work", filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				kind.make(t, path)
				env := map[string]string{
					"HOME":                 filepath.Join(dir, "home"),
					"AMPLIDEX_HOME":        filepath.Join(dir, "amplidex"),
					"AMPLIFIER_AGENT_HOME": filepath.Join(dir, "agent-home"),
					"NO_COLOR":             "1",
				}
				runs := [][]string{{"check", path}}
				if rel == "bundle.md" {
					runs = append(runs, []string{"prepare", "--manifest", path, "--app-version", "1.0.0"},
						[]string{"prepare", "--dry-run", "--manifest", path, "--app-version", "1.0.0"})
				}
				for _, args := range runs {
					code, stderr := runWithin(t, env, args)
					if code != exitUsage || !strings.Contains(stderr, path) || !strings.Contains(stderr, kind.want) {
						t.Errorf("amplidex %s: exit %d, stderr %q; want exit %d naming %s as %s",
							strings.Join(args, " "), code, stderr, exitUsage, path, kind.want)
					}
				}
			})
		}
	}
}

// runWithin runs amplidex with args and returns its exit code and
// standard error, failing the test when it has not returned within 10
// seconds.
func runWithin(t *testing.T, env map[string]string, args []string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := NewApp(strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	done := make(chan int, 1)
	go func() { done <- a.Run(context.Background(), args) }()
	select {
	case code := <-done:
		return code, stderr.String()
	case <-time.After(10 * time.Second):
		t.Fatalf("amplidex %s did not return within 10s", strings.Join(args, " "))
	}
	return 0, ""
}
