package lint

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
)

// Options say what Check checks and what it reports of it.
type Options struct {
	// Paths are what to check: files, collections, directories inside
	// one, roots, a project directory or its .amplifier. None: the
	// default scope (see Workspace.DefaultScope), unless AllRoots.
	Paths []string
	// AllRoots checks every root's collections: the project's, the
	// user's and the bundled ones. It does not go with Paths.
	AllRoots bool
	// With are collections, or directories of collections, resolved
	// against ahead of every root, and not reported.
	With []string
	// Whole makes a path inside a collection stand for all of it.
	Whole bool
	// IgnoreUnknown skips the files of kinds amplidex does not check,
	// instead of failing.
	IgnoreUnknown bool
	// Selection is what the flags select, on top of the configuration.
	Selection Selection
	// Baseline, when set, is a baseline file: the diagnostics it holds
	// are left out, and counted.
	Baseline string
	// WriteBaseline, when set, is a baseline file to write: the
	// diagnostics are recorded there (Result.Recorded counts them), and
	// none is reported.
	WriteBaseline string
	// Stderr gets what a check says besides its report ("nothing to
	// check"); nil: nowhere.
	Stderr io.Writer
	// Log is the logger of the fixes (nil: none).
	Log *slog.Logger
}

// Report is what a check reports, as `check --json` prints it.
type Report struct {
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
	Summary     Summary           `json:"summary"`
}

// Summary counts what a check reports and what it checked.
type Summary struct {
	query.Summary
	// FilesChecked counts the files checked, with diagnostics or not.
	FilesChecked int `json:"files_checked"`
	Collections  int `json:"collections"`
	// Repositories counts the bundle repositories checked.
	Repositories int `json:"bundle_repositories,omitempty"`
	// Baselined counts the diagnostics left out because the baseline
	// holds them (with Options.Baseline).
	Baselined int `json:"baselined,omitempty"`
}

// Result is the outcome of Check: its Report, the files it points at,
// and what fixing it needs.
type Result struct {
	Report Report
	// Sources reads the files the diagnostics are in, once each.
	Sources *Sources
	// Recorded counts the diagnostics written to Options.WriteBaseline.
	Recorded int

	ws    *Workspace
	pol   *Policy
	found checkResult
	log   *slog.Logger
}

// UsageError is returned when what was asked cannot be checked as asked:
// a path that is not there, a flag's value, a root that cannot be
// listed. The command line exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ConfigError is returned when a configuration that applies cannot be
// used: a project's file that cannot be read or holds a mistake.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// checker is one check: where its notes go.
type checker struct {
	stderr io.Writer
}

// Check checks what opts name in the workspace ws and reports the
// diagnostics that the suppression comments, the policy (the flags, then
// the project's configuration nearest to each file, then the user's) and
// the baseline leave, sorted, with their counts. The user and bundled
// roots are resolved against, and reported only when named or with
// AllRoots. Check sets what ws's Loaders remember; ws is one check's.
func Check(ctx context.Context, ws *Workspace, opts Options) (*Result, error) {
	// What the Loaders list and read is remembered, so that the search
	// for the project's configuration of every directory checked need not
	// look for files that the listings say are not there, nor read a
	// collection's pyproject.toml again.
	listed := newListings()
	ws.tune = listed.tune
	pol, err := NewPolicy(ws, opts.Selection)
	if err != nil {
		return nil, err
	}
	var base *baseline
	if opts.Baseline != "" {
		if base, err = readBaseline(opts.Baseline); err != nil {
			return nil, usageErrorf("check: %v", err)
		}
	}
	ck := &checker{stderr: opts.Stderr}
	if ck.stderr == nil {
		ck.stderr = io.Discard
	}
	res, err := ck.checkScope(ws, &opts)
	if err != nil {
		return nil, err
	}
	// Suppression comments apply in the View, as in every other answer.
	lk := pol.Lookup()
	lk.listed = listed
	// A project's configuration that cannot be read fails the check,
	// whether or not anything is reported under it.
	for _, dir := range res.dirs() {
		if err := lk.Read(dir); err != nil {
			return nil, &ConfigError{Err: err}
		}
	}
	diags, err := lk.Filter(ctx, res.diags)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &ConfigError{Err: err}
	}
	r := &Result{Sources: newSources(), ws: ws, pol: pol, found: res, log: opts.Log}
	if opts.WriteBaseline != "" {
		if r.Recorded, err = writeBaseline(opts.WriteBaseline, diags, r.Sources); err != nil {
			return nil, usageErrorf("check: %v", err)
		}
		return r, nil
	}
	report := Report{Diagnostics: diags, Summary: Summary{Collections: res.collections, Repositories: res.repositories}}
	if base != nil {
		report.Diagnostics, report.Summary.Baselined = base.filter(diags, r.Sources)
	}
	diag.Sort(report.Diagnostics)
	report.Summary.Summary = Summarize(report.Diagnostics)
	report.Summary.FilesChecked = res.checked(report.Diagnostics)
	if report.Diagnostics == nil {
		report.Diagnostics = []diag.Diagnostic{}
	}
	r.Report = report
	return r, nil
}

// Fixes works out the fixes of what the check reports that need no
// choice, file by file: a misspelt key renamed, a reference with one
// close candidate corrected, in rounds over the text each round leaves.
// The unsafe ones (a duplicate made, a file's structure broken) are left
// out and listed in each FileFix, unless withUnsafe asks for them.
// Nothing is written (see WriteFixes).
func (r *Result) Fixes(ctx context.Context, withUnsafe bool) ([]FileFix, error) {
	return fixFiles(ctx, r.ws, r.found.view, r.pol, r.Report.Diagnostics, withUnsafe, r.found.bundleFiles, r.log)
}
