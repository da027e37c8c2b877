package main

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lint"
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
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runLSP(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.stdio, "stdio", true, "talk over stdin and stdout (the only transport; accepted for clients that pass it)")
	f.DurationVar(&opts.debounce, "debounce", 50*time.Millisecond, "how long diagnostics wait after the last change")
	return cmd
}

// runLSP serves one editor until it exits. Each request is answered by
// the daemon, in one call, when a daemon answers; otherwise, and whenever
// the daemon fails, by an in-process catalog of the roots.
func (a *App) runLSP(ctx context.Context, opts *lspOptions) error {
	if opts.debounce < 0 || opts.debounce > 2*time.Second {
		return exitf(exitUsage, "lsp: --debounce must be between 0 and 2s, not %v", opts.debounce)
	}
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	schema := ws.SchemaOptions()
	local := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: ws.Home, Bundled: ws.Bundled, Schema: schema}),
		analysis.WorkspaceOptions{Project: ws.DaemonProject(), Schema: schema, CheckBundle: prepare.CheckManifest, Log: a.log,
			Bundles: lspBundleEnv(a, ws)})
	var analyzer lsp.Analyzer = lsp.InProcess{Workspace: local}
	client, err := a.launcher().Connect(ctx, ws)
	if err != nil {
		client = nil // a daemon that refuses us is no daemon: answer in process
	}
	if client != nil {
		a.log.Info("lsp: answering through the daemon")
		da := lsp.NewDaemonAnalyzer(client, local, a.log)
		defer da.Close()
		da.Roots = ws.ClientRoots()
		da.Redial = a.launcher().Redialer(ws)
		analyzer = da
	}
	pol, err := lint.NewPolicy(ws, lint.Selection{})
	if err != nil {
		return err
	}
	var warned sync.Map // the configuration problems already logged
	filter := func(path string, ds []diag.Diagnostic) []diag.Diagnostic {
		return pol.FilterFile(path, ds, func(err error) {
			if _, dup := warned.LoadOrStore(err.Error(), true); !dup {
				a.log.Warn("lsp: a project's configuration is not applied", "err", err)
			}
		})
	}
	srv := lsp.NewServer(analyzer, lsp.Options{Debounce: opts.debounce, Log: a.log, Version: buildVersion(), Filter: filter})
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

// buildVersion is the version `amplidex version` reports, or "" for a
// development build.
func buildVersion() string {
	if v := query.ReadBuild().Version; v != "(devel)" {
		return v
	}
	return ""
}

// lspBundleEnv is where the language server looks for the bundles that
// bundle repositories include: $AMPLIFIER_HOME, else ~/.amplifier.
func lspBundleEnv(a *App, ws *lint.Workspace) compose.Env {
	env := compose.Env{Home: ws.Home, AmplifierHome: a.Getenv("AMPLIFIER_HOME")}
	if env.AmplifierHome == "" {
		env.AmplifierHome = filepath.Join(ws.Home, ".amplifier")
	}
	return env
}
