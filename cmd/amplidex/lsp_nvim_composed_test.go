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

// nvimComposedHarness runs after the README's setup and :AmplidexComposed
// blocks: it opens the behavior of testdata/bundlerepo.txtar, waits for
// the diagnostic of its misspelt agent name, runs :AmplidexComposed,
// waits for the composed view, fixes the name and adds a tool without
// saving, waits for the view to show both and the diagnostic to clear,
// and writes what it saw as JSON.
const nvimComposedHarness = `
local file, out = os.getenv('NVIM_TEST_FILE'), os.getenv('NVIM_TEST_OUT')

local function finish(result)
  local f = assert(io.open(out, 'w'))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qall!')
end

local function view()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == 'nofile' then
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
  result.diagnostic = vim.diagnostic.get(buf)[1].message
  result.line = vim.diagnostic.get(buf)[1].lnum
  vim.cmd('AmplidexComposed')
  result.shown = vim.wait(20000, function() return view():find('# Composed bundle ', 1, true) ~= nil end, 20)
  result.first = view()
  vim.api.nvim_buf_set_lines(buf, 6, 7, false, { '    - demo:reviewer' })
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'tools:', '  - module: tool-grep', '    source: git+https://example.com/tool-grep@main' })
  result.updated = vim.wait(20000, function()
    local v = view()
    return v:find('tool-grep', 1, true) ~= nil and v:find('[agents/reviewer.md](', 1, true) ~= nil
  end, 20)
  result.second = view()
  result.cleared = vim.wait(20000, function() return #vim.diagnostic.get(buf) == 0 end, 20)
  finish(result)
end

vim.api.nvim_create_autocmd('VimEnter', { once = true, nested = true, callback = function()
  local ok, err = pcall(run)
  if not ok then finish({ error = tostring(err) }) end
end })
`

// TestNeovimComposedBundle runs the README's :AmplidexComposed recipe,
// after its setup block for every version, in a headless Neovim on a
// bundle repository: a behavior gets the diagnostic of its misspelt agent
// name; its composed view is the root bundle's, with the unresolved agent
// and the context file with its size and origin; an unsaved fix and a new
// tool show in the view, and the diagnostic clears. It runs the nvim on
// PATH and every one AMPLIDEX_NVIM_EXTRA lists, as
// TestNeovimReadsDiagnostics does.
func TestNeovimComposedBundle(t *testing.T) {
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
		t.Skip("nvim is not installed (Debian package neovim), and AMPLIDEX_NVIM_EXTRA names none; skipping the composed-bundle recipe's test")
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
	m := regexp.MustCompile("(?s)<!-- nvim-composed: [^>]*-->\\s*```lua\\n(.*?)```").FindSubmatch(b)
	if setup == "" || m == nil {
		t.Fatalf("docs/editors.md lacks the Neovim setup block for every version or the :AmplidexComposed block")
	}

	bin := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "amplidex"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	lua := setup + "\n" + string(m[1]) + nvimComposedHarness
	for _, nvim := range nvims {
		_, version, err := nvimVersion(nvim)
		if err != nil {
			t.Errorf("%s: %v", nvim, err)
			continue
		}
		t.Run(version, func(t *testing.T) { runNeovimComposed(t, nvim, bin, lua) })
	}
}

// runNeovimComposed runs one headless Neovim set up by lua, amplidex from
// bin on its PATH, on a fresh copy of testdata/bundlerepo.txtar, and
// checks what the harness saw.
func runNeovimComposed(t *testing.T, nvim, bin, lua string) {
	tmp := t.TempDir()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "bundlerepo.txtar"))
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
	repo := filepath.Join(work, "repo")
	init := filepath.Join(tmp, "init.lua")
	if err := os.WriteFile(init, []byte(lua), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-u", init)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+filepath.Join(tmp, "home"),
		"AMPLIDEX_HOME="+filepath.Join(tmp, "amplidex-home"),
		"AMPLIDEX_NO_SPAWN=1",
		"AMPLIFIER_HOME="+filepath.Join(tmp, "home", ".amplifier"),
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"),
		"XDG_STATE_HOME="+filepath.Join(tmp, "state"),
		"XDG_DATA_HOME="+filepath.Join(tmp, "data"),
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"XDG_RUNTIME_DIR="+filepath.Join(tmp, "run"),
		"AMPLIDEX_BUNDLED=",
		"NVIM_TEST_FILE="+filepath.Join(repo, "behaviors", "review.yaml"),
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
		Error      string `json:"error"`
		Ready      bool   `json:"ready"`
		Diagnostic string `json:"diagnostic"`
		Line       int    `json:"line"`
		Shown      bool   `json:"shown"`
		First      string `json:"first"`
		Updated    bool   `json:"updated"`
		Second     string `json:"second"`
		Cleared    bool   `json:"cleared"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	t.Logf("Neovim saw: %s", raw)
	if res.Error != "" || !res.Ready {
		t.Fatalf("the server did not answer: %s", raw)
	}
	if res.Line != 6 || !strings.Contains(res.Diagnostic, "demo:reviewr") {
		t.Errorf("the behavior's diagnostic is %q on line %d, want the misspelt agent on line 6", res.Diagnostic, res.Line)
	}
	for _, want := range []string{"root bundle [bundle.md](", "- `demo:reviewr` unresolved", "[context/guide.md](", "9 bytes, ~2 tokens", "[behaviors/review.yaml:10]("} {
		if !res.Shown || !strings.Contains(res.First, want) {
			t.Errorf("the composed view lacks %q:\n%s", want, res.First)
		}
	}
	if !res.Updated || strings.Contains(res.Second, "demo:reviewr") {
		t.Errorf("the composed view did not follow the unsaved edit:\n%s", res.Second)
	}
	if !res.Cleared {
		t.Error("the behavior's diagnostic did not clear once the name was fixed")
	}
}
