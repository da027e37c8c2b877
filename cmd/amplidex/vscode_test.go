//go:build linux

package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/rogpeppe/go-internal/txtar"
)

// e2eTools is what editors/vscode/e2e/setup.sh installed: the lines of its
// file "ready".
type e2eTools struct {
	node, codeServer, nodePath, chromium string
}

// findE2ETools reads the file "ready" of the VS Code end-to-end toolchain:
// $AMPLIDEX_E2E_HOME, else ${XDG_CACHE_HOME:-~/.cache}/amplidex-e2e, as
// setup.sh decides it. It returns why not when there is none.
func findE2ETools() (e2eTools, string) {
	dir := os.Getenv("AMPLIDEX_E2E_HOME")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return e2eTools{}, "no home directory to find the toolchain in"
			}
			cache = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(cache, "amplidex-e2e")
	}
	b, err := os.ReadFile(filepath.Join(dir, "ready"))
	if err != nil {
		return e2eTools{}, fmt.Sprintf("code-server is not set up in %s (editors/vscode/e2e/setup.sh installs it; .ci/run runs it)", dir)
	}
	var t e2eTools
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "node":
			t.node = v
		case "code_server":
			t.codeServer = v
		case "node_path":
			t.nodePath = v
		case "chromium":
			t.chromium = v
		}
	}
	for _, p := range []string{t.node, t.codeServer, t.nodePath, t.chromium} {
		if _, err := os.Stat(p); p == "" || err != nil {
			return e2eTools{}, fmt.Sprintf("the toolchain in %s is incomplete (%q is missing); run editors/vscode/e2e/setup.sh again", dir, p)
		}
	}
	return t, ""
}

// e2eStep is one step of the driver's result.
type e2eStep struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	MS     int    `json:"ms"`
}

// TestVSCodeEndToEnd installs the extension's .vsix into code-server (the
// real VS Code workbench), opens a project in headless chromium and checks
// in the page, as a user sees them: a misspelt key's squiggle and its
// Problems entry with amplidex's code, completion of front matter keys
// and of agent names, the extends chain on hover, a quick fix that clears
// its diagnostic, go-to-definition of an agent, and the merged profile
// showing an inherited key and following an edit; then the extension's
// commands: check into the Problems panel, the daemon's status, a restart
// of the language server, and its logs saying which binary runs; last,
// fix on save (source.fixAll.amplidex) writing the fixed file. The status
// bar follows the language server's notifications. Then, in a bundle
// repository: a behavior's misspelt agent name in the Problems panel,
// completion of an include, the composed bundle of the behavior (the root
// bundle's, with the unresolved agent) following an unsaved fix, and the
// behavior deleted on disk putting a diagnostic on the bundle.md that
// includes it, with no edit, which clears once the file is back. The
// language server starts the daemon, which is stopped at the end; no
// process is left.
//
// The .vsix installed holds the binary the test built, as a platform's
// .vsix of the release does, and no amplidex is on PATH: the extension
// runs its bundled binary, until the test sets amplidex.path, which
// restarts the language server with the setting's (the same build).
//
// It needs the toolchain editors/vscode/e2e/setup.sh installs, and the
// .vsix: $AMPLIDEX_VSIX, else one packaged here from editors/vscode (whose
// node_modules `npm ci` installs). It skips, saying why, without them.
func TestVSCodeEndToEnd(t *testing.T) {
	tools, why := findE2ETools()
	if why != "" {
		t.Skip(why + "; skipping the VS Code end-to-end test")
	}
	tmp := t.TempDir()
	// Last of all: nothing the test started may outlive it.
	t.Cleanup(func() {
		deadline := time.Now().Add(15 * time.Second)
		for {
			left := markedProcesses(tmp)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("processes left running (killed now):\n%s", strings.Join(left, "\n"))
				for _, l := range left {
					pid, _ := strconv.Atoi(strings.Fields(l)[0])
					syscall.Kill(pid, syscall.SIGKILL)
				}
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	bin := filepath.Join(tmp, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "amplidex"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	amplidex := filepath.Join(bin, "amplidex")
	vsix := withBinary(t, vsixUnderTest(t, tools, tmp), amplidex, tmp)

	ar, err := txtar.ParseFile(filepath.Join("testdata", "vscode.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(tmp, "work")
	for _, f := range ar.Files {
		p := filepath.Join(work, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	project := filepath.Join(work, "project")
	// The bundle repository of the steps after the collection's.
	bar, err := txtar.ParseFile(filepath.Join("testdata", "bundlerepo.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range bar.Files {
		p := filepath.Join(work, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo := filepath.Join(work, "repo")

	// Everything runs with its own home; the daemon the language server
	// starts has its own AMPLIDEX_HOME. The mark of the test run
	// (testRunEnv) goes down to every process, the daemon included.
	vars := map[string]string{
		"HOME":             filepath.Join(tmp, "home"),
		"AMPLIDEX_HOME":    filepath.Join(tmp, "amplidex-home"),
		"AMPLIDEX_BUNDLED": "",
		"XDG_CONFIG_HOME":  filepath.Join(tmp, "config"),
		"XDG_DATA_HOME":    filepath.Join(tmp, "data"),
		"XDG_STATE_HOME":   filepath.Join(tmp, "state"),
		"XDG_CACHE_HOME":   filepath.Join(tmp, "cache"),
		"XDG_RUNTIME_DIR":  filepath.Join(tmp, "run"),
		"NO_COLOR":         "1",
		testRunEnv:         testRun(),
	}
	for _, d := range []string{vars["HOME"], vars["XDG_RUNTIME_DIR"]} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	getenv := func(k string) string { return vars[k] }
	env := e2eEnviron(vars)
	noDaemonLeft(t, getenv)
	t.Cleanup(func() {
		stop := exec.Command(amplidex, "daemon", "stop")
		stop.Env = env
		if out, err := stop.CombinedOutput(); err != nil {
			t.Errorf("amplidex daemon stop: %v\n%s", err, out)
		}
	})

	exts, data := filepath.Join(tmp, "extensions"), filepath.Join(tmp, "code-server-data")
	install := exec.Command(tools.node, tools.codeServer, "--install-extension", vsix, "--extensions-dir", exts, "--user-data-dir", data)
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("successfully installed")) {
		t.Fatalf("code-server --install-extension %s: %v\n%s", vsix, err, out)
	}
	// amplidex.path is machine-scoped: code-server reads it from the
	// remote (Machine) settings, where the driver sets it (E2E_SETTINGS)
	// once the bundled binary was seen; the rest keeps the workbench quiet.
	settings, _ := json.Marshal(map[string]any{
		"editor.codeActionsOnSave":                     map[string]string{"source.fixAll.amplidex": "explicit"},
		"workbench.startupEditor":                      "none",
		"workbench.tips.enabled":                       false,
		"workbench.enableExperiments":                  false,
		"workbench.secondarySideBar.defaultVisibility": "hidden",
		"security.workspace.trust.enabled":             false,
		"telemetry.telemetryLevel":                     "off",
		"extensions.autoCheckUpdates":                  false,
		"extensions.autoUpdate":                        false,
		"update.mode":                                  "none",
		"chat.disableAIFeatures":                       true,
		"window.confirmBeforeClose":                    "never",
		// A line of the composed bundle is one line of the view.
		"[markdown]": map[string]string{"editor.wordWrap": "off"},
	})
	for _, scope := range []string{"User", "Machine"} {
		if err := os.MkdirAll(filepath.Join(data, scope), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, scope, "settings.json"), settings, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	url := startCodeServer(t, tools, env, exts, data, project)

	// The screenshots outlive a failed run, to be looked at; a run that
	// passed leaves nothing behind.
	shots, err := os.MkdirTemp("", "amplidex-vscode-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			os.RemoveAll(shots)
		}
	})
	out := filepath.Join(tmp, "result.json")
	drive := exec.Command(tools.node, filepath.Join("..", "..", "editors", "vscode", "e2e", "drive.cjs"))
	drive.Env = append(env,
		"NODE_PATH="+tools.nodePath,
		"E2E_URL="+url+"?folder="+project,
		"E2E_CHROMIUM="+tools.chromium,
		"E2E_BROWSER_DIR="+filepath.Join(tmp, "chromium"),
		"E2E_OUT="+out,
		"E2E_SHOT_FAIL="+filepath.Join(shots, "failure.png"),
		"E2E_SHOT_OK="+filepath.Join(shots, "success.png"),
		"E2E_TIMEOUT_MS=30000",
		"E2E_SETTINGS="+filepath.Join(data, "Machine", "settings.json")+string(os.PathListSeparator)+filepath.Join(data, "User", "settings.json"),
		"E2E_AMPLIDEX="+amplidex,
		"E2E_BUNDLE_URL="+url+"?folder="+repo,
		"E2E_BUNDLE_DIR="+repo,
	)
	drive.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	started := time.Now()
	b, err := runGroup(drive, 8*time.Minute)
	took := time.Since(started)
	if err != nil {
		t.Fatalf("drive.cjs: %v\n%s", err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the driver wrote no result: %v\n%s", err, b)
	}
	var res struct {
		Steps      []e2eStep `json:"steps"`
		Error      string    `json:"error"`
		Screenshot string    `json:"screenshot"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	t.Logf("the workbench run took %v", took.Round(100*time.Millisecond))
	steps := map[string]e2eStep{}
	for _, s := range res.Steps {
		t.Logf("step %q: ok %v in %d ms:\n%s", s.Name, s.OK, s.MS, s.Detail)
		steps[s.Name] = s
	}
	if res.Error != "" {
		t.Errorf("the driver failed: %s", res.Error)
	}

	// What each step must have shown; a step the driver could not finish
	// is reported with what it last saw.
	checks := []struct {
		step string
		want *regexp.Regexp
	}{
		{"workbench", regexp.MustCompile(`^amplidex`)},
		{"diagnostic", regexp.MustCompile("unknown key `tols`.*amplidex.*schema/unknown-key")},
		{"status bar", regexp.MustCompile(`^amplidex: 2 collections$`)},
		{"completion of keys", regexp.MustCompile(`(^|, )session(, |$)(.*, )?tools(, |$)`)},
		{"completion of agents", regexp.MustCompile(`^explorer, helper$`)},
		{"hover", regexp.MustCompile(`Inherits: mine:dev → foundation:base`)},
		{"merged profile", regexp.MustCompile(`(?m)^  show_thinking: true +# from foundation:base$`)},
		{"quick fix", regexp.MustCompile(`(?m)^tools:\n  - module: tool-web$`)},
		{"merged profile follows the edit", regexp.MustCompile(`(?m)^  - module: tool-web +# from mine:dev$`)},
		{"definition", regexp.MustCompile(`(?m)^name: helper$`)},
		{"check command", regexp.MustCompile("unknown key `uii`.*amplidex check.*schema/unknown-key")},
		{"status command", regexp.MustCompile(`(?m)^pid +\d+$`)},
		{"restart command", regexp.MustCompile(`Inherits: mine:dev → foundation:base`)},
		{"logs command", regexp.MustCompile(`^using ` + regexp.QuoteMeta(exts) + `/amplidex\.amplidex-[^/]+/bin/amplidex \(bundled with the extension\)\n` +
			`using ` + regexp.QuoteMeta(amplidex) + ` \(the "amplidex.path" setting\)$`)},
		{"fix on save", regexp.MustCompile(`(?m)^ui:\n  show_thinking: false\n---\nDraft\. More\.$`)},
		{"bundle workbench", regexp.MustCompile(`^amplidex`)},
		{"bundle diagnostic", regexp.MustCompile("`demo:reviewr`.*amplidex.*bundle/agent-unresolved")},
		{"completion of an include", regexp.MustCompile(`(^|, )demo:behaviors/other(, |$)`)},
		{"composed bundle", regexp.MustCompile("(?s)^# Composed bundle `demo` 1\\.0\\.0\n.*the repository's root bundle \\[bundle\\.md\\]\\(file://.*\n- `demo:reviewr` unresolved: ")},
		{"composed bundle follows the edit", regexp.MustCompile("(?m)^- `demo:reviewer` → \\[agents/reviewer\\.md\\]\\(file://[^)]*\\), \\d+ bytes")},
		{"deleted on disk", regexp.MustCompile("`demo:behaviors/review` resolves to nothing.*amplidex.*bundle/include-unresolved")},
	}
	for _, c := range checks {
		s, ok := steps[c.step]
		switch {
		case !ok:
			t.Errorf("step %q did not run", c.step)
		case !s.OK:
			t.Errorf("step %q failed: %s", c.step, s.Detail)
		case !c.want.MatchString(s.Detail):
			t.Errorf("step %q showed %q, want a match of %q", c.step, s.Detail, c.want)
		}
	}
	if res.Screenshot != "" {
		t.Logf("screenshot: %s", res.Screenshot)
	}
	// What the save wrote.
	draft := filepath.Join(project, ".amplifier", "collections", "mine", "profiles", "draft.md")
	if b, err := os.ReadFile(draft); err != nil || !bytes.Contains(b, []byte("\nui:\n")) || bytes.Contains(b, []byte("uii")) {
		t.Errorf("draft.md after fix on save (%v):\n%s", err, b)
	}
}

// vsixUnderTest returns $AMPLIDEX_VSIX, else packages editors/vscode into
// dir (its node_modules must be installed: `npm ci`). It skips t when
// neither can be had.
func vsixUnderTest(t *testing.T, tools e2eTools, dir string) string {
	if p := os.Getenv("AMPLIDEX_VSIX"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("AMPLIDEX_VSIX: %v", err)
		}
		return p
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "editors", "vscode"))
	if err != nil {
		t.Fatal(err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("AMPLIDEX_VSIX is not set and npm is not installed to package the extension; skipping the VS Code end-to-end test")
	}
	if _, err := os.Stat(filepath.Join(src, "node_modules", ".bin", "vsce")); err != nil {
		t.Skipf("AMPLIDEX_VSIX is not set and %s has no node_modules to package the extension with (npm ci); skipping the VS Code end-to-end test", src)
	}
	vsix := filepath.Join(dir, "amplidex.vsix")
	pack := exec.Command(npm, "run", "package", "--", "--out", vsix)
	pack.Dir = src
	pack.Env = append(os.Environ(), "PATH="+filepath.Dir(tools.node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("npm run package: %v\n%s", err, out)
	}
	return vsix
}

// withBinary writes into dir a copy of the .vsix at src with the binary
// bin inside, where a platform's .vsix of the release holds it
// (extension/bin/amplidex, executable), and returns its path.
func withBinary(t *testing.T, src, bin, dir string) string {
	t.Helper()
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	defer zr.Close()
	p := filepath.Join(dir, "amplidex-bundled.vsix")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for _, e := range zr.File {
		if strings.HasPrefix(e.Name, "extension/bin/") {
			continue
		}
		if err := zw.Copy(e); err != nil {
			t.Fatalf("%s: %s: %v", src, e.Name, err)
		}
	}
	h := &zip.FileHeader{Name: "extension/bin/amplidex", Method: zip.Deflate}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// e2eEnviron is the test binary's environment with vars on top, less
// AMPLIDEX_NO_SPAWN (the language server starts its daemon, as it does
// for a user), and with no amplidex for the extension to find on PATH or
// where `go install` puts it (GOBIN and GOPATH are dropped; HOME is the
// test's).
func e2eEnviron(vars map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := vars[k]; ok || k == service.NoSpawnEnv || k == "GOBIN" || k == "GOPATH" {
			continue
		}
		if k == "PATH" {
			kv = "PATH=" + strings.Join(slices.DeleteFunc(filepath.SplitList(v), func(dir string) bool {
				fi, err := os.Stat(filepath.Join(dir, "amplidex"))
				return err == nil && !fi.IsDir()
			}), string(os.PathListSeparator))
		}
		out = append(out, kv)
	}
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

// startCodeServer starts code-server on a free port of 127.0.0.1 without
// authentication, and returns its address once it listens. It is stopped,
// with everything it started (the extension host, the language server),
// when the test ends.
func startCodeServer(t *testing.T, tools e2eTools, env []string, exts, data, project string) string {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "code-server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tools.node, tools.codeServer, "--bind-addr", "127.0.0.1:0", "--auth", "none",
		"--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
		"--extensions-dir", exts, "--user-data-dir", data, "--config", filepath.Join(data, "config.yaml"), project)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		logFile.Close()
		close(exited)
	}()
	t.Cleanup(func() {
		stopGroup(cmd.Process.Pid, exited)
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("code-server's log:\n%s", b)
			}
		}
	})
	re := regexp.MustCompile(`HTTP server listening on (http://127\.0\.0\.1:\d+/)`)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(logPath)
		if m := re.FindSubmatch(b); m != nil {
			return string(m[1])
		}
		select {
		case <-exited:
			t.Fatalf("code-server exited:\n%s", b)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("code-server did not listen within 2 minutes:\n%s", b)
		}
	}
}

// runGroup runs cmd (started in its own process group) and returns what
// it printed; at the limit, the whole group is killed.
func runGroup(cmd *exec.Cmd, limit time.Duration) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-time.After(limit):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return out.Bytes(), fmt.Errorf("still running after %v: killed", limit)
	}
}

// stopGroup ends the process group of pid: SIGTERM, then SIGKILL when it
// has not exited within 10 s; it returns once the leader has exited and
// no process of the group is left.
func stopGroup(pid int, exited <-chan struct{}) {
	syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
	// The rest of the group (the extension host, the language server)
	// may outlive the leader by a moment.
	deadline := time.Now().Add(10 * time.Second)
	for groupAlive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(-pid, syscall.SIGKILL)
			deadline = time.Now().Add(10 * time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupAlive reports whether a process of the group pgid is left.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}

// markedProcesses returns the processes, other than this one, whose
// environment holds the mark of this test run and whose command line
// names dir.
func markedProcesses(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	mark := []byte(testRunEnv + "=" + testRun() + "\x00")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append(env, 0), mark) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if !bytes.Contains(cmdline, []byte(dir)) && !bytes.Contains(env, []byte(dir)) {
			continue
		}
		out = append(out, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}
