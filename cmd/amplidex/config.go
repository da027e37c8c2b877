package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is amplidex's configuration file. Every key is documented in the
// README; an unknown key is an error naming the key and the file.
type Config struct {
	Roots struct {
		// Bundled lists the bundled collection roots, lowest precedence.
		Bundled []string `toml:"bundled"`
	} `toml:"roots"`
	Schema struct {
		// UnknownKey is the severity of schema/unknown-key: "error" or "warning".
		UnknownKey string `toml:"unknown_key"`
	} `toml:"schema"`
	Watch struct {
		Debounce     duration `toml:"debounce"`
		MaxWait      duration `toml:"max_wait"`
		PollInterval duration `toml:"poll_interval"`
		MaxWatches   int      `toml:"max_watches"`
	} `toml:"watch"`
	Prepare struct {
		Manifest       string   `toml:"manifest"`
		Manifests      []string `toml:"manifests"`
		AppVersion     string   `toml:"app_version"`
		CacheHome      string   `toml:"cache_home"`
		InstallCommand string   `toml:"install_command"`
	} `toml:"prepare"`
	Daemon struct {
		// Autostart lets query, watch and lsp start the daemon when none
		// runs; true when unset.
		Autostart *bool `toml:"autostart"`
		// ForgetAfter drops a project nobody asked about for that long
		// (30 days when unset; "0s": never).
		ForgetAfter *duration `toml:"forget_after"`
	} `toml:"daemon"`

	// path is the file the configuration was read from ("" when none).
	path string
}

// duration is a time.Duration written as "30ms" in TOML.
type duration struct{ time.Duration }

func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("negative duration %q", b)
	}
	d.Duration = v
	return nil
}

// loadConfig reads the configuration file at path. A missing file is an
// empty configuration unless the path was given explicitly.
func loadConfig(path string, explicit bool) (*Config, error) {
	cfg := &Config{}
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return cfg, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	md, err := toml.Decode(string(src), cfg)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, fmt.Errorf("%s:%d:%d: %s", path, perr.Position.Line, perr.Position.Col, perr.Message)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("%s: unknown configuration key %s", path, strings.Join(keys, ", "))
	}
	switch cfg.Schema.UnknownKey {
	case "", "error", "warning":
	default:
		return nil, fmt.Errorf("%s: schema.unknown_key must be \"error\" or \"warning\", not %q", path, cfg.Schema.UnknownKey)
	}
	dir := filepath.Dir(path)
	for i, p := range cfg.Roots.Bundled {
		cfg.Roots.Bundled[i] = expandPath(p, dir)
	}
	cfg.path = path
	return cfg, nil
}

// expandPath makes p absolute: "~/" is the home directory, and a relative
// path is taken from the configuration file's directory.
func expandPath(p, base string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}
