package service

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery/config"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query/lint"
	"github.com/amplidex/amplidex/watcher"
)

// Setting is one line of `amplidex config`: a key, its value and
// where the value comes from.
type Setting struct {
	Key    string      `json:"key"`
	Value  any         `json:"value"`
	Origin lint.Origin `json:"origin"`
}

// Settings lists every setting of the configuration with its origin: the
// [check] and [schema] ones as they apply where cs was resolved, the
// others from the environment, the user's file or the defaults.
func Settings(ws *lint.Workspace, cs lint.Settings, getenv func(string) string) []Setting {
	cfg := ws.Config
	user := func(key string, value, def any) Setting {
		if _, ok := cfg.Line(key); ok {
			return Setting{key, value, lint.FileOrigin(cfg, key)}
		}
		return Setting{key, def, lint.OriginDefault}
	}
	env := func(name, key string, value any, fallback Setting) Setting {
		if v := getenv(name); v != "" && !ws.Isolated {
			return Setting{key, value, lint.Origin("env:" + name)}
		}
		return fallback
	}
	dur := func(d config.Duration) string { return d.String() }
	bundled := user("roots.bundled", cfg.Roots.Bundled, []string{})
	bundled = env("AMPLIDEX_BUNDLED", "roots.bundled", ws.Bundled, bundled)
	if ws.Isolated {
		bundled = Setting{"roots.bundled", []string{}, "flag:--isolated"}
	}
	autostart := user("daemon.autostart", cfg.Daemon.Autostart != nil && *cfg.Daemon.Autostart, true)
	if v := getenv(NoSpawnEnv); v != "" && v != "0" {
		autostart = Setting{"daemon.autostart", false, lint.Origin("env:" + NoSpawnEnv)}
	}
	forget := Setting{"daemon.forget_after", config.ShortDuration(daemon.DefaultForgetAfter), lint.OriginDefault}
	if fa := cfg.Daemon.ForgetAfter; fa != nil {
		forget = Setting{"daemon.forget_after", dur(*fa), lint.FileOrigin(cfg, "daemon.forget_after")}
	}
	idle := Setting{"daemon.idle_exit", config.ShortDuration(defaultIdleExit), lint.OriginDefault}
	if ie := cfg.Daemon.IdleExit; ie != nil {
		idle = Setting{"daemon.idle_exit", dur(*ie), lint.FileOrigin(cfg, "daemon.idle_exit")}
	}
	perPath := map[string][]string{}
	if cs.PerPath != nil {
		perPath = cs.PerPath
	}
	list := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	return []Setting{
		bundled,
		{"schema.unknown_key", cs.UnknownKey, cs.UnknownKeyFrom},
		{"check.select", list(cs.Select), cs.SelectFrom},
		{"check.ignore", list(cs.Ignore), cs.IgnoreFrom},
		{"check.severity", cs.Severity, cs.SeverityFrom},
		{"check.per-path", perPath, cs.PerPathFrom},
		user("watch.debounce", dur(cfg.Watch.Debounce), config.ShortDuration(defaultDebounce)),
		user("watch.max_wait", dur(cfg.Watch.MaxWait), config.ShortDuration(watcher.DefaultMaxWait)),
		user("watch.poll_interval", dur(cfg.Watch.PollInterval), config.ShortDuration(watcher.DefaultPollInterval)),
		user("watch.max_watches", cfg.Watch.MaxWatches, 0),
		user("prepare.manifest", cfg.Prepare.Manifest, ""),
		user("prepare.manifests", list(cfg.Prepare.Manifests), []string{}),
		env(VersionEnv, "prepare.app_version", getenv(VersionEnv), user("prepare.app_version", cfg.Prepare.AppVersion, "")),
		env(prepare.HomeEnv, "prepare.cache_home", getenv(prepare.HomeEnv),
			user("prepare.cache_home", cfg.Prepare.CacheHome, "~/"+prepare.DefaultHomeDir)),
		user("prepare.install_command", cfg.Prepare.InstallCommand, ""),
		autostart,
		forget,
		idle,
	}
}

// TOMLText writes a setting's value in TOML.
func TOMLText(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case map[string][]string:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, strconv.Quote(k)+" = "+TOMLText(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
