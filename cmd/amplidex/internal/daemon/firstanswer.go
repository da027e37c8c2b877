package daemon

import (
	"context"
	"encoding/json"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/query"
)

// A new project's first resolve. The first question about a project
// waits for its registration, which reads and parses every document of
// the project's root and writes its records: seconds for a project of
// tens of thousands of files. A resolve needs none of that: which
// collection wins a name, and how each is described (query.Describe),
// come from the collections' pyproject.toml files and listings alone. So
// a resolve about a project the daemon has not registered is answered
// from a names-only read of the project's root (discovery.Loader's
// NamesOnly) and the collections the daemon already holds for the
// project's other roots (the user's and the bundled ones), the same
// answer the registered project's View gives; and the registration goes
// on in the background, for the questions that follow.

// firstResolve wraps resolve: see above. Any question it cannot answer so
// (the daemon's first scan still runs, the project is registered, one of
// its other roots is held by no View, a root cannot be listed) goes to
// next. Until the registration has published the project's View, each
// resolve about it is answered so.
func (d *Daemon) firstResolve(next query.MethodFunc) query.MethodFunc {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		if !d.isReady() {
			return next(ctx, raw)
		}
		p, err := query.MethodResolve.Decode(raw)
		if err != nil || p.Project == "" {
			return next(ctx, raw)
		}
		key, err := d.ingest.checkScope(p.Common, d.cfg.Load().bundled)
		if err != nil {
			return next(ctx, raw)
		}
		if _, ok := d.cat.State().View(key); ok {
			return next(ctx, raw)
		}
		if !p.NoSync {
			// The project's root is read now; the others' changes made
			// before the question are waited for, as a View's would be.
			if err := d.ingest.w.Flush(ctx); err != nil {
				return nil, err
			}
			if err := d.ingest.wait(ctx, key); err != nil {
				return nil, err
			}
		}
		st := d.cat.State()
		set, ok := d.namesSet(st, d.cat.RootsOf(key))
		if !ok {
			return next(ctx, raw)
		}
		d.ingest.registerSoon(key)
		return &query.Answer{Result: query.ResolveSet(set, p.Name), Clock: d.clockAt(st.Version)}, nil
	}
}

// namesSet returns the Set of roots for a first resolve: the project's
// root read names only, the others as a View of st holds them. It fails
// when a root other than the project's is held by no View, or any of them
// could not be listed, or a collection of the project's could be read only
// in part.
func (d *Daemon) namesSet(st *catalog.State, roots []discovery.Root) (*resolve.Set, bool) {
	failed := map[string]bool{}
	for _, ri := range st.Roots() {
		if ri.Failed != "" || ri.Unlisted {
			failed[ri.Root.Path] = true
		}
	}
	cfg := d.cfg.Load()
	loader := &discovery.Loader{Schema: cfg.schema, NamesOnly: true, ReadFile: d.opts.ReadFile, ReadDir: d.opts.ReadDir}
	cols := make([][]*discovery.Collection, len(roots))
	for i, r := range roots {
		if r.Kind == discovery.RootProject {
			cs, err := loader.ScanRoot(r)
			if err != nil {
				return nil, false
			}
			for _, c := range cs {
				if c.Degraded != "" {
					// Read in part (a listing or a read failed for a
					// reason that says nothing of the file): the
					// registration's retries decide what it holds.
					return nil, false
				}
			}
			cols[i] = cs
			continue
		}
		if failed[r.Path] {
			return nil, false
		}
		held := false
		for _, v := range st.Views() {
			if j := v.Set.RootIndex(r); j >= 0 {
				cols[i], held = v.Set.InRoot(j), true
				break
			}
		}
		if !held {
			return nil, false
		}
	}
	return resolve.NewSet(roots, cols), true
}
