package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/amplidex/amplidex/discovery"
	bundlecat "github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/query"
)

// mux registers every method of the query table.
func (d *Daemon) mux() *query.Mux {
	m := query.NewMux()
	query.ServeViews(m, d.viewFor, d.bundleView)
	query.ServeBundles(m, d.bundleView)
	m.Wrap(query.MethodResolve.Name(), d.firstResolve)
	m.Wrap(query.MethodResolve.Name(), d.earlyResolve)
	query.Handle(m, query.MethodChanges, d.changes)
	query.Handle(m, query.MethodStatus, func(context.Context, query.StatusParams) (*query.Status, error) { return d.Status(), nil })
	query.HandleStream(m, query.MethodSubscribe, d.subscribe)
	query.ServeAnalyze(m, d.viewFor, d.lateAnalyzer())
	query.Handle(m, query.MethodVersion, func(context.Context, query.VersionParams) (*query.DaemonInfo, error) { return d.Info(), nil })
	query.Handle(m, query.MethodShutdown, func(context.Context, query.ShutdownParams) (*query.ShutdownResult, error) {
		d.requestStop("asked over the socket")
		return &query.ShutdownResult{PID: d.pid}, nil
	})
	query.Handle(m, query.MethodForget, d.forget)
	return m
}

// lateAnalyzer is the answer of query.MethodAnalyze, its analyzer made on
// the first question: the socket serves before the first scan makes the
// catalog the analyzer answers over, and a question reaches the analyzer
// only after viewFor waited for that scan.
func (d *Daemon) lateAnalyzer() query.AnalyzeFunc {
	var (
		once sync.Once
		an   query.AnalyzeFunc
	)
	return func(ctx context.Context, v *catalog.View, p query.AnalyzeParams) (*query.AnalyzeResult, error) {
		once.Do(func() { an = d.analyzer() })
		return an(ctx, v, p)
	}
}

// Info says who answers on the socket.
func (d *Daemon) Info() *query.DaemonInfo {
	return &query.DaemonInfo{PID: d.pid, Build: d.opts.Build, Mode: d.opts.Mode,
		SocketActivated: d.opts.Listener != nil, Scanning: !d.isReady()}
}

// viewFor is the query.ViewFunc of the daemon.
func (d *Daemon) viewFor(ctx context.Context, scope query.Common) (*catalog.View, query.Clock, error) {
	key, err := d.keyFor(ctx, scope)
	if err != nil {
		return nil, query.Clock{}, err
	}
	return d.viewOf(ctx, key, scope.NoSync)
}

// bundleView is the query.BundleViewFunc of the daemon: the bundles of
// the place scope.Bundles names, once the first scan is done and the
// changes made before the question are taken in.
func (d *Daemon) bundleView(ctx context.Context, scope query.Common) (*bundlecat.View, query.Clock, error) {
	if err := d.waitReady(ctx); err != nil {
		return nil, query.Clock{}, err
	}
	v, err := d.bidx.view(ctx, scope.Bundles, scope.NoSync)
	if err != nil {
		return nil, query.Clock{}, err
	}
	return v, d.clockAt(d.cat.State().Version), nil
}

// keyFor returns the key of the View a question is about, once the first
// scan is done.
func (d *Daemon) keyFor(ctx context.Context, scope query.Common) (string, error) {
	if err := d.waitReady(ctx); err != nil {
		return "", err
	}
	return d.ingest.checkScope(scope, d.cfg.Load().bundled)
}

// viewOf returns the View of key, registered on its first question.
func (d *Daemon) viewOf(ctx context.Context, key string, noSync bool) (*catalog.View, query.Clock, error) {
	v, version, err := d.ingest.view(ctx, key, noSync)
	if err != nil {
		return nil, query.Clock{}, err
	}
	return v, d.clockAt(version), nil
}

// changes answers "changes": the files whose records changed after a
// clock of this daemon's life, or every indexed file.
func (d *Daemon) changes(ctx context.Context, p query.ChangesParams) (*query.ChangesResult, error) {
	since, err := query.ParseClock(p.Since)
	if err != nil {
		return nil, query.Errorf(query.CodeInvalidParams, "since: %v", err)
	}
	if _, _, err := d.viewFor(ctx, p.Common); err != nil {
		return nil, err
	}
	lagging := d.persist.waitWritten()
	now := d.clockAt(d.cat.State().Version)
	res := &query.ChangesResult{Clock: now, Files: []query.Change{}}
	if since.Start == now.Start && since.PID == now.PID && !lagging && since.Tick <= now.Tick {
		if since.Tick >= d.persist.store.Tick() {
			return res, nil // nothing written since
		}
		changes, complete, err := d.persist.store.Changes(since.Tick)
		if err != nil {
			return nil, err
		}
		if complete {
			seen := map[string]int{}
			for _, c := range changes {
				if i, ok := seen[c.Path]; ok {
					res.Files[i].Deleted = c.Deleted
					continue
				}
				seen[c.Path] = len(res.Files)
				res.Files = append(res.Files, query.Change{Path: c.Path, Deleted: c.Deleted})
			}
			return res, nil
		}
	}
	res.IsFreshInstance = true
	paths, err := d.persist.paths()
	if err != nil {
		return nil, err
	}
	for _, path := range paths {
		res.Files = append(res.Files, query.Change{Path: path})
	}
	return res, nil
}

// subscribe opens a stream that sends, first, the current diagnostics of
// every followed file that has any (in an update marked Initial, sent even
// when empty), then each change of any followed file's
// diagnostics.
func (d *Daemon) subscribe(ctx context.Context, p query.SubscribeParams) (*query.Stream, error) {
	for _, path := range p.Paths {
		if !filepath.IsAbs(path) {
			return nil, query.Errorf(query.CodeInvalidParams, "path %q is not absolute", path)
		}
	}
	key, err := d.keyFor(ctx, p.Common)
	if err != nil {
		return nil, err
	}
	// Followed from now on: a set of a client's roots is not forgotten
	// between its registration and the subscription's start.
	unfollow := d.ingest.follow(key)
	v, clock, err := d.viewOf(ctx, key, p.NoSync)
	if err != nil {
		unfollow()
		return nil, err
	}
	env, release, err := d.followBundles(ctx, p.Common)
	if err != nil {
		unfollow()
		return nil, err
	}
	project := v.Project
	return &query.Stream{
		Result:  &query.SubscribeResult{Clock: clock},
		Abandon: func() { unfollow(); release() },
		Run: func(ctx context.Context, send func(any) error) error {
			defer unfollow()
			defer release()
			// Registered by viewOf: should it have been forgotten since,
			// the subscription ends rather than registering it again.
			return d.follow(ctx, project, env, p.Paths, func(u query.Update) error { return send(u) })
		},
	}, nil
}

// Status reports the daemon's state; during the first scan, how far it
// got.
func (d *Daemon) Status() *query.Status {
	if !d.isReady() {
		out := &query.Status{
			PID: d.pid, Started: d.start, Uptime: d.now().Sub(d.start).Round(time.Second).String(),
			Build: d.opts.Build, Mode: d.opts.Mode, SocketActivated: d.opts.Listener != nil,
			Socket: d.socketPath(), Index: d.opts.Paths.Index, Clock: d.clockAt(0),
			Scanning: true, Progress: d.progress.snapshot(), Registering: d.progress.registrations(),
			Roots: []query.RootStatus{}, Projects: []query.ProjectStatus{},
			Warnings: d.warnings.list(), Bundles: d.cfg.Load().bundles.status(),
		}
		d.idleStatus(out)
		return out
	}
	st := d.cat.State()
	counts := map[string]int{}
	kinds := map[string]discovery.RootKind{}
	health := map[string]catalog.RootInfo{}
	for _, r := range st.Roots() {
		counts[r.Root.Path] = r.Collections
		kinds[r.Root.Path] = r.Root.Kind
		health[r.Root.Path] = r
	}
	out := &query.Status{
		PID: d.pid, Started: d.start, Uptime: d.now().Sub(d.start).Round(time.Second).String(),
		Build: d.opts.Build, Mode: d.opts.Mode, SocketActivated: d.opts.Listener != nil,
		Socket: d.socketPath(), Index: d.opts.Paths.Index, Clock: d.clockAt(st.Version),
		Files: files(st), Analyzed: d.persist.cache.analyzed(), Projects: []query.ProjectStatus{},
		Registering: d.progress.registrations(), Warnings: d.warnings.list(), Bundles: d.cfg.Load().bundles.status(),
	}
	d.idleStatus(out)
	for _, w := range d.w.Status() {
		if d.bidx.isRoot(w.Path) {
			out.BundleRoots = append(out.BundleRoots, query.RootStatus{Path: w.Path, Kind: "bundles", State: string(w.State),
				Watches: w.Watches, Warnings: w.Warnings})
		}
		kind, ok := kinds[w.Path]
		if !ok {
			continue // a manifest's directory, or a root of bundles alone
		}
		rs := query.RootStatus{Path: w.Path, Kind: kind, State: string(w.State),
			Watches: w.Watches, Collections: counts[w.Path], Warnings: w.Warnings}
		if h := health[w.Path]; !h.Healthy() {
			// What could not be read keeps what was known, and is tried
			// again: say so, and why.
			rs.State = query.RootDegraded
			if h.Failed != "" {
				rs.Warnings = append(rs.Warnings, "cannot list the root (keeping its last listing; retrying): "+h.Failed)
			}
			for i, dd := range h.Degraded {
				if i == maxDegradedShown {
					rs.Warnings = append(rs.Warnings, fmt.Sprintf("and %d more collections read incompletely", len(h.Degraded)-i))
					break
				}
				rs.Warnings = append(rs.Warnings, "read incompletely (keeping its last complete read; retrying): "+dd.Why)
			}
		}
		out.Roots = append(out.Roots, rs)
	}
	order := map[discovery.RootKind]int{discovery.RootArgument: -1, discovery.RootProject: 0, discovery.RootUser: 1, discovery.RootBundled: 2}
	sort.SliceStable(out.Roots, func(i, j int) bool {
		a, b := out.Roots[i], out.Roots[j]
		if order[a.Kind] != order[b.Kind] {
			return order[a.Kind] < order[b.Kind]
		}
		return a.Path < b.Path
	})
	for p, t := range d.ingest.registered() {
		ps := query.ProjectStatus{Dir: p, LastUsed: t}
		if catalog.IsScopeKey(p) {
			// A client's other roots: the project, and those roots.
			sc := d.cat.KeyScope(p)
			ps.Dir, ps.Roots = sc.Project, &query.Roots{Home: sc.Home, Bundled: sc.Bundled, Collection: sc.Collection}
		}
		out.Projects = append(out.Projects, ps)
	}
	sort.Slice(out.Projects, func(i, j int) bool { return out.Projects[i].Dir < out.Projects[j].Dir })
	return out
}

// idleStatus fills in the connections open and, for a daemon that exits
// once idle, the idle time and its deadline.
func (d *Daemon) idleStatus(st *query.Status) {
	if d.idle == nil {
		return
	}
	after, open, deadline := d.idle.state()
	st.Connections = open
	if after > 0 {
		st.IdleExit, st.IdleDeadline = after.String(), deadline
	}
}

// maxDegradedShown bounds the collections status names one by one as read
// incompletely.
const maxDegradedShown = 10

// files counts the files the collections of every View hold.
func files(st *catalog.State) int {
	seen := map[*discovery.Collection]bool{}
	n := 0
	for _, v := range st.Views() {
		for _, c := range v.Set.Collections() {
			if !seen[c] {
				seen[c] = true
				n += len(c.Facts)
			}
		}
	}
	return n
}
