package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
)

// prepareFlags are the flags prepare and post-install share.
type prepareFlags struct {
	manifest   string
	appVersion string
	// progress shows the module fetches of a cold build on a terminal.
	progress bool
}

func addPrepareFlags(cmd *cobra.Command, f *prepareFlags) {
	cmd.Flags().StringVar(&f.manifest, "manifest", "", "bundle manifest, bundle.md (default: [prepare] manifest in the configuration)")
	cmd.Flags().StringVar(&f.appVersion, "app-version", "", "application version X.Y.Z, the first part of the cache key (default: $"+service.VersionEnv+", else [prepare] app_version)")
}

// prepareOptions are the flags of `amplidex prepare`.
type prepareOptions struct {
	prepareFlags
	dryRun bool
	json   bool
}

func newPrepareCmd(a *App) *cobra.Command {
	opts := &prepareOptions{}
	cmd := &cobra.Command{
		Use:   "prepare",
		Short: "Build or hit the prepared-bundle cache for a bundle manifest and print the entry",
		Long: "prepare validates the bundle manifest, resolves its agents and every module source into the module cache,\n" +
			"and writes the mount plan under <cache home>/cache/prepared/<version>/<sha256 prefix>/. When that entry\n" +
			"exists it is a warm hit and nothing is built. --dry-run validates and lists what would be fetched.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runPrepare(cmd.Context(), opts)
		},
	}
	addPrepareFlags(cmd, &opts.prepareFlags)
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "validate the manifest and list the module sources, fetching and writing nothing")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the entry (or the dry run, or the error) as JSON")
	return cmd
}

// prepareSetup resolves the manifest, the application version and the
// cache home from the flags, the environment and the configuration, and
// opens the cache (see service.OpenCache). Errors are usage errors.
func (a *App) prepareSetup(flags prepareFlags) (*service.Cache, error) {
	cfg, _, err := a.config()
	if err != nil {
		return nil, err
	}
	var fetched func(done, total int, repo string)
	if flags.progress {
		fetched = func(done, total int, repo string) {
			a.line.Set("amplidex: fetching module repositories: %d of %d %s", done, total, repo)
		}
	}
	return service.OpenCache(cfg, flags.manifest, flags.appVersion, a.Getenv, a.log, fetched)
}

func (a *App) runPrepare(ctx context.Context, opts *prepareOptions) error {
	opts.progress = !opts.json
	defer a.line.Clear()
	s, err := a.prepareSetup(opts.prepareFlags)
	if err != nil {
		if asExitError(err) != nil {
			return err
		}
		return exitf(exitUsage, "prepare: %v", err)
	}
	if opts.dryRun {
		d, err := s.Cache.DryRun(s.Manifest)
		if err != nil {
			return a.prepareFailed(s.Manifest, opts.json, err)
		}
		a.diagnosticPrinter(a.Stderr).Print(a.Stderr, d.Diagnostics)
		if opts.json {
			return writeJSON(a.Stdout, d)
		}
		writeDryRun(a.Stdout, d)
		return nil
	}
	e, err := s.Cache.Ensure(ctx, s.Manifest)
	a.line.Clear()
	if err != nil {
		return a.prepareFailed(s.Manifest, opts.json, err)
	}
	if opts.json {
		return writeJSON(a.Stdout, e)
	}
	writeEntry(a.Stdout, e)
	return nil
}

// prepareError is what `prepare --json` prints when the prepare fails.
type prepareError struct {
	Code           string            `json:"code"`
	Classification string            `json:"classification,omitempty"`
	Message        string            `json:"message"`
	Diagnostics    []diag.Diagnostic `json:"diagnostics"`
}

// Codes of a failed prepare that is not a manifest error.
const (
	codeModuleUnavailable = "module_unavailable"
	codePrepareFailed     = "prepare_failed"
)

// prepareFailed reports a failed prepare: a manifest that does not load is
// bundle_load_failed (protocol) and exits 2, a module that cannot be
// fetched exits 1, and a manifest that cannot be read exits 2. manifest is
// the absolute path of the manifest.
func (a *App) prepareFailed(manifest string, asJSON bool, err error) error {
	var (
		me   *prepare.ManifestError
		be   *prepare.BuildError
		out  prepareError
		code = exitFailed
	)
	switch {
	case errors.As(err, &me):
		out = prepareError{Code: me.Code(), Classification: me.Classification(), Message: me.Message(), Diagnostics: me.Diagnostics}
		code = exitUsage
	case errors.As(err, &be):
		out = prepareError{Code: codeModuleUnavailable, Message: fmt.Sprintf("%d module sources unavailable", len(be.Modules)), Diagnostics: be.Diagnostics()}
		if len(be.Modules) == 1 {
			out.Message = be.Modules[0].Error()
		}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	default:
		out = prepareError{Code: codePrepareFailed, Message: err.Error(), Diagnostics: []diag.Diagnostic{}}
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == manifest {
			code = exitUsage // the manifest cannot be read
		}
	}
	if asJSON {
		if err := writeJSON(a.Stdout, out); err != nil {
			return err
		}
		return exitCode(code)
	}
	if out.Classification != "" {
		fmt.Fprintf(a.Stderr, "amplidex: %s (%s): %s\n", out.Code, out.Classification, out.Message)
	} else {
		fmt.Fprintf(a.Stderr, "amplidex: %s: %s\n", out.Code, out.Message)
	}
	if be != nil {
		a.printCauses(be)
	} else {
		a.diagnosticPrinter(a.Stderr).Print(a.Stderr, out.Diagnostics)
	}
	return exitCode(code)
}

// maxNamed is how many modules a line of printCauses names.
const maxNamed = 5

// printCauses says on stderr why the modules of a build failed, each
// cause once: a module that fails alone as the diagnostic at its
// declaration, and the modules that fail alike (thirty modules of a host
// that cannot be reached) in one line with their count.
func (a *App) printCauses(be *prepare.BuildError) {
	var alone []diag.Diagnostic
	for _, c := range be.Causes() {
		if len(c.Modules) == 1 {
			alone = append(alone, c.Modules[0].Diagnostic())
			continue
		}
		names := make([]string, 0, maxNamed)
		for _, m := range c.Modules[:min(len(c.Modules), maxNamed)] {
			names = append(names, m.Module)
		}
		list := strings.Join(names, ", ")
		if more := len(c.Modules) - len(names); more > 0 {
			list += fmt.Sprintf(" and %d more", more)
		}
		fmt.Fprintf(a.Stderr, "amplidex: %d modules failed alike (%s): %s\n", len(c.Modules), list, query.Clean(c.Message))
	}
	a.diagnosticPrinter(a.Stderr).Print(a.Stderr, alone)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeEntry prints an entry as aligned "name value" lines.
func writeEntry(w io.Writer, e prepare.Entry) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "key\t%s\n", e.Key)
	fmt.Fprintf(tw, "entry\t%s\n", e.Dir)
	fmt.Fprintf(tw, "state\t%s\n", e.State)
	fmt.Fprintf(tw, "time\t%s\n", roundDuration(e.Duration))
	tw.Flush()
}

// writeDryRun prints what a cold build would fetch.
func writeDryRun(w io.Writer, d *prepare.DryRun) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	state := "missing: a prepare builds it"
	if d.Warm {
		state = "warm"
	}
	fmt.Fprintf(tw, "manifest\t%s (valid)\n", d.Manifest)
	fmt.Fprintf(tw, "bundle\t%s %s\n", d.Bundle.Name, d.Bundle.Version)
	fmt.Fprintf(tw, "key\t%s\n", d.Key)
	fmt.Fprintf(tw, "entry\t%s (%s)\n", d.Dir, state)
	names := make([]string, len(d.Agents))
	for i, ag := range d.Agents {
		names[i] = ag.Name
	}
	fmt.Fprintf(tw, "agents\t%d: %s\n", len(d.Agents), strings.Join(names, ", "))
	fmt.Fprintf(tw, "modules\t%d sources, %d repositories to fetch\n", len(d.Modules), len(d.Fetch))
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, m := range d.Modules {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Section, m.Module, m.Source)
	}
	tw.Flush()
}

// roundDuration keeps a duration readable: microseconds for fast hits,
// milliseconds for slow builds.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
