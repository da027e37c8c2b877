//go:build windows

package query

import (
	"fmt"
	"path/filepath"
)

// configBase is the directory holding amplidex's config directory:
// $XDG_CONFIG_HOME when set, else %APPDATA% (the roaming profile).
func configBase(getenv func(string) string) (string, error) {
	return windowsDir(getenv, "XDG_CONFIG_HOME", "APPDATA")
}

// stateBase is the directory holding amplidex's state directory (and the
// socket's, unless XDG_RUNTIME_DIR is set): $XDG_STATE_HOME when set,
// else %LOCALAPPDATA%, which only the user and administrators can read.
func stateBase(getenv func(string) string) (string, error) {
	return windowsDir(getenv, "XDG_STATE_HOME", "LOCALAPPDATA")
}

// windowsDir returns the absolute value of the XDG variable xdg, else
// that of the Windows variable name.
func windowsDir(getenv func(string) string, xdg, name string) (string, error) {
	if dir := getenv(xdg); filepath.IsAbs(dir) {
		return filepath.Clean(dir), nil
	}
	if dir := getenv(name); filepath.IsAbs(dir) {
		return filepath.Clean(dir), nil
	}
	return "", fmt.Errorf("amplidex paths: %%%s%% is not an absolute path, and neither AMPLIDEX_HOME nor %s is set", name, xdg)
}
