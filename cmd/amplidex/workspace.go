package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/amplidex/amplidex/config"
	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/query"
)

// workspace is what a command works on: the project, the roots in
// precedence order and the configuration.
type workspace struct {
	project string
	home    string
	bundled []string
	roots   []discovery.Root
	cfg     *config.Config
	paths   query.Paths
	// isolated is set under --isolated: the configuration is empty, and
	// the roots are the project's alone.
	isolated bool
	// tune, when set, adjusts every Loader the workspace makes (check
	// remembers what they list and read).
	tune func(*discovery.Loader)
	// warn says a warning on stderr, once per run however often it is
	// said (a project's file of another user, ignored).
	warn func(string)
	// here is the collection the working directory is in, in no root,
	// found once (see standIn).
	here     string
	hereOnce sync.Once
	// amplifierHome is $AMPLIFIER_HOME ("" when unset: ~/.amplifier).
	amplifierHome string
}

// config loads the configuration file named by --config, else the default
// one (a missing default file is an empty configuration).
func (a *App) config() (*config.Config, query.Paths, error) {
	paths, err := query.DefaultPaths(a.Getenv)
	if err != nil {
		return nil, paths, exitf(exitUsage, "%v", err)
	}
	path, explicit := a.configPath, a.configPath != ""
	if !explicit {
		path = paths.Config
	}
	cfg, err := config.Load(path, explicit)
	if err != nil {
		return nil, paths, configError(err)
	}
	return cfg, paths, nil
}

// workspace resolves the project, the home directory and the roots.
// Under --isolated the user's configuration is not read and the roots
// are the project's alone: no user root, no bundled roots, whatever
// AMPLIDEX_BUNDLED says.
func (a *App) workspace() (*workspace, error) {
	var (
		cfg   *config.Config
		paths query.Paths
		err   error
	)
	if a.isolated {
		if a.configPath != "" {
			return nil, exitf(exitUsage, "--isolated reads no user configuration; it does not go with --config")
		}
		if paths, err = query.DefaultPaths(a.Getenv); err != nil {
			return nil, exitf(exitUsage, "%v", err)
		}
		cfg = &config.Config{}
	} else if cfg, paths, err = a.config(); err != nil {
		return nil, err
	}
	ws := &workspace{cfg: cfg, paths: paths, isolated: a.isolated, warn: a.warnOnce, amplifierHome: a.Getenv("AMPLIFIER_HOME")}
	if a.projectDir != "" {
		ws.project, err = filepath.Abs(a.projectDir)
		if err != nil {
			return nil, exitf(exitUsage, "--project: %v", err)
		}
		switch fi, err := os.Stat(ws.project); {
		case errors.Is(err, fs.ErrNotExist):
			return nil, exitf(exitUsage, "--project %s: no such directory", a.projectDir)
		case err != nil:
			return nil, exitf(exitUsage, "--project %s: %v", a.projectDir, errText(err))
		case !fi.IsDir():
			return nil, exitf(exitUsage, "--project %s: not a directory", a.projectDir)
		}
	} else {
		wd, err := os.Getwd()
		if err != nil {
			return nil, exitf(exitUsage, "working directory: %v", err)
		}
		found := discovery.FindProject(wd)
		if w := found.Warning(); w != "" {
			// Said once per run, however often the workspace is asked for.
			a.refusedOnce.Do(func() { fmt.Fprintf(a.Stderr, "amplidex: %s\n", w) })
		}
		ws.project = found.Dir
	}
	ws.home = a.Getenv("HOME")
	if ws.home == "" {
		if ws.home, err = os.UserHomeDir(); err != nil {
			return nil, exitf(exitUsage, "home directory: %v", err)
		}
	}
	bundled := cfg.Roots.Bundled
	if env := a.Getenv("AMPLIDEX_BUNDLED"); env != "" && !a.isolated {
		bundled = discovery.SplitPathList(env)
		for i, b := range bundled {
			if abs, err := filepath.Abs(b); err == nil {
				bundled[i] = abs
			}
		}
	}
	ws.bundled = bundled
	ws.roots = discovery.Roots(ws.project, ws.rootsHome(), bundled)
	return ws, nil
}

// rootsHome is the home directory whose user root the workspace reads:
// none under --isolated.
func (ws *workspace) rootsHome() string {
	if ws.isolated {
		return ""
	}
	return ws.home
}

// daemonProject is the project a daemon query is about: the project
// directory when it has a .amplifier directory, else none (the daemon then
// answers from the user and bundled roots, and registers nothing).
func (ws *workspace) daemonProject() string {
	if ws.project == "" {
		return "" // the search for .amplifier was refused
	}
	if fi, err := os.Stat(filepath.Join(ws.project, ".amplifier")); err == nil && fi.IsDir() {
		return ws.project
	}
	return ""
}

// schemaOptions turns the configuration into schema options.
func (ws *workspace) schemaOptions() schema.Options {
	opts := schema.Options{UnknownKeySeverity: diag.SeverityError}
	if ws.cfg.Schema.UnknownKey == "warning" {
		opts.UnknownKeySeverity = diag.SeverityWarning
	}
	return opts
}

// errText is err's message without the path an os error repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// loader returns a Loader configured for the workspace.
func (ws *workspace) loader() *discovery.Loader {
	l := &discovery.Loader{Schema: ws.schemaOptions()}
	if ws.tune != nil {
		ws.tune(l)
	}
	return l
}

// base is the directory paths in the configuration and in baselines are
// taken from: the project directory, else the working directory.
func (ws *workspace) base() string {
	if ws.project != "" {
		return ws.project
	}
	wd, _ := os.Getwd()
	return wd
}

// common returns the parameters every question to the daemon carries:
// the project, and this client's own roots, so that the daemon answers
// over them whatever roots its own configuration names, with the
// collection the working directory is in (see standIn).
func (ws *workspace) common(noSync bool) query.Common {
	roots := ws.clientRoots()
	roots.Collection = ws.standIn()
	return query.Common{Project: ws.daemonProject(), NoSync: noSync, Roots: roots, Bundles: ws.bundleScope()}
}

// clientRoots returns this client's user and bundled roots, as the
// daemon takes them (absolute and clean).
func (ws *workspace) clientRoots() *query.Roots {
	r := &query.Roots{Home: ws.rootsHome()}
	for _, b := range ws.bundled {
		if abs, err := filepath.Abs(b); err == nil {
			r.Bundled = append(r.Bundled, abs)
		}
	}
	return r
}

// catalog returns an in-process catalog of the workspace's roots.
func (ws *workspace) catalog() *catalog.Catalog {
	return catalog.New(catalog.Options{Loader: ws.loader(), Home: ws.rootsHome(), Bundled: ws.bundled})
}

// view reads the project's roots in process and returns their View, and
// the catalog it came from.
func (ws *workspace) view() (*catalog.View, *catalog.Catalog) {
	cat := ws.catalog()
	project := ws.daemonProject()
	st, _ := cat.AddProject(project)
	v, _ := st.View(cat.ProjectKey(project))
	return v, cat
}

// warnOnce says msg on stderr, once per run.
func (a *App) warnOnce(msg string) {
	if _, dup := a.warned.LoadOrStore(msg, true); !dup {
		fmt.Fprintf(a.Stderr, "amplidex: %s\n", msg)
	}
}
