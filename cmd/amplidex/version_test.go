package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
)

// TestVersion builds amplidex three times: with and without VCS stamps,
// and with a release's version stamped in, and reads what `version` and
// `--version` print: the revision of the checkout (or "revision unknown"
// for -buildvcs=false), the version, the build time and the Go version. A checkout git does not show Go as a
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

	// A release stamps its version in (.goreleaser.yaml), which wins over
	// the build information's.
	const released = "v1.2.3-stamped"
	exe := build(filepath.Join("..", ".."), "released", "-buildvcs=false", "-ldflags=-X github.com/amplidex/amplidex/query.stampedVersion="+released)
	check(exe, "")
	if text := runProgram(t, dir, exe, "version"); !strings.HasPrefix(text, "amplidex "+released+"\n") {
		t.Errorf("version of a stamped build:\n%s", text)
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
	cmd.Env = append(os.Environ(), service.NoSpawnEnv+"=1")
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

// installVersion is the version TestGoInstall publishes the work tree as.
const installVersion = "v0.0.0-installtest"

// TestGoInstall installs amplidex as `go install
// github.com/amplidex/amplidex/cmd/amplidex@latest` does, from a module
// proxy on disk that holds the work tree as installVersion (its
// dependencies come from the module cache's download directory, so
// nothing is fetched), and checks that `version` reports that version.
func TestGoInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds amplidex")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/amplidex/amplidex"
	if !strings.HasPrefix(string(gomod), "module "+module+"\n") {
		t.Fatalf("%s/go.mod is not module %s", root, module)
	}
	modcache := strings.TrimSpace(runProgram(t, "", gobin, "env", "GOMODCACHE"))
	if _, err := os.Stat(filepath.Join(modcache, "cache", "download")); err != nil {
		t.Skipf("no module cache to take the dependencies from (go mod download fills it): %v", err)
	}

	dir := t.TempDir()
	proxy := filepath.Join(dir, "proxy")
	at := filepath.Join(proxy, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`+"\n", installVersion, time.Now().UTC().Format(time.RFC3339))
	for name, data := range map[string][]byte{
		"list":                   []byte(installVersion + "\n"),
		installVersion + ".info": []byte(info),
		installVersion + ".mod":  gomod,
		installVersion + ".zip":  moduleZip(t, root, module+"@"+installVersion),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	cmd := exec.Command(gobin, "install", module+"/cmd/amplidex@latest")
	cmd.Dir = dir // outside any module
	cmd.Env = append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(modcache, "cache", "download")),
		"GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GONOPROXY=", "GOWORK=off", "GOTOOLCHAIN=local",
		"GOFLAGS=-modcacherw", // so that t.TempDir can remove the module cache
		"GOMODCACHE="+filepath.Join(dir, "modcache"),
		"GOBIN="+filepath.Join(dir, "bin"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	exe := filepath.Join(dir, "bin", "amplidex")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	var b query.Build
	if err := json.Unmarshal([]byte(runProgram(t, dir, exe, "version", "--json")), &b); err != nil {
		t.Fatal(err)
	}
	if b.Version != installVersion {
		t.Errorf("version --json of the installed amplidex: %+v, want version %s", b, installVersion)
	}
	if text := runProgram(t, dir, exe, "version"); !strings.HasPrefix(text, "amplidex "+installVersion+"\n") {
		t.Errorf("version of the installed amplidex:\n%s", text)
	}
}

// moduleZip returns the module zip of the work tree at root, its files
// under prefix ("module@version/"): those git tracks or would (not
// ignored), or every regular file outside .git when git cannot list them.
func moduleZip(t *testing.T, root, prefix string) []byte {
	t.Helper()
	var files []string
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output(); err == nil {
		for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			files = append(files, filepath.FromSlash(f))
		}
	} else {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Name() == ".git" {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				rel, _ := filepath.Rel(root, p)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		fi, err := os.Lstat(filepath.Join(root, f))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a link, which module zips do not hold
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(prefix + "/" + filepath.ToSlash(f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
