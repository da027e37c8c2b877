package lsp

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/query"
)

// Caller sends one query to the daemon; *query.Client is one.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) (query.Clock, error)
}

// DaemonResolver is the Resolver backed by the daemon's index. Every Set
// asks the daemon for its collections (which answers only once every
// change made before the question is indexed) and fetches their resources
// again only when the daemon's clock moved. When the daemon cannot answer,
// the fallback Resolver does.
//
// The daemon's answers name collections and resources but not what each
// file says, so through it an extends chain is followed, and a cycle found,
// only through the open buffers; module ids are completed from modules/
// directories only.
type DaemonResolver struct {
	client   Caller
	project  string
	fallback Resolver
	timeout  time.Duration
	log      *slog.Logger

	mu     sync.Mutex // guards fields below; held during a fetch so that concurrent callers share it
	set    *discovery.Set
	clock  query.Clock
	failed bool // the last fetch failed (said once in the log)
}

// NewDaemonResolver returns a Resolver that asks the daemon through c about
// project ("" for the user and bundled roots only), and fallback when the
// daemon fails. log (nil for none) hears when it falls back and when the
// daemon answers again.
func NewDaemonResolver(c Caller, project string, fallback Resolver, log *slog.Logger) *DaemonResolver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &DaemonResolver{client: c, project: project, fallback: fallback, timeout: 5 * time.Second, log: log}
}

// Set returns the daemon's view of the roots, or the fallback's when the
// daemon does not answer.
func (d *DaemonResolver) Set(ctx context.Context) (*discovery.Set, error) {
	set, err := d.fetch(ctx)
	if err != nil && ctx.Err() == nil && d.fallback != nil {
		return d.fallback.Set(ctx)
	}
	return set, err
}

// Invalidate passes path on to the fallback; the daemon watches the files
// itself.
func (d *DaemonResolver) Invalidate(path string) {
	if d.fallback != nil {
		d.fallback.Invalidate(path)
	}
}

func (d *DaemonResolver) fetch(ctx context.Context) (*discovery.Set, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	d.mu.Lock()
	defer d.mu.Unlock()
	params := map[string]string{"project": d.project}
	var infos []query.CollectionInfo
	clock, err := d.client.Call(ctx, "collections", params, &infos)
	if err != nil {
		if !d.failed {
			d.failed = true
			d.log.Warn("lsp: the daemon does not answer; scanning in process", "err", err)
		}
		return nil, fmt.Errorf("daemon collections: %w", err)
	}
	if d.failed {
		d.failed = false
		d.log.Info("lsp: the daemon answers again")
	}
	if d.set != nil && !clock.IsZero() && clock == d.clock {
		return d.set, nil
	}
	var roots []discovery.Root
	var groups [][]*discovery.Collection
	winners := map[string]*discovery.Collection{}
	for _, ci := range infos {
		root := discovery.Root{Kind: ci.Root, Path: ci.RootPath}
		i := slices.Index(roots, root)
		if i < 0 {
			roots = append(roots, root)
			groups = append(groups, nil)
			i = len(roots) - 1
		}
		c := &discovery.Collection{
			Name: ci.Name, Version: ci.Version, Description: ci.Description, Root: root,
			Dir: ci.Dir, RealDir: ci.RealDir, Base: ci.Base, Layout: ci.Layout,
			Valid: ci.Valid, Problem: ci.Problem, Facts: map[string]*discovery.Facts{},
			Metadata: &discovery.Metadata{Name: ci.Name, Version: ci.Version, Description: ci.Description, Requires: ci.Requires},
		}
		groups[i] = append(groups[i], c)
		if ci.Status == "active" {
			winners[c.Name] = c
		}
	}
	for _, method := range []string{"profiles", "agents", "context", "tools", "modules"} {
		var rs []query.ResourceInfo
		if _, err := d.client.Call(ctx, method, params, &rs); err != nil {
			return nil, fmt.Errorf("daemon %s: %w", method, err)
		}
		for _, r := range rs {
			c := winners[r.Collection]
			if c == nil {
				continue
			}
			c.Resources = append(c.Resources, discovery.Resource{Kind: r.Kind, Name: r.Name, Path: r.Path, Rel: r.Rel})
			if r.Description != "" {
				c.Facts[r.Path] = &discovery.Facts{Kind: r.Kind, Name: r.Name, Description: r.Description}
			}
		}
	}
	d.set, d.clock = discovery.NewSet(roots, groups), clock
	d.log.Debug("lsp: collections from the daemon", "clock", clock, "collections", len(infos))
	return d.set, nil
}
