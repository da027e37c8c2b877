package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
)

// analyzer answers the language server's analyze questions with the
// analysis engine's Workspace, the one the language server runs itself,
// over the daemon's catalog, so that an editor sees what `check` and
// `query` see. It keeps one Workspace per schema option the clients ask
// with (their working copies' stat caches).
type analyzer struct {
	cat *catalog.Catalog
	log *slog.Logger

	mu     sync.Mutex // guards fields below
	spaces map[schema.Options]*analysis.Workspace
}

// analyzer returns the answer of query.MethodAnalyze.
func (d *Daemon) analyzer() query.AnalyzeFunc {
	a := &analyzer{cat: d.cat, log: d.log, spaces: map[schema.Options]*analysis.Workspace{}}
	return a.analyze
}

func (a *analyzer) analyze(ctx context.Context, v *catalog.View, p query.AnalyzeParams) (*query.AnalyzeResult, error) {
	return a.workspace(p.Schema()).Analyze(ctx, v, p)
}

// workspace returns the Workspace that checks buffers with schema.
func (a *analyzer) workspace(schema schema.Options) *analysis.Workspace {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.spaces[schema]
	if w == nil {
		w = analysis.NewWorkspace(catalogViews{a.cat}, analysis.WorkspaceOptions{Schema: schema, CheckBundle: prepare.CheckManifest, Log: a.log})
		a.spaces[schema] = w
	}
	return w
}

// catalogViews is the analysis.Views of the daemon's catalog. The Views the
// questions are answered from come from the daemon's viewFor, which waits
// for the changes a question must see; the watcher tells the catalog what
// changed.
type catalogViews struct{ cat *catalog.Catalog }

func (c catalogViews) View(_ context.Context, project string) (*catalog.View, error) {
	if v, ok := c.cat.State().View(c.cat.ProjectKey(project)); ok {
		return v, nil
	}
	return nil, fmt.Errorf("%w: %s", analysis.ErrNoView, catalog.Label(project))
}

func (c catalogViews) WithArguments(_ context.Context, project string, cols []*discovery.Collection) (*catalog.View, error) {
	if v, ok := c.cat.WithArguments(project, cols); ok {
		return v, nil
	}
	return nil, fmt.Errorf("%w: %s", analysis.ErrNoView, catalog.Label(project))
}

func (catalogViews) Changed(string) {}
