package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/config"
	"github.com/amplidex/amplidex/lint"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// configOptions are the flags of `amplidex config`.
type configOptions struct {
	json     bool
	isolated bool
}

func newConfigCmd(a *App) *cobra.Command {
	opts := &configOptions{}
	cmd := &cobra.Command{
		Use:   "config [PATH]",
		Short: "Print the effective settings, each with where it comes from",
		Long: "config prints every setting as it applies to PATH (default: the working directory), with its origin,\n" +
			"as `git config --show-origin` does: a flag, the environment, the project's configuration nearest to PATH\n" +
			"(amplidex.toml, .amplidex.toml or [tool.amplidex] in pyproject.toml), the user's configuration, or the default.",
		Args: existingPath(maxArgs("PATH")),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) > 0 {
				path = args[0]
			}
			return a.runConfig(opts, path)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the settings as JSON: {path, settings: [{key, value, origin}]}")
	cmd.Flags().BoolVar(&opts.isolated, "isolated", false, "as check --isolated sees them: without the user's configuration, the user and bundled roots")
	return cmd
}

// configSetting is one line of `amplidex config`.
type configSetting struct {
	Key    string      `json:"key"`
	Value  any         `json:"value"`
	Origin lint.Origin `json:"origin"`
}

// configReport is what `amplidex config --json` prints.
type configReport struct {
	Path     string          `json:"path"`
	Settings []configSetting `json:"settings"`
}

func (a *App) runConfig(opts *configOptions, path string) error {
	a.isolated = opts.isolated
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	if path == "" {
		if path, err = os.Getwd(); err != nil {
			return exitf(exitUsage, "working directory: %v", err)
		}
	}
	if path, err = filepath.Abs(path); err != nil {
		return exitf(exitUsage, "config: %v", err)
	}
	dir := path
	if !isDirAt(path) {
		dir = filepath.Dir(path)
	}
	pol, err := lint.NewPolicy(ws, lint.Selection{})
	if err != nil {
		return err
	}
	cs, err := pol.Lookup().Settings(dir)
	if err != nil {
		return configError(err)
	}
	report := configReport{Path: path, Settings: a.settings(ws, cs)}
	if opts.json {
		return query.PrintJSON(a.Stdout, report)
	}
	tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
	for _, s := range report.Settings {
		fmt.Fprintf(tw, "%s\t%s = %s\n", s.Origin, s.Key, tomlText(s.Value))
	}
	return tw.Flush()
}

// settings lists every setting of the configuration with its origin: the
// [check] and [schema] ones as they apply where cs was resolved, the
// others from the environment, the user's file or the defaults.
func (a *App) settings(ws *lint.Workspace, cs lint.Settings) []configSetting {
	cfg := ws.Config
	user := func(key string, value, def any) configSetting {
		if _, ok := cfg.Line(key); ok {
			return configSetting{key, value, lint.FileOrigin(cfg, key)}
		}
		return configSetting{key, def, lint.OriginDefault}
	}
	env := func(name, key string, value any, fallback configSetting) configSetting {
		if v := a.Getenv(name); v != "" && !ws.Isolated {
			return configSetting{key, value, lint.Origin("env:" + name)}
		}
		return fallback
	}
	dur := func(d config.Duration) string { return d.String() }
	bundled := user("roots.bundled", cfg.Roots.Bundled, []string{})
	bundled = env("AMPLIDEX_BUNDLED", "roots.bundled", ws.Bundled, bundled)
	if ws.Isolated {
		bundled = configSetting{"roots.bundled", []string{}, "flag:--isolated"}
	}
	autostart := user("daemon.autostart", cfg.Daemon.Autostart != nil && *cfg.Daemon.Autostart, true)
	if v := a.Getenv(service.NoSpawnEnv); v != "" && v != "0" {
		autostart = configSetting{"daemon.autostart", false, lint.Origin("env:" + service.NoSpawnEnv)}
	}
	forget := configSetting{"daemon.forget_after", config.ShortDuration(daemon.DefaultForgetAfter), lint.OriginDefault}
	if fa := cfg.Daemon.ForgetAfter; fa != nil {
		forget = configSetting{"daemon.forget_after", dur(*fa), lint.FileOrigin(cfg, "daemon.forget_after")}
	}
	idle := configSetting{"daemon.idle_exit", config.ShortDuration(defaultIdleExit), lint.OriginDefault}
	if ie := cfg.Daemon.IdleExit; ie != nil {
		idle = configSetting{"daemon.idle_exit", dur(*ie), lint.FileOrigin(cfg, "daemon.idle_exit")}
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
	return []configSetting{
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
		env(versionEnv, "prepare.app_version", a.Getenv(versionEnv), user("prepare.app_version", cfg.Prepare.AppVersion, "")),
		env(prepare.HomeEnv, "prepare.cache_home", a.Getenv(prepare.HomeEnv),
			user("prepare.cache_home", cfg.Prepare.CacheHome, "~/"+prepare.DefaultHomeDir)),
		user("prepare.install_command", cfg.Prepare.InstallCommand, ""),
		autostart,
		forget,
		idle,
	}
}

// tomlText writes a setting's value in TOML.
func tomlText(v any) string {
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
			parts = append(parts, strconv.Quote(k)+" = "+tomlText(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
