package prepare_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/amplidex/amplidex/prepare"
	"github.com/rogpeppe/go-internal/txtar"
)

// testVersion is the application version the tests prepare under.
const testVersion = "1.2.3"

// fixture is a bundle whose module sources are local git repositories, a
// cache home, and a git wrapper that logs what it is asked to do.
type fixture struct {
	root      string
	home      string // cache home
	bundleDir string
	manifest  string            // bundle.md
	repos     map[string]string // "a", "b", "c" → repository directory
	git       string            // the wrapper
	gitLog    string            // one line per clone, fetch or ls-remote
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{
		root:      root,
		home:      filepath.Join(root, "home", ".amplifier-agent"),
		bundleDir: filepath.Join(root, "bundle"),
		repos:     make(map[string]string),
		git:       filepath.Join(root, "git-wrapper"),
		gitLog:    filepath.Join(root, "git.log"),
	}
	f.manifest = filepath.Join(f.bundleDir, "bundle.md")
	unpack(t, "repos.txtar", filepath.Join(root, "repos"), nil)
	for _, name := range []string{"a", "b", "c"} {
		dir := filepath.Join(root, "repos", name)
		gitInit(t, dir)
		f.repos[name] = dir
	}
	unpack(t, "bundle.txtar", f.bundleDir, map[string]string{
		"${REPO_A}": "git+file://" + f.repos["a"],
		"${REPO_B}": "git+file://" + f.repos["b"],
		"${REPO_C}": "git+file://" + f.repos["c"],
	})
	f.writeWrapper(t)
	return f
}

// fresh returns a fixture over the same repositories and bundle with a
// cache home and a git log of its own, for parallel subtests.
func (f *fixture) fresh(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	g := *f
	g.home = filepath.Join(root, "home", ".amplifier-agent")
	g.git = filepath.Join(root, "git-wrapper")
	g.gitLog = filepath.Join(root, "git.log")
	g.writeWrapper(t)
	return &g
}

// writeWrapper writes the git wrapper that logs clones, fetches and
// ls-remotes into f.gitLog.
func (f *fixture) writeWrapper(t testing.TB) {
	t.Helper()
	script := "#!/bin/sh\nfor a in \"$@\"; do\n\tcase \"$a\" in\n\tclone|fetch|ls-remote) printf '%s %s\\n' \"$a\" \"$*\" >> '" +
		f.gitLog + "'; break ;;\n\tesac\ndone\nexec git \"$@\"\n"
	if err := os.WriteFile(f.git, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// unpack writes the files of testdata/name into dir, replacing each key of
// vars by its value.
func unpack(t testing.TB, name, dir string, vars map[string]string) {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range ar.Files {
		data := string(file.Data)
		for k, v := range vars {
			data = strings.ReplaceAll(data, k, v)
		}
		p := filepath.Join(dir, filepath.FromSlash(file.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitInit makes dir a repository on branch main with one commit of its
// files, and returns that commit.
func gitInit(t testing.TB, dir string) string {
	t.Helper()
	gitRun(t, dir, "init", "-q", "-b", "main")
	return gitCommit(t, dir, "initial")
}

// gitCommit commits everything in dir and returns the new commit.
func gitCommit(t testing.TB, dir, msg string) string {
	t.Helper()
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "-c", "user.name=amplidex", "-c", "user.email=amplidex@example.invalid",
		"-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", msg)
	return gitRun(t, dir, "rev-parse", "HEAD")
}

// gitRun runs git in dir, isolated from the user's configuration, and
// returns its trimmed output.
func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitCalls returns the logged git calls whose subcommand is cmd.
func (f *fixture) gitCalls(t testing.TB, cmd string) []string {
	t.Helper()
	data, err := os.ReadFile(f.gitLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, cmd+" ") {
			out = append(out, line)
		}
	}
	return out
}

// cache returns a Cache over the fixture's home, logging into the returned
// buffer.
func (f *fixture) cache(t testing.TB, mod ...func(*prepare.Options)) (*prepare.Cache, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	opts := prepare.Options{
		Home:    f.home,
		Version: testVersion,
		Git:     f.git,
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, m := range mod {
		m(&opts)
	}
	c, err := prepare.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, logs
}

// ensure calls Ensure and fails the test on error.
func ensure(t testing.TB, c *prepare.Cache, manifest string) prepare.Entry {
	t.Helper()
	e, err := c.Ensure(context.Background(), manifest)
	if err != nil {
		t.Fatalf("Ensure(%s): %v", manifest, err)
	}
	return e
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex // guards fields below
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
