package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

// nvimInit starts amplidex lsp with Neovim's own LSP client (vim.lsp.start
// from 0.8 on, start_client and buf_attach_client before), opens the file,
// waits for two diagnostics and writes what Neovim holds as JSON.
const nvimInit = `
local bin, file, root, out = os.getenv('AMPLIDEX_BIN'), os.getenv('NVIM_TEST_FILE'), os.getenv('NVIM_TEST_ROOT'), os.getenv('NVIM_TEST_OUT')

local function finish(result)
  local f = assert(io.open(out, 'w'))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qall!')
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local config = { name = 'amplidex', cmd = { bin, 'lsp' }, root_dir = root }
  if vim.lsp.start then
    vim.lsp.start(config)
  else
    local id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(buf, id)
  end
  local got = vim.wait(20000, function() return #vim.diagnostic.get(buf) >= 2 end, 20)
  local diags = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local code = d.code
    if code == nil and d.user_data and d.user_data.lsp then code = d.user_data.lsp.code end
    table.insert(diags, { lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, message = d.message, code = code, source = d.source })
  end
  finish({ ok = got, diagnostics = diags })
end)
if not ok then finish({ ok = false, error = tostring(err), diagnostics = {} }) end
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

// TestNeovimReadsDiagnostics runs a real editor against amplidex lsp: a
// headless Neovim opens a profile and reads both diagnostics back through
// its own LSP client.
func TestNeovimReadsDiagnostics(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not installed (Debian package neovim); skipping the editor end-to-end test")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "amplidex")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
	if err := os.WriteFile(init, []byte(nvimInit), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "diagnostics.json")
	root := filepath.Join(work, "mine")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-u", init)
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"HOME="+filepath.Join(tmp, "home"),
		"AMPLIDEX_HOME="+filepath.Join(tmp, "amplidex-home"),
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"),
		"XDG_STATE_HOME="+filepath.Join(tmp, "state"),
		"XDG_DATA_HOME="+filepath.Join(tmp, "data"),
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"XDG_RUNTIME_DIR="+filepath.Join(tmp, "run"),
		"AMPLIDEX_BUNDLED=",
		"AMPLIDEX_BIN="+bin,
		"NVIM_TEST_FILE="+filepath.Join(root, "profiles", "x.md"),
		"NVIM_TEST_ROOT="+root,
		"NVIM_TEST_OUT="+out,
	)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("Neovim wrote no result: %v", err)
	}
	var res struct {
		OK          bool   `json:"ok"`
		Error       string `json:"error"`
		Diagnostics []struct {
			Lnum     int    `json:"lnum"`
			Col      int    `json:"col"`
			Code     string `json:"code"`
			Message  string `json:"message"`
			Severity int    `json:"severity"`
			Source   string `json:"source"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	t.Logf("Neovim holds: %s", raw)
	if !res.OK || res.Error != "" {
		t.Fatalf("Neovim did not get two diagnostics in time: %s", raw)
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
	}
	for _, d := range res.Diagnostics {
		if d.Code == "ref/extends-unresolved" && !strings.Contains(d.Message, "foundation") {
			t.Errorf("extends message %q does not name the collection", d.Message)
		}
	}
}
