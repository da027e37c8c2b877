package main

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/query"
)

// vsixScript packages the VS Code extension of one platform, with its
// binary inside; the release runs it after each build.
const vsixScript = "editors/vscode/package-target.sh"

// vscodeTargets are the VS Code targets of the release's platforms, as
// the script names them: GOOS/GOARCH → target.
var vscodeTargets = map[string]string{
	"linux/amd64":   "linux-x64",
	"linux/arm64":   "linux-arm64",
	"darwin/amd64":  "darwin-x64",
	"darwin/arm64":  "darwin-arm64",
	"windows/amd64": "win32-x64",
	"windows/arm64": "win32-arm64",
}

// postHook is the builds' post hook: the script, with the build's
// platform and binary, the release's version, and the directory written.
var postHook = regexp.MustCompile(`^sh ` + regexp.QuoteMeta(vsixScript) +
	` "\{\{ \.Os \}\}" "\{\{ \.Arch \}\}" "\{\{ \.Path \}\}" "\{\{ \.Major \}\}\.\{\{ \.Minor \}\}\.\{\{ \.Patch \}\}" (\S+)$`)

// TestReleaseVSIXConfig reads .goreleaser.yaml: every build runs the
// script after it, with the build's platform and binary, into one
// directory whose .vsix files the release attaches and SHA256SUMS lists;
// the builds' platforms are the VS Code targets (win32-arm64 included),
// each of them; the before hook prepares the extension, unless
// AMPLIDEX_RELEASE_NO_VSIX says not to.
func TestReleaseVSIXConfig(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type hook struct {
		Cmd string `yaml:"cmd"`
	}
	type glob struct {
		Glob string `yaml:"glob"`
	}
	var cfg struct {
		Before struct {
			Hooks []string `yaml:"hooks"`
		} `yaml:"before"`
		Builds []struct {
			Goos   []string `yaml:"goos"`
			Goarch []string `yaml:"goarch"`
			Hooks  struct {
				Post []hook `yaml:"post"`
			} `yaml:"hooks"`
		} `yaml:"builds"`
		Checksum struct {
			ExtraFiles []glob `yaml:"extra_files"`
		} `yaml:"checksum"`
		Release struct {
			ExtraFiles []glob `yaml:"extra_files"`
		} `yaml:"release"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(cfg.Builds) == 0 {
		t.Fatal(".goreleaser.yaml has no builds")
	}
	targets := map[string]bool{}
	var outdir string
	for i, b := range cfg.Builds {
		var cmd string
		for _, h := range b.Hooks.Post {
			if strings.Contains(h.Cmd, vsixScript) {
				cmd = h.Cmd
			}
		}
		m := postHook.FindStringSubmatch(cmd)
		if m == nil {
			t.Fatalf("build %d: post hook %q, want %s", i, cmd, postHook)
		}
		if outdir != "" && m[1] != outdir {
			t.Errorf("build %d writes its .vsix into %s, another into %s", i, m[1], outdir)
		}
		outdir = m[1]
		for _, goos := range b.Goos {
			for _, goarch := range b.Goarch {
				target, ok := vscodeTargets[goos+"/"+goarch]
				if !ok {
					t.Errorf("build %d: %s/%s has no VS Code target", i, goos, goarch)
				}
				targets[target] = true
			}
		}
	}
	for platform, target := range vscodeTargets {
		if !targets[target] {
			t.Errorf("no build for %s: no %s .vsix", platform, target)
		}
	}
	want := outdir + "/amplidex-*.vsix"
	if len(cfg.Release.ExtraFiles) != 1 || cfg.Release.ExtraFiles[0].Glob != want {
		t.Errorf("release.extra_files %+v, want the glob %s", cfg.Release.ExtraFiles, want)
	}
	if len(cfg.Checksum.ExtraFiles) != 1 || cfg.Checksum.ExtraFiles[0].Glob != want {
		t.Errorf("checksum.extra_files %+v, want the glob %s", cfg.Checksum.ExtraFiles, want)
	}
	prepared := false
	for _, h := range cfg.Before.Hooks {
		if strings.Contains(h, "npm ci") && strings.Contains(h, "npm run build") && strings.Contains(h, "AMPLIDEX_RELEASE_NO_VSIX") &&
			strings.Contains(h, "rm -rf release") {
			prepared = true
		}
	}
	if !prepared {
		t.Errorf("no before hook cleans %s and runs npm ci and npm run build (unless AMPLIDEX_RELEASE_NO_VSIX):\n%q", outdir, cfg.Before.Hooks)
	}
}

// TestVSIXPackage runs the release's script as the post hook does: on a
// binary built here for this machine's Linux or macOS, it writes the
// .vsix of the platform's target, holding the binary (executable, the
// same bytes, reporting its version), the bundled script and a manifest
// of the version asked for; on a binary for Windows, bin/amplidex.exe.
// It needs node and the extension's node_modules (`npm ci` in
// editors/vscode, which .ci/run does) and skips, saying so, without them.
func TestVSIXPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("packages the extension")
	}
	host, ok := vscodeTargets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok || runtime.GOOS == "windows" {
		t.Skipf("the script runs on Linux and macOS on amd64 and arm64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	for _, prog := range []string{"node", "npm", "sh"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("no %s on PATH to package the extension with; skipping", prog)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "editors", "vscode", "node_modules", ".bin", "vsce")); err != nil {
		t.Skip("editors/vscode has no node_modules with vsce (npm ci there installs them; .ci/run does); skipping")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "amplidex")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	built, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "release")
	run := func(goos, goarch string) {
		t.Helper()
		cmd := exec.Command("sh", filepath.Join(root, filepath.FromSlash(vsixScript)), goos, goarch, bin, "1.2.3", out)
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "AMPLIDEX_RELEASE_NO_VSIX=") })
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s %s: %v\n%s", vsixScript, goos, goarch, err, b)
		}
	}
	run(runtime.GOOS, runtime.GOARCH)
	run("windows", "amd64")

	for target, exe := range map[string]string{host: "amplidex", "win32-x64": "amplidex.exe"} {
		p := filepath.Join(out, "amplidex-"+target+"-1.2.3.vsix")
		files := readVSIX(t, p)
		b, ok := files["extension/bin/"+exe]
		if !ok || string(b.data) != string(built) {
			t.Fatalf("%s holds no extension/bin/%s with the binary; it holds %q", p, exe, slices.Sorted(maps.Keys(files)))
		}
		if b.mode&0o111 != 0o111 {
			t.Errorf("%s: extension/bin/%s has mode %v, want it executable", p, exe, b.mode)
		}
		for _, name := range []string{"extension/out/extension.js", "extension/package.json", "extension.vsixmanifest"} {
			if _, ok := files[name]; !ok {
				t.Errorf("%s holds no %s", p, name)
			}
		}
		if m := string(files["extension.vsixmanifest"].data); !strings.Contains(m, fmt.Sprintf(`TargetPlatform=%q`, target)) || !strings.Contains(m, `Version="1.2.3"`) {
			t.Errorf("%s: the manifest says no target %s, version 1.2.3:\n%s", p, target, m)
		}
		var pkg struct {
			Version string
			Scripts map[string]string
		}
		if err := json.Unmarshal(files["extension/package.json"].data, &pkg); err != nil || pkg.Version != "1.2.3" {
			t.Errorf("%s: package.json version %q (%v), want 1.2.3", p, pkg.Version, err)
		}
		var others []string
		for name := range files {
			if strings.HasPrefix(name, "extension/bin/") && name != "extension/bin/"+exe {
				others = append(others, name)
			}
		}
		if len(others) > 0 {
			t.Errorf("%s holds other binaries too: %q", p, others)
		}
		if target != host {
			continue
		}
		// The binary as the extension runs it.
		x := filepath.Join(tmp, "extracted")
		if err := os.WriteFile(x, b.data, 0o755); err != nil {
			t.Fatal(err)
		}
		var info query.Build
		if err := json.Unmarshal([]byte(runProgram(t, tmp, x, "version", "--json")), &info); err != nil || info.Version == "" {
			t.Errorf("the bundled amplidex's version --json: %+v (%v)", info, err)
		}
	}
}

// vsixFile is one file of a .vsix: its bytes and mode.
type vsixFile struct {
	data []byte
	mode os.FileMode
}

// readVSIX reads every file of the .vsix (a zip) at p.
func readVSIX(t *testing.T, p string) map[string]vsixFile {
	t.Helper()
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	defer zr.Close()
	out := map[string]vsixFile{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s: %s: %v", p, f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %s: %v", p, f.Name, err)
		}
		out[f.Name] = vsixFile{data: b, mode: f.Mode()}
	}
	return out
}
