package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

// nvimMergedHarness runs after the README's setup and :AmplidexMerged
// blocks: it opens dev.md of testdata/vscode.txtar, waits for its
// diagnostics (the server is up), runs :AmplidexMerged, waits for the
// merged profile, fixes the misspelt tols without saving, waits for the
// merged profile to show it, and writes what it saw as JSON.
const nvimMergedHarness = `
local file, out = os.getenv('NVIM_TEST_FILE'), os.getenv('NVIM_TEST_OUT')

local function finish(result)
  local f = assert(io.open(out, 'w'))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qall!')
end

local function merged()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.bo[b].filetype == 'yaml' then
      return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
    end
  end
  return ''
end

local function run()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local result = {}
  result.ready = vim.wait(20000, function() return #vim.diagnostic.get(buf) >= 1 end, 20)
  if not result.ready then return finish(result) end
  vim.cmd('AmplidexMerged')
  result.shown = vim.wait(20000, function() return merged():find('# from foundation:base', 1, true) ~= nil end, 20)
  result.first = merged()
  vim.api.nvim_buf_set_lines(buf, 6, 7, false, { 'tools:' })
  result.updated = vim.wait(20000, function() return merged():find('tool%-web +# from mine:dev') ~= nil end, 20)
  result.second = merged()
  finish(result)
end

vim.api.nvim_create_autocmd('VimEnter', { once = true, nested = true, callback = function()
  local ok, err = pcall(run)
  if not ok then finish({ error = tostring(err) }) end
end })
`

// TestNeovimMergedProfile runs the README's :AmplidexMerged recipe, after
// its setup block for every version, in a headless Neovim: the merged
// profile of an open profile shows an inherited key with its source, and
// follows an unsaved edit. It runs the nvim on PATH and every one
// AMPLIDEX_NVIM_EXTRA lists, as TestNeovimReadsDiagnostics does.
func TestNeovimMergedProfile(t *testing.T) {
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
		t.Skip("nvim is not installed (Debian package neovim), and AMPLIDEX_NVIM_EXTRA names none; skipping the merged-profile recipe's test")
	}
	var setup string
	for _, blk := range readmeNvimBlocks(t) {
		if blk.name == "every version" {
			setup = blk.lua
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "editors.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- nvim-merged: [^>]*-->\\s*```lua\\n(.*?)```").FindSubmatch(b)
	if setup == "" || m == nil {
		t.Fatalf("docs/editors.md lacks the Neovim setup block for every version or the :AmplidexMerged block")
	}

	bin := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "amplidex"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	lua := setup + "\n" + string(m[1]) + nvimMergedHarness
	for _, nvim := range nvims {
		_, version, err := nvimVersion(nvim)
		if err != nil {
			t.Errorf("%s: %v", nvim, err)
			continue
		}
		t.Run(version, func(t *testing.T) { runNeovimMerged(t, nvim, bin, lua) })
	}
}

// runNeovimMerged runs one headless Neovim set up by lua, amplidex from
// bin on its PATH, on a fresh copy of testdata/vscode.txtar, and checks
// what the harness saw.
func runNeovimMerged(t *testing.T, nvim, bin, lua string) {
	tmp := t.TempDir()
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
	init := filepath.Join(tmp, "init.lua")
	if err := os.WriteFile(init, []byte(lua), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-u", init)
	cmd.Dir = project
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
		"NVIM_TEST_FILE="+filepath.Join(project, ".amplifier", "collections", "mine", "profiles", "dev.md"),
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
		Error   string `json:"error"`
		Ready   bool   `json:"ready"`
		Shown   bool   `json:"shown"`
		First   string `json:"first"`
		Updated bool   `json:"updated"`
		Second  string `json:"second"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	t.Logf("Neovim saw: %s", raw)
	if res.Error != "" || !res.Ready {
		t.Fatalf("the server did not answer: %s", raw)
	}
	inherited := regexp.MustCompile(`(?m)^  show_thinking: true +# from foundation:base$`)
	if !res.Shown || !inherited.MatchString(res.First) || !strings.Contains(res.First, "tols:") {
		t.Errorf("the merged profile lacks the inherited key:\n%s", res.First)
	}
	if !res.Updated || strings.Contains(res.Second, "tols:") {
		t.Errorf("the merged profile did not follow the edit:\n%s", res.Second)
	}
}
