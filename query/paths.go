package query

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/amplidex/amplidex/query/internal/sockos"
)

// Paths are the files amplidex keeps for itself.
type Paths struct {
	// Config is the TOML configuration file.
	Config string
	// Index is the bbolt index file.
	Index string
	// Socket is the unix socket the daemon serves.
	Socket string
	// PidFile holds the daemon's pid; it lives in the socket's intended
	// directory.
	PidFile string
	// StateDir is the directory of the index and other state.
	StateDir string
}

// DefaultPaths computes amplidex's file locations from the environment,
// read through getenv (os.Getenv in the program, a map in tests).
//
// With AMPLIDEX_HOME set, everything lives there: config.toml, index.db,
// amplidex.sock and amplidex.pid. Otherwise the XDG base directories decide:
// the config in $XDG_CONFIG_HOME/amplidex (default ~/.config), the index in
// $XDG_STATE_HOME/amplidex (default ~/.local/state), and the socket and pid
// file in $XDG_RUNTIME_DIR/amplidex, or in the state directory when
// XDG_RUNTIME_DIR is unset. As the XDG specification asks, a relative XDG
// value is ignored; a relative AMPLIDEX_HOME is an error. On Windows, where
// the XDG variables are seldom set, the config lives in
// %APPDATA%\amplidex and the index, the socket and the pid file in
// %LOCALAPPDATA%\amplidex, under the user's profile, unless the XDG
// variables say otherwise.
//
// A socket path longer than a unix socket allows (107 bytes) is replaced by
// /tmp/amplidex-<uid>/<hash>.sock, where uid is the effective uid and hash
// the first 16 hex digits of the SHA-256 of the long path: every process
// computing the same paths finds the same socket, and two homes never share
// one. Another user may have made /tmp/amplidex-<uid> first: the server's
// Listen and Dial then use the same name in /tmp/amplidex-<uid>.1 (up to .9), and both
// pick the same one (see the package Caveats).
func DefaultPaths(getenv func(string) string) (Paths, error) {
	var p Paths
	if home := getenv("AMPLIDEX_HOME"); home != "" {
		if !filepath.IsAbs(home) {
			return Paths{}, fmt.Errorf("amplidex paths: AMPLIDEX_HOME %q is not an absolute path", home)
		}
		home = filepath.Clean(home)
		p = Paths{
			Config:   filepath.Join(home, "config.toml"),
			Index:    filepath.Join(home, "index.db"),
			Socket:   filepath.Join(home, "amplidex.sock"),
			PidFile:  filepath.Join(home, "amplidex.pid"),
			StateDir: home,
		}
	} else {
		config, err := configBase(getenv)
		if err != nil {
			return Paths{}, err
		}
		state, err := stateBase(getenv)
		if err != nil {
			return Paths{}, err
		}
		state = filepath.Join(state, "amplidex")
		runDir := state
		if rt := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
			runDir = filepath.Join(filepath.Clean(rt), "amplidex")
		}
		p = Paths{
			Config:   filepath.Join(config, "amplidex", "config.toml"),
			Index:    filepath.Join(state, "index.db"),
			Socket:   filepath.Join(runDir, "amplidex.sock"),
			PidFile:  filepath.Join(runDir, "amplidex.pid"),
			StateDir: state,
		}
	}
	if len(p.Socket) > sockos.MaxPath {
		p.Socket = shortSocket(p.Socket, os.Geteuid())
	}
	return p, nil
}

// shortSocket returns the stand-in for a socket path too long to bind.
func shortSocket(long string, uid int) string {
	sum := sha256.Sum256([]byte(long))
	dir := filepath.Join(sockos.FallbackTmp(), "amplidex-"+strconv.Itoa(uid))
	return filepath.Join(dir, hex.EncodeToString(sum[:8])+".sock")
}
