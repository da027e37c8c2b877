package service

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/amplidex/amplidex/discovery/config"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query/lint"
)

// VersionEnv names the application version when --app-version is not
// given.
const VersionEnv = "AMPLIFIER_AGENT_VERSION"

// Cache is a prepared-bundle cache opened from the configuration, and
// the manifest it prepares.
type Cache struct {
	Manifest string
	*prepare.Cache
}

// OpenCache resolves the manifest, the application version and the cache
// home from the flags, the environment and the configuration, and opens the
// cache. manifest and appVersion are --manifest and --app-version (""
// when not given); fetched, when set, is told of the module fetches of
// a cold build.
func OpenCache(cfg *config.Config, manifest, appVersion string, getenv func(string) string, log *slog.Logger,
	fetched func(done, total int, repo string)) (*Cache, error) {
	var err error
	base := "."
	if cfg.Path() != "" {
		base = filepath.Dir(cfg.Path())
	}
	if manifest == "" && cfg.Prepare.Manifest != "" {
		manifest = config.ExpandPath(cfg.Prepare.Manifest, base)
	}
	if manifest == "" {
		return nil, errors.New("no bundle manifest: pass --manifest or set [prepare] manifest in the configuration")
	}
	if manifest, err = filepath.Abs(manifest); err != nil {
		return nil, err
	}
	version, from := appVersion, "--app-version"
	if version == "" {
		version, from = getenv(VersionEnv), "$"+VersionEnv
	}
	if version == "" {
		version, from = cfg.Prepare.AppVersion, "[prepare] app_version"
	}
	if version == "" {
		return nil, errors.New("no application version: pass --app-version, set $" + VersionEnv + " or [prepare] app_version")
	}
	if err := prepare.CheckVersion(version); err != nil {
		return nil, fmt.Errorf("%s: %q is not a semantic version X.Y.Z", from, version)
	}
	configured := cfg.Prepare.CacheHome
	if configured != "" {
		configured = config.ExpandPath(configured, base)
	}
	home, err := prepare.ResolveHome(getenv, configured)
	if err != nil {
		return nil, err
	}
	schema := schema.Options{UnknownKeySeverity: diag.SeverityError}
	if cfg.Schema.UnknownKey == "warning" {
		schema.UnknownKeySeverity = diag.SeverityWarning
	}
	opts := prepare.Options{
		Home:           home,
		Version:        version,
		InstallCommand: cfg.Prepare.InstallCommand,
		Schema:         schema,
		Logger:         log,
	}
	opts.Fetched = fetched
	c, err := prepare.New(opts)
	if err != nil {
		return nil, err
	}
	return &Cache{Manifest: manifest, Cache: c}, nil
}

// DaemonBundles returns the prepared-bundle cache and the manifests the
// daemon keeps warm: [prepare] manifest and manifests. Without a usable
// version or cache home it keeps none, and says why.
func DaemonBundles(ws *lint.Workspace, getenv func(string) string, log *slog.Logger) (*prepare.Cache, []string) {
	base := "."
	if ws.Config.Path() != "" {
		base = filepath.Dir(ws.Config.Path())
	}
	var manifests []string
	for _, m := range append([]string{ws.Config.Prepare.Manifest}, ws.Config.Prepare.Manifests...) {
		if m != "" {
			manifests = append(manifests, config.ExpandPath(m, base))
		}
	}
	if len(manifests) == 0 {
		return nil, nil
	}
	s, err := OpenCache(ws.Config, manifests[0], "", getenv, log, nil)
	if err != nil {
		log.Warn("prepared bundles are not kept warm", "err", err)
		return nil, nil
	}
	return s.Cache, manifests
}
