package lint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/config"
	"github.com/amplidex/amplidex/query"
)

// UserConfig loads the user's configuration file: path (--config), else
// the default one of getenv's environment (a missing default file is an
// empty configuration); with amplidex's own files.
func UserConfig(getenv func(string) string, path string) (*config.Config, query.Paths, error) {
	paths, err := query.DefaultPaths(getenv)
	if err != nil {
		return nil, paths, usageErrorf("%v", err)
	}
	explicit := path != ""
	if !explicit {
		path = paths.Config
	}
	cfg, err := config.Load(path, explicit)
	if err != nil {
		return nil, paths, &ConfigError{Err: err}
	}
	return cfg, paths, nil
}

// Setup is what Open builds a Workspace from: the global flags and the
// environment.
type Setup struct {
	// Project is --project: "" finds it from the working directory.
	Project string
	// ConfigPath is --config: "" reads the default file.
	ConfigPath string
	// Isolated is --isolated.
	Isolated bool
	// Getenv reads the environment.
	Getenv func(string) string
	// Warn says a warning once per run (the Workspace's Warn).
	Warn func(string)
	// Refused says that the search for .amplifier stopped at a directory
	// of another user; nil: nowhere.
	Refused func(string)
}

// Open resolves the project, the home directory and the roots. Under
// Isolated the user's configuration is not read and the roots are the
// project's alone: no user root, no bundled roots, whatever
// AMPLIDEX_BUNDLED says.
func Open(s Setup) (*Workspace, error) {
	var (
		cfg   *config.Config
		paths query.Paths
		err   error
	)
	if s.Isolated {
		if s.ConfigPath != "" {
			return nil, usageErrorf("--isolated reads no user configuration; it does not go with --config")
		}
		if paths, err = query.DefaultPaths(s.Getenv); err != nil {
			return nil, usageErrorf("%v", err)
		}
		cfg = &config.Config{}
	} else if cfg, paths, err = UserConfig(s.Getenv, s.ConfigPath); err != nil {
		return nil, err
	}
	ws := &Workspace{Config: cfg, Paths: paths, Isolated: s.Isolated, Warn: s.Warn, AmplifierHome: s.Getenv("AMPLIFIER_HOME")}
	if s.Project != "" {
		ws.Project, err = filepath.Abs(s.Project)
		if err != nil {
			return nil, usageErrorf("--project: %v", err)
		}
		switch fi, err := os.Stat(ws.Project); {
		case errors.Is(err, fs.ErrNotExist):
			return nil, usageErrorf("--project %s: no such directory", s.Project)
		case err != nil:
			return nil, usageErrorf("--project %s: %v", s.Project, errText(err))
		case !fi.IsDir():
			return nil, usageErrorf("--project %s: not a directory", s.Project)
		}
	} else {
		wd, err := os.Getwd()
		if err != nil {
			return nil, usageErrorf("working directory: %v", err)
		}
		found := discovery.FindProject(wd)
		if w := found.Warning(); w != "" {
			if s.Refused != nil {
				s.Refused(w)
			}
		}
		ws.Project = found.Dir
	}
	ws.Home = s.Getenv("HOME")
	if ws.Home == "" {
		if ws.Home, err = os.UserHomeDir(); err != nil {
			return nil, usageErrorf("home directory: %v", err)
		}
	}
	bundled := cfg.Roots.Bundled
	if env := s.Getenv("AMPLIDEX_BUNDLED"); env != "" && !s.Isolated {
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
