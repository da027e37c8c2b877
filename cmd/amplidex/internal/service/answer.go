package service

import (
	"context"
	"errors"
	"fmt"

	bundlecat "github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

// CallError is returned by Answer when the daemon was reached but did
// not answer: it went away, refused the question or took too long.
type CallError struct{ Err error }

func (e *CallError) Error() string { return e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// Answer asks the daemon of ws the question m, starting one in the
// background when none runs and auto-start is on, and showing on a
// terminal (show) how far the daemon's first scan has got. With no
// daemon to be had, it says so on l.Stderr and answers from an in-process
// scan of ws, as the daemon would. An answer that is an error of the
// question (nothing matched, wrong parameters) is returned as the
// daemon's *query.Error.
func Answer[P, R any](ctx context.Context, l *Launcher, ws *lint.Workspace, m *query.Method[P, R], params func(query.Common) P,
	noSync, show bool) (R, error) {
	var result R
	c, err := l.ConnectToAsk(ctx, ws)
	if err != nil {
		return result, err
	}
	if c != nil {
		c, err = l.Ask(ctx, ws, c, func(c *query.SyncClient) error {
			return l.Call(ctx, ws, show, func(cctx context.Context) (err error) {
				result, _, err = query.Ask(cctx, c, m, params(ws.Common(noSync)))
				return err
			})
		})
		if c != nil {
			defer c.Close()
		}
		if err != nil && !IsAnswerError(err) {
			return result, &CallError{Err: err}
		}
	}
	if c == nil {
		fmt.Fprintln(l.Stderr, "amplidex: no daemon is running; answering from an in-process scan")
		if m.FromBundles() {
			result, err = m.AnswerBundles(ws.BundleView(), params(query.Common{Project: ws.DaemonProject(), Bundles: ws.BundleScope()}))
		} else {
			v, _ := ws.View()
			common := query.Common{Project: ws.DaemonProject()}
			var b *bundlecat.View
			if m.AddsBundles() {
				b, common.Bundles = ws.BundleView(), ws.BundleScope()
			}
			result, err = m.AnswerWithBundles(ws.WithStandIn(v), b, params(common))
		}
	}
	return result, err
}

// IsAnswerError reports an error that is the daemon's answer (nothing
// matched, wrong parameters), not a failure to reach it.
func IsAnswerError(err error) bool {
	var qe *query.Error
	return errors.As(err, &qe) && (qe.Code == query.CodeNotFound || qe.Code == query.CodeInvalidParams)
}
