package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query/lsp"
)

// lspOptions are the flags of `amplidex lsp`.
type lspOptions struct {
	stdio    bool
	debounce time.Duration
}

func newLSPCmd(a *App) *cobra.Command {
	opts := &lspOptions{}
	cmd := &cobra.Command{
		Use:   "lsp",
		Short: "Language server on stdio for editors",
		Long: "lsp speaks the Language Server Protocol on stdin and stdout: diagnostics for profiles, agents,\n" +
			"bundle manifests, pyproject.toml and collections.lock as you type, completion of extends values,\n" +
			"agent names and module ids, go-to-definition and hover on collection references. Logs go to stderr.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runLSP(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.stdio, "stdio", true, "talk over stdin and stdout (the only transport; accepted for clients that pass it)")
	f.DurationVar(&opts.debounce, "debounce", 50*time.Millisecond, "how long diagnostics wait after the last change")
	return cmd
}

// runLSP serves one editor until it exits. Cross-references resolve
// against the daemon's index when a daemon answers, else against an
// in-process scan of the roots.
func (a *App) runLSP(ctx context.Context, opts *lspOptions) error {
	if opts.debounce < 0 || opts.debounce > 2*time.Second {
		return exitf(exitUsage, "lsp: --debounce must be between 0 and 2s, not %v", opts.debounce)
	}
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	schema := ws.schemaOptions()
	client, err := a.connect(ctx, ws)
	if err != nil {
		client = nil // a daemon that refuses us is no daemon: scan in process
	}
	if client != nil {
		defer client.Close()
		a.log.Info("lsp: resolving against the daemon's index")
	}
	// resolverFor returns the Resolver of one project: the daemon's index
	// when a daemon answers, falling back to an in-process scan.
	resolverFor := func(project string) lsp.Resolver {
		var r lsp.Resolver = lsp.NewScanner(discovery.Roots(project, ws.home, ws.bundled), lsp.ScannerOptions{Schema: schema})
		if client != nil {
			r = lsp.NewDaemonResolver(client, daemonProject(project), r, a.log)
		}
		return r
	}
	analyzer := lsp.NewWorkspace(resolverFor(ws.project), lsp.WorkspaceOptions{
		Schema:      schema,
		Project:     ws.project,
		ResolverFor: resolverFor,
		CheckBundle: prepare.CheckManifest,
		Log:         a.log,
	})
	srv := lsp.NewServer(analyzer, lsp.Options{Debounce: opts.debounce, Log: a.log, Version: buildVersion()})
	err = srv.Serve(ctx, a.Stdin, a.Stdout)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, lsp.ErrNoShutdown):
		// The protocol asks for exit code 1 when the client leaves without
		// a shutdown request.
		return exitCode(exitFailed)
	case ctx.Err() != nil:
		return err
	}
	return exitf(exitFailed, "lsp: %v", err)
}

// daemonProject is the project to name in daemon queries: the directory
// when it holds .amplifier/, else none.
func daemonProject(dir string) string {
	if fi, err := os.Stat(filepath.Join(dir, ".amplifier")); err == nil && fi.IsDir() {
		return dir
	}
	return ""
}

// buildVersion is the module version the binary was built from, or "" for
// a development build.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return ""
}
