package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/query"
)

// TestVersion builds amplidex twice, with and without VCS stamps, and
// reads what `version` and `--version` print: the revision of the checkout
// (or "revision unknown" for -buildvcs=false), the module version, the
// build time and the Go version. A checkout git does not show Go as a
// repository (a linked work tree, whose .git is a file) is cloned first.
func TestVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds amplidex")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	goVersion := strings.TrimSpace(runProgram(t, "", "go", "env", "GOVERSION"))
	platform := runtime.GOOS + "/" + runtime.GOARCH
	dir := t.TempDir()
	build := func(src, out string, flags ...string) string {
		t.Helper()
		exe := filepath.Join(dir, out)
		runProgram(t, src, "go", append(append([]string{"build"}, flags...), "-o", exe, "./cmd/amplidex")...)
		return exe
	}
	check := func(exe, revision string) {
		t.Helper()
		text := runProgram(t, dir, exe, "version")
		if flag := runProgram(t, dir, exe, "--version"); flag != text {
			t.Errorf("--version:\n%s\nversion:\n%s", flag, text)
		}
		for _, re := range []string{`^amplidex \S+\n`, `(?m)^built\s+\d{4}-\d\d-\d\dT`, `(?m)^go\s+` + regexp.QuoteMeta(goVersion+" "+platform) + `$`} {
			if !regexp.MustCompile(re).MatchString(text) {
				t.Errorf("version does not match %s:\n%s", re, text)
			}
		}
		var b query.Build
		if err := json.Unmarshal([]byte(runProgram(t, dir, exe, "version", "--json")), &b); err != nil {
			t.Fatal(err)
		}
		if b.GoVersion != goVersion || b.Platform != platform || b.Built.IsZero() || b.Version == "" {
			t.Errorf("version --json: %+v", b)
		}
		if revision == "" {
			if b.Revision != "" || !strings.Contains(text, "revision  unknown") {
				t.Errorf("built without VCS stamps, version says:\n%s", text)
			}
			return
		}
		if b.Revision != revision || !strings.Contains(text, "revision  "+revision) {
			t.Errorf("revision %q, want %q:\n%s", b.Revision, revision, text)
		}
	}

	repo, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Logf("no git checkout (%v): only the build without VCS stamps", err)
		check(build(filepath.Join("..", ".."), "plain", "-buildvcs=false"), "")
		return
	}
	top := strings.TrimSpace(string(repo))
	check(build(top, "plain", "-buildvcs=false"), "")

	src := top
	if fi, err := os.Stat(filepath.Join(top, ".git")); err != nil || !fi.IsDir() {
		src = filepath.Join(dir, "clone")
		runProgram(t, "", "git", "clone", "-q", "--shared", top, src)
	}
	head := strings.TrimSpace(runProgram(t, src, "git", "rev-parse", "HEAD"))
	check(build(src, "stamped", "-buildvcs=true"), head)
}

// runProgram runs a program in dir and returns its stdout, failing t when it
// fails.
func runProgram(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), noSpawnEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}
