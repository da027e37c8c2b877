// Package lint is the check engine of the command line: what `amplidex
// check` checks, and what it reports of it. Given a Workspace (the
// project, the roots in precedence order and the user's configuration)
// and Options (the paths, the selection, a baseline), Check plans what
// the paths name (files, collections, directories inside one, roots,
// project directories, bundle repositories), checks it over an
// in-process catalog's View, and returns a Result: the diagnostics that
// the suppression comments, the Policy and the baseline leave, sorted,
// with their counts. The Policy (the flags, then the project's
// configuration nearest to each file, then the user's) decides what is
// reported for watch and the language server too. A Result's Fixes are
// the fixes that need no choice, which WriteFixes writes in place, and
// WriteGitHub, WriteSARIF and WriteStatistics print its diagnostics for
// CI.
//
// It does not parse flags, print the text report or pick exit codes
// (the command line does, from a Result's Summary and the errors' types:
// UsageError, ConfigError), start or ask a daemon, or compose a file's
// diagnostics (the catalog's View does, suppression included).
//
// A Workspace is read by many goroutines once built; Check, a Lookup and
// a Result are one goroutine's. A Policy is immutable.
//
// # Caveats
//
//   - A root that cannot be listed fails a check (a *UsageError): it is
//     not an empty root.
//   - A project's configuration that cannot be read fails a check (a
//     *ConfigError), whether or not anything is reported under it; watch
//     and the language server say it and go on with the user's settings.
//   - A project's file of another user, or in a directory of another
//     user, is not read (see discovery.Untrusted), and the search for one
//     never goes above a directory anyone may write in.
//   - A fix is written only to the file it was worked out from: a file
//     that changed since it was read is left as it is, and said.
package lint
