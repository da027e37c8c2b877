//go:build unix

package prepare_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/prepare"
)

// hostileDeadline bounds a call that must not block on a FIFO or read an
// endless device.
const hostileDeadline = 10 * time.Second

// within runs fn and fails the test when it has not returned after
// hostileDeadline, so that a call that hangs fails instead of hanging the
// test.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(hostileDeadline):
		t.Fatalf("%s did not return within %s", what, hostileDeadline)
	}
}

// mkfifo makes a FIFO at path, and on cleanup opens it for writing once so
// that a reader stuck in open(2) (a regression) is let go.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}

// hostileKinds are the things that may sit where a file should be, each
// made at path; a file that is too large is size bytes.
var hostileKinds = []struct {
	name string
	make func(t *testing.T, path string, size int64)
	// err is what syntax.ReadFile wraps for it.
	err error
}{
	{"FIFO", func(t *testing.T, p string, _ int64) { mkfifo(t, p) }, syntax.ErrNotRegular},
	{"link to a FIFO", func(t *testing.T, p string, _ int64) {
		mkfifo(t, p+".fifo")
		symlink(t, p+".fifo", p)
	}, syntax.ErrNotRegular},
	{"link to the zero device", func(t *testing.T, p string, _ int64) {
		if _, err := os.Stat("/dev/zero"); err != nil {
			t.Skipf("no /dev/zero: %v", err)
		}
		symlink(t, "/dev/zero", p)
	}, syntax.ErrNotRegular},
	{"larger than the limit", func(t *testing.T, p string, size int64) {
		// Sparse: the size is what counts, and it is never read.
		write(t, p, nil)
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
	}, syntax.ErrTooLarge},
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// agentManifest includes one agent, x, and has no module sources.
const agentManifest = `---
bundle:
  name: hostile
default_provider: anthropic
agents:
  include:
    - x
---
`

func TestHostileManifest(t *testing.T) {
	for _, kind := range hostileKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			manifest := filepath.Join(dir, "bundle.md")
			kind.make(t, manifest, syntax.DefaultMaxFileSize+1)
			c, err := prepare.New(prepare.Options{Home: filepath.Join(dir, "home"), Version: testVersion, Git: "false"})
			if err != nil {
				t.Fatal(err)
			}
			calls := map[string]func() error{
				"Ensure": func() error { _, err := c.Ensure(t.Context(), manifest); return err },
				"DryRun": func() error { _, err := c.DryRun(manifest); return err },
				"Lookup": func() error { _, err := c.Lookup(manifest); return err },
			}
			for name, call := range calls {
				var err error
				within(t, name, func() { err = call() })
				var pe *fs.PathError
				if !errors.Is(err, kind.err) || !errors.As(err, &pe) || pe.Path != manifest {
					t.Errorf("%s: %v, want a *fs.PathError naming %s and wrapping %v", name, err, manifest, kind.err)
				}
				if errors.Is(err, prepare.ErrMiss) || errors.Is(err, prepare.ErrBundleLoadFailed) {
					t.Errorf("%s: %v is a miss or a load failure; want a read error", name, err)
				}
			}
			if _, err := os.Stat(c.PreparedDir()); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("an unreadable manifest left %s: %v", c.PreparedDir(), err)
			}
		})
	}
}

func TestHostileAgent(t *testing.T) {
	for _, kind := range hostileKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			manifest := filepath.Join(dir, "bundle.md")
			write(t, manifest, []byte(agentManifest))
			if err := os.Mkdir(filepath.Join(dir, "agents"), 0o755); err != nil {
				t.Fatal(err)
			}
			agent := filepath.Join(dir, "agents", "x.md")
			kind.make(t, agent, syntax.DefaultMaxFileSize+1)
			c, err := prepare.New(prepare.Options{Home: filepath.Join(dir, "home"), Version: testVersion, Git: "false"})
			if err != nil {
				t.Fatal(err)
			}
			// check wants the one diagnostic: bundle/agent-missing, an
			// error at the include in the manifest, naming the file.
			check := func(what string, ds []diag.Diagnostic) {
				t.Helper()
				if len(ds) != 1 {
					t.Fatalf("%s: %d diagnostics, want 1: %v", what, len(ds), ds)
				}
				d := ds[0]
				if d.Code != diag.CodeBundleAgentMissing || d.Severity != diag.SeverityError ||
					d.Path != manifest || d.Range.Start.Line != 6 || !strings.Contains(d.Message, agent) {
					t.Errorf("%s: %s, want a bundle/agent-missing error at %s:7 naming %s", what, d, manifest, agent)
				}
			}
			for name, call := range map[string]func() error{
				"Ensure": func() error { _, err := c.Ensure(t.Context(), manifest); return err },
				"DryRun": func() error { _, err := c.DryRun(manifest); return err },
			} {
				var err error
				within(t, name, func() { err = call() })
				var me *prepare.ManifestError
				if !errors.As(err, &me) {
					t.Fatalf("%s: %v, want a *ManifestError", name, err)
				}
				check(name, me.Diagnostics)
			}
			var ds []diag.Diagnostic
			within(t, "CheckManifest", func() {
				ds = prepare.CheckManifest(manifest, []byte(agentManifest), schema.Options{})
			})
			check("CheckManifest", ds)
		})
	}
}

// entryFileTooLarge is more than the cache reads of prepared.json or
// manifest.json.
const entryFileTooLarge = 128 << 20

func TestHostileEntryFile(t *testing.T) {
	shared := newFixture(t)
	for _, file := range []string{prepare.ArtifactFile, prepare.MarkerFile} {
		for _, kind := range hostileKinds {
			t.Run(file+" "+kind.name, func(t *testing.T) {
				t.Parallel()
				f := shared.fresh(t)
				c, logs := f.cache(t)
				e := ensure(t, c, f.manifest)
				path := filepath.Join(e.Dir, file)
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				kind.make(t, path, entryFileTooLarge)

				var err error
				within(t, "Lookup", func() { _, err = c.Lookup(f.manifest) })
				if !errors.Is(err, prepare.ErrMiss) {
					t.Errorf("Lookup: %v, want ErrMiss", err)
				}
				var again prepare.Entry
				within(t, "Ensure", func() { again, err = c.Ensure(t.Context(), f.manifest) })
				if err != nil {
					t.Fatalf("Ensure: %v, want a rebuild", err)
				}
				if again.State != prepare.StateCold {
					t.Errorf("state %s, want cold", again.State)
				}
				if len(again.Warnings) != 1 || !strings.Contains(again.Warnings[0], path) {
					t.Errorf("warnings %q, want one naming %s", again.Warnings, path)
				}
				if !strings.Contains(logs.String(), "level=WARN") {
					t.Errorf("no warning in the log:\n%s", logs)
				}
				fi, err := os.Lstat(path)
				if err != nil || !fi.Mode().IsRegular() {
					t.Errorf("%s after the rebuild: %v, %v; want a regular file", path, fi, err)
				}
				if _, err := c.Lookup(f.manifest); err != nil {
					t.Errorf("Lookup after the rebuild: %v", err)
				}
			})
		}
	}
}

// TestGitOutputBounded: what a git (or the server behind it) writes is
// kept within bounds: standard output past a limit fails the fetch, and
// only the tail of standard error, in short lines, reaches the error.
func TestGitOutputBounded(t *testing.T) {
	const flood = "head -c 67108864 /dev/zero"
	tests := []struct {
		name, lsRemote string
		want           string // in every module's error
	}{
		{"standard output", flood + "; exit 0", "more than"},
		{"standard error", flood + " | tr '\\000' x >&2; printf '\\nfatal: the end\\n' >&2; exit 1", "fatal: the end"},
	}
	shared := newFixture(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := shared.fresh(t)
			git := filepath.Join(t.TempDir(), "flood-git")
			script := "#!/bin/sh\ncase \" $* \" in *\" ls-remote \"*) " + tc.lsRemote + " ;; esac\nexec git \"$@\"\n"
			write(t, git, []byte(script))
			if err := os.Chmod(git, 0o755); err != nil {
				t.Fatal(err)
			}
			c, _ := f.cache(t, func(o *prepare.Options) { o.Git = git })
			var err error
			within(t, "Ensure", func() { _, err = c.Ensure(t.Context(), f.manifest) })
			var be *prepare.BuildError
			if !errors.As(err, &be) || len(be.Modules) == 0 {
				t.Fatalf("Ensure: %.500v, want a *BuildError", err)
			}
			for _, m := range be.Modules {
				msg := m.Error()
				if len(msg) > 4096 || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "git ls-remote") {
					t.Errorf("module %s: a %d-byte error %.300q…, want one under 4 KiB from git ls-remote holding %q", m.Module, len(msg), msg, tc.want)
				}
			}
		})
	}
}
