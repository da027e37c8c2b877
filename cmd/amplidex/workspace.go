package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/amplidex/amplidex/discovery/config"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

// config loads the configuration file named by --config, else the default
// one (a missing default file is an empty configuration).
func (a *App) config() (*config.Config, query.Paths, error) {
	return lint.UserConfig(a.Getenv, a.configPath)
}

// workspace resolves the project, the home directory and the roots from
// the global flags and the environment (see lint.Open).
func (a *App) workspace() (*lint.Workspace, error) {
	return lint.Open(lint.Setup{Project: a.projectDir, ConfigPath: a.configPath, Isolated: a.isolated, Getenv: a.Getenv,
		Warn: a.warnOnce, Refused: func(w string) {
			// Said once per run, however often the workspace is asked for.
			a.refusedOnce.Do(func() { fmt.Fprintf(a.Stderr, "amplidex: %s\n", w) })
		}})
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
