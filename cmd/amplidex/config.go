package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/amplidex/amplidex/discovery"
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
	Check struct {
		// Select keeps only the diagnostics whose code matches one of
		// these codes or prefixes (every one when empty).
		Select []string `toml:"select"`
		// Ignore drops the diagnostics whose code matches one of these.
		Ignore []string `toml:"ignore"`
		// PerPath maps a glob (relative to the project directory) to
		// the codes or prefixes ignored in the files it matches.
		PerPath map[string][]string `toml:"per-path"`
	} `toml:"check"`
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
		// IdleExit stops a daemon a client started once it has had no
		// client for that long (30 minutes when unset; "0": never).
		IdleExit *duration `toml:"idle_exit"`
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
		// A value of the wrong type: the decoder names the key in its text.
		if m := lastKeyRE.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("%s: %s: %s", at(path, src, strings.Split(m[1], ".")...), m[1], m[2])
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, unknownKeys(path, src, und)
	}
	switch cfg.Schema.UnknownKey {
	case "", "error", "warning":
	default:
		return nil, fmt.Errorf("%s: schema.unknown_key must be \"error\" or \"warning\", not %q", at(path, src, "schema", "unknown_key"), cfg.Schema.UnknownKey)
	}
	for _, k := range []struct {
		key  string
		sels []string
	}{{"select", cfg.Check.Select}, {"ignore", cfg.Check.Ignore}} {
		if err := checkSelectors(k.sels); err != nil {
			return nil, fmt.Errorf("%s: check.%s: %v", at(path, src, "check", k.key), k.key, err)
		}
	}
	for glob, sels := range cfg.Check.PerPath {
		if _, err := parseGlob(glob); err != nil {
			return nil, fmt.Errorf("%s: check.per-path: %v", at(path, src, "check", "per-path", glob), err)
		}
		if err := checkSelectors(sels); err != nil {
			return nil, fmt.Errorf("%s: check.per-path %q: %v", at(path, src, "check", "per-path", glob), glob, err)
		}
	}
	dir := filepath.Dir(path)
	for i, p := range cfg.Roots.Bundled {
		cfg.Roots.Bundled[i] = expandPath(p, dir)
	}
	cfg.path = path
	return cfg, nil
}

// lastKeyRE reads the key and the message out of the decoder's type
// errors: `toml: line 2 (last key "roots.bundled"): incompatible types: …`.
var lastKeyRE = regexp.MustCompile(`^toml: (?:line \d+ )?\(last key "([^"]+)"\): (.*)$`)

// unknownKeys is the error for keys of the file that amplidex does not
// know: each with its line and column, and the nearest known key.
func unknownKeys(path string, src []byte, und []toml.Key) error {
	known := configKeys(reflect.TypeOf(Config{}), nil)
	type bad struct {
		key string
		pos discovery.Position
		ok  bool
	}
	var bads []bad
	for _, k := range und {
		// A table nobody knows lists every key under it too: name the table.
		if slices.ContainsFunc(und, func(p toml.Key) bool { return len(p) < len(k) && slices.Equal(p, k[:len(p)]) }) {
			continue
		}
		r, ok := discovery.TOMLKeyRange(src, k...)
		bads = append(bads, bad{key: k.String(), pos: r.Start, ok: ok})
	}
	sort.SliceStable(bads, func(i, j int) bool {
		if bads[i].pos.Line != bads[j].pos.Line {
			return bads[i].pos.Line < bads[j].pos.Line
		}
		return bads[i].pos.Character < bads[j].pos.Character
	})
	lines := make([]string, len(bads))
	for i, b := range bads {
		where := path
		if b.ok {
			where = fmt.Sprintf("%s:%d:%d", path, b.pos.Line+1, b.pos.Character+1)
		}
		lines[i] = fmt.Sprintf("%s: unknown configuration key %s", where, b.key)
		if near := discovery.Suggest(b.key, known); near != "" {
			lines[i] += fmt.Sprintf("; did you mean %s?", near)
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

// configKeys lists the dotted keys of the configuration struct t: tables
// and the keys in them.
func configKeys(t reflect.Type, prefix []string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := append(prefix[:len(prefix):len(prefix)], name)
		out = append(out, strings.Join(key, "."))
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(duration{}) {
			out = append(out, configKeys(f.Type, key)...)
		}
	}
	return out
}

// at names where the key at keyPath is written in the configuration file:
// path:line:col, or the path alone when it cannot tell.
func at(path string, src []byte, keyPath ...string) string {
	if r, ok := discovery.TOMLKeyRange(src, keyPath...); ok {
		return fmt.Sprintf("%s:%d:%d", path, r.Start.Line+1, r.Start.Character+1)
	}
	return path
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
