package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/amplidex/amplidex/prepare"
	"github.com/spf13/cobra"
)

// postInstallOptions are the flags of `amplidex post-install`.
type postInstallOptions struct {
	prepareFlags
}

func newPostInstallCmd(a *App) *cobra.Command {
	opts := &postInstallOptions{}
	cmd := &cobra.Command{
		Use:   "post-install",
		Short: "Prime the prepared-bundle cache (opt-in); idempotent, and exits 0 even when priming fails",
		Long: "post-install builds the prepared bundle so that the first real start is warm. It returns at once\n" +
			"when the entry exists, and it exits 0 even when priming fails: the first start prepares instead.\n" +
			"It reports what happened on stderr.",
		// An installer's hook must never fail the install, not even on a
		// flag this version does not know.
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		Args:               cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.runPostInstall(cmd.Context(), opts)
			return nil
		},
	}
	addPrepareFlags(cmd, &opts.prepareFlags)
	return cmd
}

// runPostInstall primes the cache and says on stderr what happened. It
// cannot fail.
func (a *App) runPostInstall(ctx context.Context, opts *postInstallOptions) {
	say := func(format string, args ...any) {
		fmt.Fprintf(a.Stderr, "amplidex post-install: "+format+"\n", args...)
	}
	s, err := a.prepareSetup(opts.prepareFlags)
	if err != nil {
		say("not primed: %v", err)
		return
	}
	if e, err := s.Cache.Lookup(s.Manifest); err == nil {
		say("already primed: %s", e.Dir)
		return
	}
	e, err := s.Cache.Ensure(ctx, s.Manifest)
	if err != nil {
		say("priming failed; the first start will prepare instead: %v", err)
		var me *prepare.ManifestError
		var be *prepare.BuildError
		switch {
		case errors.As(err, &me):
			say("error: %s (%s): %s", me.Code(), me.Classification(), me.Message())
			a.diagnosticPrinter(a.Stderr).Print(a.Stderr, me.Diagnostics)
		case errors.As(err, &be):
			a.printCauses(be)
		}
		return
	}
	for _, w := range e.Warnings {
		say("warning: %s", w)
	}
	say("primed %s (%s) in %s", e.Dir, e.State, roundDuration(e.Duration))
}
