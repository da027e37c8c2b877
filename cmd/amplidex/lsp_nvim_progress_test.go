package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
	"github.com/rogpeppe/go-internal/txtar"
)

// nvimProgressHarness runs after the README's block has set Neovim up: it
// records every $/progress the server sends, through Neovim's own
// handler, with what Neovim itself then says of the progress
// (vim.lsp.status() on 0.10 and later, get_progress_messages() before),
// writes a marker file at the first begin, and once an end and a
// diagnostic have come, writes what it saw as JSON.
const nvimProgressHarness = `
local file, out, marker = os.getenv('NVIM_TEST_FILE'), os.getenv('NVIM_TEST_OUT'), os.getenv('NVIM_TEST_BEGUN')
local result = { events = {}, native = {} }

local function finish()
  local f = assert(io.open(out, 'w'))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qall!')
end

local function native()
  if vim.lsp.status then return vim.lsp.status() end
  local parts = {}
  for _, m in ipairs(vim.lsp.util.get_progress_messages()) do
    table.insert(parts, (m.title or '') .. ': ' .. (m.message or ''))
  end
  return table.concat(parts, ', ')
end

local handler = vim.lsp.handlers['$/progress']
vim.lsp.handlers['$/progress'] = function(err, res, ctx, config)
  local ret = handler(err, res, ctx, config)
  local v = (res and res.value) or {}
  table.insert(result.events, { kind = v.kind, title = v.title or '', message = v.message or '' })
  if v.kind ~= 'end' then
    local s = native()
    if s and s ~= '' then table.insert(result.native, s) end
  end
  if v.kind == 'begin' and marker then
    local f = io.open(marker, 'w')
    if f then f:write('begun') f:close() end
    marker = nil
  end
  return ret
end

local function saw(kind)
  for _, e in ipairs(result.events) do
    if e.kind == kind then return true end
  end
  return false
end

local function run()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  result.begun = vim.wait(60000, function() return saw('begin') end, 20)
  result.ended = vim.wait(60000, function() return saw('end') end, 20)
  result.diagnosed = vim.wait(30000, function() return #vim.diagnostic.get(buf) >= 1 end, 20)
  finish()
end

vim.api.nvim_create_autocmd('VimEnter', { once = true, nested = true, callback = function()
  local ok, err = pcall(run)
  if not ok then result.error = tostring(err) finish() end
end })
`

// TestNeovimShowsScanProgress runs a headless Neovim, set up by the
// README's block for every version, against amplidex lsp while the
// daemon's first scan is held back (a read of the scan waits until
// Neovim has seen the progress begin): Neovim's own $/progress handling
// sees the scan begin, go on and end, and the diagnostics come after.
func TestNeovimShowsScanProgress(t *testing.T) {
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
		t.Skip("nvim is not installed (Debian package neovim), and AMPLIDEX_NVIM_EXTRA names none; skipping the editor progress test")
	}
	lua := readmeNvimBlocks(t)[0].lua
	bin := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "amplidex"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, nvim := range nvims {
		_, version, err := nvimVersion(nvim)
		if err != nil {
			t.Errorf("%s: %v", nvim, err)
			continue
		}
		t.Run(version, func(t *testing.T) { runNeovimProgress(t, nvim, bin, lua) })
	}
}

func runNeovimProgress(t *testing.T, nvim, bin, lua string) {
	tmp := t.TempDir()
	work := filepath.Join(tmp, "work")
	for _, f := range txtar.Parse([]byte(nvimCollection)).Files {
		p := filepath.Join(work, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.Data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bundled := filepath.Join(tmp, "bundled")
	held := filepath.Join(bundled, "foundation", "pyproject.toml")
	if err := os.MkdirAll(filepath.Dir(held), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(held, []byte("[project]\nname = \"foundation\"\nversion = \"1.0.0\"\ndescription = \"Bundled\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"HOME": filepath.Join(tmp, "home"), "AMPLIDEX_HOME": filepath.Join(tmp, "amplidex-home"),
		"XDG_CONFIG_HOME": filepath.Join(tmp, "config"), "XDG_STATE_HOME": filepath.Join(tmp, "state"),
		"XDG_DATA_HOME": filepath.Join(tmp, "data"), "XDG_CACHE_HOME": filepath.Join(tmp, "cache"),
		"XDG_RUNTIME_DIR": filepath.Join(tmp, "run"), "AMPLIDEX_BUNDLED": bundled, service.NoSpawnEnv: "1",
	}
	paths, err := query.DefaultPaths(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	begun := filepath.Join(tmp, "begun")

	// The daemon's first scan waits on the read of held until Neovim has
	// seen the progress begin (or a minute has passed).
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	started := make(chan *daemon.Daemon, 1)
	go func() {
		d, err := daemon.Start(context.Background(), daemon.Options{Paths: paths, Home: env["HOME"], Bundled: []string{bundled},
			NoSync: true, Watch: watcher.Options{Debounce: 5 * time.Millisecond},
			ReadFile: func(p string) ([]byte, error) {
				if p == held {
					<-release
				}
				return os.ReadFile(p)
			}})
		if err != nil {
			t.Error(err)
		}
		started <- d
	}()
	defer func() {
		free()
		if d := <-started; d != nil {
			d.Close()
		}
	}()
	go func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(begun); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		free()
	}()

	init := filepath.Join(tmp, "init.lua")
	if err := os.WriteFile(init, []byte(lua+nvimProgressHarness), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-u", init)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"NVIM_TEST_FILE="+filepath.Join(work, "mine", "profiles", "x.md"), "NVIM_TEST_OUT="+out, "NVIM_TEST_BEGUN="+begun)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("Neovim wrote no result: %v", err)
	}
	t.Logf("Neovim saw: %s", raw)
	var res struct {
		Events []struct {
			Kind, Title, Message string
		} `json:"events"`
		Native    []string `json:"native"`
		Begun     bool     `json:"begun"`
		Ended     bool     `json:"ended"`
		Diagnosed bool     `json:"diagnosed"`
		Error     string   `json:"error"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	if res.Error != "" || !res.Begun || !res.Ended || !res.Diagnosed {
		if b, err := os.ReadFile(filepath.Join(env["XDG_STATE_HOME"], "nvim", "lsp.log")); err == nil {
			t.Logf("Neovim's lsp.log:\n%s", b)
		}
		t.Fatalf("begun %v, ended %v, diagnostics %v, error %q", res.Begun, res.Ended, res.Diagnosed, res.Error)
	}
	first := res.Events[0]
	if first.Kind != "begin" || first.Title != "amplidex: first scan" || !strings.HasPrefix(first.Message, "reading roots: ") {
		t.Errorf("the first progress is %+v, want the first scan's begin", first)
	}
	if last := res.Events[len(res.Events)-1]; last.Kind != "end" {
		t.Errorf("the last progress is %+v, want its end", last)
	}
	if len(res.Native) == 0 || !strings.Contains(res.Native[0], "amplidex: first scan") {
		t.Errorf("Neovim's own progress state: %q, want the first scan in it", res.Native)
	}
}
