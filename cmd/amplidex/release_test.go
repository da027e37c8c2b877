package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
)

// goreleaser is how the release is built, as .goreleaser.yaml says.
const goreleaser = "github.com/goreleaser/goreleaser/v2@v2.15.1"

// TestDebPackage builds the .deb as a release does, from .goreleaser.yaml
// cut down to this machine's Linux platform and the .deb alone (its
// output and the completions in a temporary directory), lists it with
// dpkg-deb, runs its program, and checks its units with systemd-analyze.
// It needs dpkg-deb, systemd-analyze, git, and goreleaser and the
// module's dependencies in the module cache, and fetches nothing.
func TestDebPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release")
	}
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("the packages are built for Linux on amd64 and arm64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	for _, prog := range []string{"go", "git", "dpkg-deb", "systemd-analyze"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("no %s on PATH (.ci/run installs it)", prog)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Run(); err != nil {
		t.Skipf("goreleaser needs a git checkout with a commit: %v", err)
	}
	dir := t.TempDir()
	config := releaseConfig(t, root, dir)

	// The module cache's download directory serves as the proxy: go run
	// finds goreleaser and its dependencies there, fetched and verified
	// before, and goreleaser's builds amplidex's.
	modcache := strings.TrimSpace(runProgram(t, "", "go", "env", "GOMODCACHE"))
	download := filepath.Join(modcache, "cache", "download")
	mod, version, _ := strings.Cut(goreleaser, "@")
	if _, err := os.Stat(filepath.Join(download, filepath.FromSlash(mod), "@v", version+".zip")); err != nil {
		t.Skipf("%s is not in the module cache (`go run %s check`, which .ci/run runs, fetches it): %v", goreleaser, goreleaser, err)
	}
	cmd := exec.Command("go", "run", goreleaser, "release", "--snapshot", "--clean", "--skip=archive", "--config", config)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOPROXY=file://"+filepath.ToSlash(download), "GOSUMDB=off", "GOTOOLCHAIN=local", "GOWORK=off",
		"AMPLIDEX_RELEASE_NO_VSIX=1") // the .vsix needs npm's registry
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("goreleaser: %v\n%s", err, out)
	}
	debs, _ := filepath.Glob(filepath.Join(dir, "dist", "*.deb"))
	if len(debs) != 1 {
		t.Fatalf("goreleaser made %q, want one .deb:\n%s", debs, out)
	}
	deb := debs[0]

	// The listing: path → mode, as dpkg-deb -c prints them.
	listing := runProgram(t, "", "dpkg-deb", "-c", deb)
	modes := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(listing), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 {
			modes[strings.TrimPrefix(f[5], ".")] = f[0]
		}
	}
	for path, mode := range map[string]string{
		service.PackagedExe:                                  "-rwxr-xr-x",
		"/usr/lib/systemd/user/" + service.SocketUnit:        "-rw-r--r--",
		"/usr/lib/systemd/user/" + service.ServiceUnit:       "-rw-r--r--",
		"/usr/share/bash-completion/completions/amplidex":    "-rw-r--r--",
		"/usr/share/zsh/vendor-completions/_amplidex":        "-rw-r--r--",
		"/usr/share/fish/vendor_completions.d/amplidex.fish": "-rw-r--r--",
	} {
		if modes[path] != mode {
			t.Errorf("the .deb holds %s with mode %q, want %s; it lists:\n%s", path, modes[path], mode, listing)
		}
	}

	tree := filepath.Join(dir, "root")
	runProgram(t, "", "dpkg-deb", "-x", deb, tree)
	exe := filepath.Join(tree, filepath.FromSlash(service.PackagedExe))
	var b query.Build
	if err := json.Unmarshal([]byte(runProgram(t, dir, exe, "version", "--json")), &b); err != nil {
		t.Fatal(err)
	}
	var meta struct{ Version string }
	if data, err := os.ReadFile(filepath.Join(dir, "dist", "metadata.json")); err != nil || json.Unmarshal(data, &meta) != nil || !strings.Contains(meta.Version, "-SNAPSHOT-") {
		t.Fatalf("goreleaser's metadata.json: %v, version %q", err, meta.Version)
	}
	if b.Version != "v"+meta.Version {
		t.Errorf("the packaged amplidex reports version %q, want the snapshot's, v%s", b.Version, meta.Version)
	}
	for name, head := range map[string]string{
		"usr/share/bash-completion/completions/amplidex":    "# bash completion",
		"usr/share/zsh/vendor-completions/_amplidex":        "#compdef amplidex",
		"usr/share/fish/vendor_completions.d/amplidex.fish": "# fish completion",
	} {
		if data, err := os.ReadFile(filepath.Join(tree, name)); err != nil || !bytes.HasPrefix(data, []byte(head)) {
			t.Errorf("%s: %v, does not begin with %q", name, err, head)
		}
	}

	// systemd-analyze checks ExecStart's program on this machine, where
	// the package is not installed: the units it verifies run the
	// extracted program instead, and are otherwise the packaged ones.
	units, err := service.PackagedUnits()
	if err != nil {
		t.Fatal(err)
	}
	verify := filepath.Join(dir, "verify")
	runtimeDir := filepath.Join(dir, "runtime")
	for _, d := range []string{verify, runtimeDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--user", "--man=no", "verify"}
	for _, u := range units {
		data, err := os.ReadFile(filepath.Join(tree, "usr", "lib", "systemd", "user", u.Path))
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != u.Content {
			t.Errorf("the .deb's %s is not service.PackagedUnits':\n%s", u.Path, data)
		}
		p := filepath.Join(verify, u.Path)
		data = bytes.ReplaceAll(data, []byte(`"`+service.PackagedExe+`"`), []byte(service.SystemdQuote(exe)))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	analyze := exec.Command("systemd-analyze", args...)
	analyze.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir, "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	if out, err := analyze.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// releaseConfig writes .goreleaser.yaml cut down for TestDebPackage into
// dir and returns its path: builds for this machine's Linux platform, the
// .deb alone, its output in dir/dist and the completions in
// dir/completions.
func releaseConfig(t *testing.T, root, dir string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const completions = "cmd/amplidex/packaging/completions"
	if !bytes.Contains(raw, []byte(completions)) {
		t.Fatalf(".goreleaser.yaml does not write the completions into %s", completions)
	}
	raw = bytes.ReplaceAll(raw, []byte(completions), []byte(filepath.Join(dir, "completions")))
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	cfg["dist"] = filepath.Join(dir, "dist")
	builds, _ := cfg["builds"].([]any)
	nfpms, _ := cfg["nfpms"].([]any)
	if len(builds) == 0 || len(nfpms) == 0 {
		t.Fatal(".goreleaser.yaml has no builds or no nfpms")
	}
	for _, b := range builds {
		b := b.(map[string]any)
		b["goos"] = []string{"linux"}
		b["goarch"] = []string{runtime.GOARCH}
	}
	for _, n := range nfpms {
		n.(map[string]any)["formats"] = []string{"deb"}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "goreleaser.yaml")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
