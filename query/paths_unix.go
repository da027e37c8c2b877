//go:build !windows

package query

import (
	"fmt"
	"path/filepath"
)

// configBase is the directory holding amplidex's config directory:
// $XDG_CONFIG_HOME, else ~/.config.
func configBase(getenv func(string) string) (string, error) {
	return xdgDir(getenv, "XDG_CONFIG_HOME", ".config")
}

// stateBase is the directory holding amplidex's state directory:
// $XDG_STATE_HOME, else ~/.local/state.
func stateBase(getenv func(string) string) (string, error) {
	return xdgDir(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"))
}

// xdgDir returns the absolute value of the XDG variable name, or
// $HOME/fallback.
func xdgDir(getenv func(string) string, name, fallback string) (string, error) {
	if dir := getenv(name); filepath.IsAbs(dir) {
		return filepath.Clean(dir), nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return "", fmt.Errorf("amplidex paths: $%s is unset and $HOME %q is not an absolute path", name, home)
	}
	return filepath.Join(home, fallback), nil
}
