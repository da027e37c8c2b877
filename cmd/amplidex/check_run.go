package main

import "context"

func (a *App) runCheck(ctx context.Context, opts *checkOptions) error {
	return exitf(exitUsage, "check: not wired yet")
}
