package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

// nvimHarness runs after a configuration block of the README has set
// Neovim up: once Neovim has started, it opens the file, waits for two diagnostics, asks for the
// code actions of the unknown key, applies "Change `tols` to `tools`"
// with Neovim's own workspace-edit code, waits for the diagnostic to
// clear, and writes what Neovim held at each step as JSON. It runs on
// Neovim 0.7 and later.
const nvimHarness = `
local file, out = os.getenv('NVIM_TEST_FILE'), os.getenv('NVIM_TEST_OUT')

local function finish(result)
  local f = assert(io.open(out, 'w'))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qall!')
end

local function collect(buf)
  local diags = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local code = d.code
    if code == nil and d.user_data and d.user_data.lsp then code = d.user_data.lsp.code end
    table.insert(diags, { lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, message = d.message, code = code, source = d.source })
  end
  return diags
end

local function run()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local result = { titles = {} }
  result.ok = vim.wait(20000, function() return #vim.diagnostic.get(buf) >= 2 end, 20)
  result.diagnostics = collect(buf)
  if not result.ok then return finish(result) end
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  local client = get({ bufnr = buf })[1]
  result.root = client.config.root_dir
  local unknown
  for _, d in ipairs(result.diagnostics) do
    if d.code == 'schema/unknown-key' then unknown = d end
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = unknown.lnum, character = unknown.col }, ['end'] = { line = unknown.end_lnum, character = unknown.end_col } },
    context = { diagnostics = {} } }
  for _, answer in pairs(vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, 10000) or {}) do
    for _, action in ipairs(answer.result or {}) do
      table.insert(result.titles, action.title)
      if action.title == 'Change ` + "`tols` to `tools`" + `' then
        vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding or 'utf-16')
      end
    end
  end
  result.fixed = vim.api.nvim_buf_get_lines(buf, 6, 7, false)[1]
  result.cleared = vim.wait(20000, function() return #vim.diagnostic.get(buf) == 1 end, 20)
  result.after = collect(buf)
  finish(result)
end

-- After startup, as a user opens a file: filetype detection is on by then.
vim.api.nvim_create_autocmd('VimEnter', { once = true, nested = true, callback = function()
  local ok, err = pcall(run)
  if not ok then finish({ ok = false, error = tostring(err), diagnostics = {} }) end
end })
`

// nvimCollection is a working copy of a collection whose profile has an
// unknown key and extends a profile that resolves nowhere.
const nvimCollection = `
-- mine/pyproject.toml --
[project]
name = "mine"
version = "1.0.0"
description = "A collection being written"
-- mine/profiles/x.md --
---
profile:
  name: x
  version: 1.0.0
  description: A profile with two mistakes
  extends: foundation:missing
tols:
  - module: tool-web
---

Body.
`

// nvimBlock is a Lua block of docs/editors.md that sets Neovim up, and the
// oldest Neovim it is for.
type nvimBlock struct {
	name string
	min  [2]int // major, minor
	lua  string
}

// readmeNvimBlocks returns the Lua blocks of docs/editors.md that follow a
// "<!-- nvim: … -->" marker: "every version", or "X.Y and later".
func readmeNvimBlocks(t *testing.T) []nvimBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "editors.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- nvim: (every version|(\\d+)\\.(\\d+) and later)[^>]*-->\\s*```lua\\n(.*?)```")
	var out []nvimBlock
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		blk := nvimBlock{name: "every version", lua: m[4]}
		if m[2] != "" {
			major, _ := strconv.Atoi(m[2])
			minor, _ := strconv.Atoi(m[3])
			blk.name, blk.min = m[2]+"."+m[3]+"+", [2]int{major, minor}
		}
		out = append(out, blk)
	}
	if len(out) < 2 {
		t.Fatalf("docs/editors.md has %d Neovim blocks, want the one for every version and the one for 0.11+", len(out))
	}
	return out
}

// nvimVersion returns the version `nvim --version` reports.
func nvimVersion(nvim string) ([2]int, string, error) {
	out, err := exec.Command(nvim, "--version").Output()
	if err != nil {
		return [2]int{}, "", err
	}
	m := regexp.MustCompile(`NVIM v(\d+)\.(\d+)\.(\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		return [2]int{}, "", fmt.Errorf("%s --version: no version in %q", nvim, out)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return [2]int{major, minor}, m[1] + "." + m[2] + "." + m[3], nil
}

// TestNeovimReadsDiagnostics runs real editors against amplidex lsp, each
// set up by the README's own Lua: a headless Neovim opens a profile, reads
// both diagnostics back through its LSP client, applies the quick fix of
// the unknown key and sees the diagnostic clear. It runs the nvim on PATH
// (Debian 12's is 0.7.2) and every one AMPLIDEX_NVIM_EXTRA lists (a path
// list), each with every README block its version can run.
func TestNeovimReadsDiagnostics(t *testing.T) {
	var nvims []string
	if p, err := exec.LookPath("nvim"); err == nil {
		nvims = append(nvims, p)
	}
	for _, p := range filepath.SplitList(os.Getenv("AMPLIDEX_NVIM_EXTRA")) {
		if p != "" {
			nvims = append(nvims, p)
		}
	}
	if len(nvims) == 0 {
		t.Skip("nvim is not installed (Debian package neovim), and AMPLIDEX_NVIM_EXTRA names none; skipping the editor end-to-end test")
	}
	blocks := readmeNvimBlocks(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "amplidex"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ran := 0
	for _, nvim := range nvims {
		v, version, err := nvimVersion(nvim)
		if err != nil {
			t.Errorf("%s: %v", nvim, err)
			continue
		}
		for _, blk := range blocks {
			if v[0] < blk.min[0] || v[0] == blk.min[0] && v[1] < blk.min[1] {
				t.Logf("Neovim %s (%s) is older than the README's %s block; not run", version, nvim, blk.name)
				continue
			}
			ran++
			t.Run(version+" "+blk.name, func(t *testing.T) { runNeovim(t, nvim, bin, blk.lua) })
		}
	}
	if ran == 0 {
		t.Fatal("no Neovim ran")
	}
}

// runNeovim runs one headless Neovim set up by lua, amplidex from bin on
// its PATH, against a fresh copy of nvimCollection, and checks what it
// read and did.
func runNeovim(t *testing.T, nvim, bin, lua string) {
	tmp := t.TempDir()
	work := filepath.Join(tmp, "work")
	for _, f := range txtar.Parse([]byte(nvimCollection)).Files {
		p := filepath.Join(work, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	init := filepath.Join(tmp, "init.lua")
	if err := os.WriteFile(init, []byte(lua+nvimHarness), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "result.json")
	root := filepath.Join(work, "mine")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-u", init)
	cmd.Dir = work // not the collection: the README's root finder must find it
	cmd.Env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+filepath.Join(tmp, "home"),
		"AMPLIDEX_HOME="+filepath.Join(tmp, "amplidex-home"),
		"AMPLIDEX_NO_SPAWN=1",
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"),
		"XDG_STATE_HOME="+filepath.Join(tmp, "state"),
		"XDG_DATA_HOME="+filepath.Join(tmp, "data"),
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"XDG_RUNTIME_DIR="+filepath.Join(tmp, "run"),
		"AMPLIDEX_BUNDLED=",
		"NVIM_TEST_FILE="+filepath.Join(root, "profiles", "x.md"),
		"NVIM_TEST_OUT="+out,
	)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("Neovim wrote no result: %v", err)
	}
	type diagnostic struct {
		Lnum     int    `json:"lnum"`
		Col      int    `json:"col"`
		Code     string `json:"code"`
		Message  string `json:"message"`
		Severity int    `json:"severity"`
		Source   string `json:"source"`
	}
	var res struct {
		OK          bool         `json:"ok"`
		Error       string       `json:"error"`
		Root        string       `json:"root"`
		Diagnostics []diagnostic `json:"diagnostics"`
		Titles      []string     `json:"titles"`
		Fixed       string       `json:"fixed"`
		Cleared     bool         `json:"cleared"`
		After       []diagnostic `json:"after"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	t.Logf("Neovim holds: %s", raw)
	if !res.OK || res.Error != "" {
		t.Fatalf("Neovim did not get two diagnostics in time: %s", raw)
	}
	if res.Root != root {
		t.Errorf("the client's root is %q, want the collection %s", res.Root, root)
	}
	want := map[string]struct{ line, col int }{
		"schema/unknown-key":     {6, 0},
		"ref/extends-unresolved": {5, 11},
	}
	if len(res.Diagnostics) != len(want) {
		t.Fatalf("got %d diagnostics, want %d: %s", len(res.Diagnostics), len(want), raw)
	}
	for _, d := range res.Diagnostics {
		w, ok := want[d.Code]
		if !ok {
			t.Errorf("unexpected diagnostic %+v", d)
			continue
		}
		if d.Lnum != w.line || d.Col != w.col || d.Severity != 1 || d.Source != "amplidex" {
			t.Errorf("%s at %d:%d (severity %d, source %q), want %d:%d, an error from amplidex: %s",
				d.Code, d.Lnum, d.Col, d.Severity, d.Source, w.line, w.col, d.Message)
		}
		if d.Code == "ref/extends-unresolved" && !strings.Contains(d.Message, "foundation") {
			t.Errorf("extends message %q does not name the collection", d.Message)
		}
	}
	if !slices.Contains(res.Titles, "Change `tols` to `tools`") {
		t.Errorf("code actions %q lack the fix of the unknown key", res.Titles)
	}
	if res.Fixed != "tools:" || !res.Cleared || len(res.After) != 1 || res.After[0].Code != "ref/extends-unresolved" {
		t.Errorf("after the fix: line %q, diagnostics %+v", res.Fixed, res.After)
	}
}
