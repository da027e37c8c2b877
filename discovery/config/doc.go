// Package config reads amplidex's configuration: the user's file
// (config.toml, or --config) and the files a project commits
// (amplidex.toml, .amplidex.toml, [tool.amplidex] in pyproject.toml), and
// checks every value in the user's terms, with the file, line and column:
// durations, severities, code selectors ("schema/", "ref/agent-unknown")
// and the globs of [check.per-path]. Its grammar of selectors and globs
// is the one --select, --ignore and --severity use too.
//
// It does not search for a project's file, nor decide which file applies
// to which directory (the checking policy, package lint, does), nor turn
// the configuration into a daemon's options.
//
// Everything here is safe for concurrent use: a Config is read once and
// never written after Load or Parse returns it.
//
// # Caveats
//
//   - No TOML text is decoded before syntax.CheckTOMLShape has bounded its
//     nesting and dotted keys.
//   - An unknown key is an error that names the key, the file and the
//     nearest known key; a project's file sets only [check] and [schema].
package config
