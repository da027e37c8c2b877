package prepare

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Options configure a Cache.
type Options struct {
	// Home is the cache home (see ResolveHome). Required.
	Home string
	// Version is the application version, the first part of every key.
	// Required; it must be a semantic version.
	Version string
	// Git is the git program; "git" (found on PATH) when empty.
	Git string
	// InstallCommand, when not empty, runs once per module directory during
	// a cold build, such as "uv pip install -e {path}". Its words are split
	// on white space, without a shell; "{path}" and "{module}" are replaced,
	// and the directory is appended when no word holds "{path}".
	InstallCommand string
	// Schema tunes manifest and agent validation.
	Schema schema.Options
	// Logger receives warnings (corrupt entries) and progress; discarded
	// when nil.
	Logger *slog.Logger
	// Jobs bounds how many repositories are fetched at once; 4 when zero.
	Jobs int
	// Fetched, when set, is told how a cold build's fetches go: once with
	// done 0 before the first, then after each repository is fetched (or
	// failed to be), with the count so far and that repository. Calls
	// come from the fetching goroutines, one at a time.
	Fetched func(done, total int, repo string)
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Cache is the prepared-bundle cache under one home, for one application
// version. It is safe for concurrent use, from goroutines and from
// processes.
type Cache struct {
	layout     layout
	version    string
	git        string
	gitEnv     []string // the environment git runs in
	installCmd []string
	schema     schema.Options
	log        *slog.Logger
	jobs       int
	fetched    func(done, total int, repo string)
	now        func() time.Time
}

// New returns the cache that opts describe. It creates nothing on disk.
func New(opts Options) (*Cache, error) {
	if err := CheckVersion(opts.Version); err != nil {
		return nil, err
	}
	if opts.Home == "" || !filepath.IsAbs(opts.Home) {
		return nil, fmt.Errorf("prepare: cache home %q is not an absolute path", opts.Home)
	}
	c := &Cache{
		layout:     layout{home: filepath.Clean(opts.Home)},
		version:    opts.Version,
		git:        opts.Git,
		gitEnv:     gitEnvironment(os.Environ()),
		installCmd: strings.Fields(opts.InstallCommand),
		schema:     opts.Schema,
		log:        opts.Logger,
		jobs:       opts.Jobs,
		fetched:    opts.Fetched,
		now:        opts.Now,
	}
	if c.git == "" {
		c.git = "git"
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.jobs <= 0 {
		c.jobs = 4
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// Home returns the cache home.
func (c *Cache) Home() string { return c.layout.home }

// Version returns the application version.
func (c *Cache) Version() string { return c.version }

// PreparedDir returns the root of every entry, <home>/cache/prepared.
func (c *Cache) PreparedDir() string { return c.layout.prepared() }

// ModulesDir returns the module cache, <home>/cache/modules.
func (c *Cache) ModulesDir() string { return c.layout.modules() }

// Key returns the key of the manifest bytes src.
func (c *Cache) Key(src []byte) Key { return Key{Version: c.version, Hash: hashPrefix(src)} }

// State says how Ensure found an entry.
type State string

// The states of an entry returned by Ensure.
const (
	// StateWarm: the entry was there.
	StateWarm State = "warm"
	// StateCold: this call built it.
	StateCold State = "cold"
	// StateWaited: another goroutine or process was building it; this call
	// waited for it and read the result.
	StateWaited State = "waited"
)

// Entry is one entry of the cache, as Ensure or Lookup found it.
type Entry struct {
	// Manifest is the absolute path of the manifest.
	Manifest string `json:"manifest"`
	Key      Key    `json:"key"`
	// Dir holds the entry; Artifact is its prepared.json.
	Dir      string `json:"dir"`
	Artifact string `json:"artifact"`
	State    State  `json:"state"`
	// Duration is how long the call took.
	Duration time.Duration `json:"duration_ns"`
	// Warnings are the corrupt files discarded on the way and, after a
	// build, the manifest's warnings.
	Warnings []string `json:"warnings,omitempty"`
	// Plan is the artifact's content.
	Plan *Plan `json:"-"`
}

// Lookup returns the entry of the manifest at path when it is warm, and an
// error wrapping ErrMiss when it is not. It never builds, locks or
// discards anything.
func (c *Cache) Lookup(path string) (Entry, error) {
	start := c.now()
	e, _, err := c.open(path)
	if err != nil {
		return e, err
	}
	p, err := readEntry(e.Dir, e.Key)
	if err != nil {
		return e, fmt.Errorf("%w: %v", ErrMiss, err)
	}
	e.State, e.Plan, e.Duration = StateWarm, p, c.now().Sub(start)
	return e, nil
}

// Ensure returns the entry of the manifest at path, building it when it is
// not warm: validate the manifest, resolve its agents and mentions, fetch
// every module source, write the plan. Concurrent calls for one key, from
// any number of goroutines and processes, build it once. A corrupt entry is
// logged as a warning, discarded and rebuilt.
//
// Errors: a *ManifestError (ErrBundleLoadFailed) when the manifest does not
// validate, a *BuildError (ErrModuleUnavailable) when module sources fail,
// and otherwise errors naming the operation and the path. Warnings about
// the manifest are logged and listed in Entry.Warnings.
func (c *Cache) Ensure(ctx context.Context, path string) (Entry, error) {
	start := c.now()
	e, src, err := c.open(path)
	if err != nil {
		return e, err
	}
	done := func(s State, p *Plan) (Entry, error) {
		e.State, e.Plan, e.Duration = s, p, c.now().Sub(start)
		return e, nil
	}
	p, err := readEntry(e.Dir, e.Key)
	if err == nil {
		return done(StateWarm, p)
	}
	warned := ""
	if isCorrupt(err) {
		warned = err.Error()
		c.warnCorrupt(&e, err)
	}

	lk, err := lockFile(ctx, c.layout.entryLock(e.Key), false)
	if err != nil {
		return e, fmt.Errorf("prepare %s: %w", e.Manifest, err)
	}
	defer lk.unlock()
	p, err = readEntry(e.Dir, e.Key)
	switch {
	case err == nil:
		return done(StateWaited, p)
	case isCorrupt(err):
		if err.Error() != warned {
			c.warnCorrupt(&e, err)
		}
		if err := discardEntry(e.Dir); err != nil {
			return e, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return e, err
	}

	m, err := loadManifest(e.Manifest, src, c.schema)
	if err != nil {
		return e, err
	}
	for _, d := range m.warnings {
		c.log.Warn(d.Message, "path", d.Path, "line", d.Range.Start.Line+1, "code", d.Code)
		e.Warnings = append(e.Warnings, d.String())
	}
	c.log.Info("building prepared bundle", "manifest", e.Manifest, "key", e.Key.String())
	p, err = c.build(ctx, m, e.Key)
	if err != nil {
		return e, err
	}
	if err := c.write(ctx, e.Dir, e.Key, p); err != nil {
		return e, err
	}
	return done(StateCold, p)
}

// DryRun is what a cold build of a manifest would do, found without
// fetching anything.
type DryRun struct {
	Manifest string `json:"manifest"`
	Key      Key    `json:"key"`
	Dir      string `json:"dir"`
	// Warm reports whether the entry is warm already.
	Warm            bool       `json:"warm"`
	Bundle          BundleInfo `json:"bundle"`
	DefaultProvider string     `json:"default_provider"`
	// Agents are the included agents, resolved and validated; their module
	// entries are listed in Modules.
	Agents []Agent `json:"agents"`
	// Modules are the module entries that have a source, in manifest order.
	Modules []ModuleSource `json:"modules"`
	// Fetch lists the distinct repositories a cold build clones
	// (URL@ref), sorted.
	Fetch []string `json:"fetch"`
	// Diagnostics are the warnings found.
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
}

// ModuleSource is one module entry with a source.
type ModuleSource struct {
	// Section says where the entry is declared: "providers",
	// "session.orchestrator", "agent explorer: tools".
	Section string `json:"section"`
	Module  string `json:"module"`
	Source  string `json:"source"`
	Parsed  Source `json:"parsed"`
}

// DryRun validates the manifest at path, resolves its agents and mentions,
// and lists its module sources, fetching and writing nothing. Errors are
// those of Ensure's validation: a *ManifestError, or an I/O error.
func (c *Cache) DryRun(path string) (*DryRun, error) {
	e, src, err := c.open(path)
	if err != nil {
		return nil, err
	}
	_, werr := readEntry(e.Dir, e.Key)
	m, err := loadManifest(e.Manifest, src, c.schema)
	if err != nil {
		return nil, err
	}
	d := &DryRun{
		Manifest:        e.Manifest,
		Key:             e.Key,
		Dir:             e.Dir,
		Warm:            werr == nil,
		Bundle:          m.bundle,
		DefaultProvider: m.defaultProvider,
		Agents:          make([]Agent, 0, len(m.agents)),
		Modules:         []ModuleSource{},
		Diagnostics:     m.warnings,
	}
	for _, a := range m.agents {
		d.Agents = append(d.Agents, Agent{Name: a.name, Path: a.path, Description: a.description, ModelRole: a.modelRole})
	}
	specs := m.specs()
	for _, s := range specs {
		if s.source != "" {
			d.Modules = append(d.Modules, ModuleSource{Section: s.section, Module: s.module, Source: s.source, Parsed: s.parsed})
		}
	}
	d.Fetch = repoList(specs)
	if d.Fetch == nil {
		d.Fetch = []string{}
	}
	if d.Diagnostics == nil {
		d.Diagnostics = []diag.Diagnostic{}
	}
	return d, nil
}

// open reads the manifest at path and fills in the entry's names. The
// manifest must be a regular file (or a link to one) of at most
// syntax.DefaultMaxFileSize bytes: a FIFO is never waited on and a
// device never read. The error is then an *fs.PathError naming the
// manifest's absolute path and wrapping syntax.ErrNotRegular or
// syntax.ErrTooLarge.
func (c *Cache) open(path string) (Entry, []byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Entry{}, nil, fmt.Errorf("prepare %s: %w", path, err)
	}
	src, err := syntax.ReadFile(abs, syntax.DefaultMaxFileSize)
	if err != nil {
		return Entry{Manifest: abs}, nil, fmt.Errorf("manifest: %w", err)
	}
	k := c.Key(src)
	dir := c.layout.entry(k)
	return Entry{Manifest: abs, Key: k, Dir: dir, Artifact: filepath.Join(dir, ArtifactFile)}, src, nil
}

func (c *Cache) warnCorrupt(e *Entry, err error) {
	path := corruptPath(err)
	c.log.Warn("discarding corrupt prepared bundle; rebuilding", "path", path, "err", err)
	e.Warnings = append(e.Warnings, fmt.Sprintf("discarded corrupt prepared bundle %v; rebuilding", err))
}

// write writes an entry while holding the write lock shared, so that Clear
// waits for it.
func (c *Cache) write(ctx context.Context, dir string, k Key, p *Plan) error {
	lk, err := lockFile(ctx, c.layout.writeLock(), true)
	if err != nil {
		return fmt.Errorf("write entry %s: %w", dir, err)
	}
	defer lk.unlock()
	return writeEntry(dir, k, p)
}

// Clear removes the whole prepared/ root of the cache home, every version
// and every hash, and returns its path and whether it existed. The module
// cache and the lock files stay. It waits for entries being written, and
// refuses (ErrRefuseClear) to remove a directory that is not named
// "prepared" or that is not a directory.
func Clear(ctx context.Context, home string) (path string, existed bool, err error) {
	l := layout{home: filepath.Clean(home)}
	path = l.prepared()
	if filepath.Base(path) != "prepared" {
		return path, false, fmt.Errorf("%w: %s", ErrRefuseClear, path)
	}
	lk, err := lockFile(ctx, l.writeLock(), false)
	if err != nil {
		return path, false, fmt.Errorf("clear %s: %w", path, err)
	}
	defer lk.unlock()
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, false, nil
	case err != nil:
		return path, false, fmt.Errorf("clear %s: %w", path, err)
	case !fi.IsDir():
		return path, true, fmt.Errorf("%w: %s is not a directory", ErrRefuseClear, path)
	}
	if err := os.RemoveAll(path); err != nil {
		return path, true, fmt.Errorf("clear %s: %w", path, err)
	}
	return path, true, nil
}
