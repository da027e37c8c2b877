package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/amplidex/amplidex/config"
	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/lint"
	"github.com/amplidex/amplidex/query"
)

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
func (a *App) workspace() (*lint.Workspace, error) {
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
	ws := &lint.Workspace{Config: cfg, Paths: paths, Isolated: a.isolated, Warn: a.warnOnce, AmplifierHome: a.Getenv("AMPLIFIER_HOME")}
	if a.projectDir != "" {
		ws.Project, err = filepath.Abs(a.projectDir)
		if err != nil {
			return nil, exitf(exitUsage, "--project: %v", err)
		}
		switch fi, err := os.Stat(ws.Project); {
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
		ws.Project = found.Dir
	}
	ws.Home = a.Getenv("HOME")
	if ws.Home == "" {
		if ws.Home, err = os.UserHomeDir(); err != nil {
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
	ws.Bundled = bundled
	ws.Roots = discovery.Roots(ws.Project, ws.RootsHome(), bundled)
	return ws, nil
}

// errText is err's message without the path an os error repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// warnOnce says msg on stderr, once per run.
func (a *App) warnOnce(msg string) {
	if _, dup := a.warned.LoadOrStore(msg, true); !dup {
		fmt.Fprintf(a.Stderr, "amplidex: %s\n", msg)
	}
}

// isDirAt reports whether p is a directory, following links.
func isDirAt(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
