package daemon

import (
	"context"
	"encoding/json"

	"github.com/amplidex/amplidex/query"
)

// A new project's first resolve. The first question about a project
// waits for its registration, which reads and parses every document of
// the project's root and writes its records: seconds for a project of
// tens of thousands of files. A resolve needs none of that: which
// collection wins a name, and how each is described (query.Describe),
// come from the collections' pyproject.toml files and listings alone. So
// a resolve about a project the daemon has not registered is answered
// from the catalog's Sketch of the project's roots: those the catalog
// holds (the user's and the bundled ones) as its Views are built from
// them, and the others (the project's own) read names only by the
// catalog's Loader, through the daemon's file cache. It is the answer the
// registered project's View gives; and the registration goes on in the
// background, for the questions that follow, finding the metadata read
// for the first answer in the cache.

// firstResolve wraps resolve: see above. Any question it cannot answer so
// (the daemon's first scan still runs, the project is registered, a root
// cannot be listed or a collection was read only in part) goes to next.
// Until the registration has published the project's View, each resolve
// about it is answered so.
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
		set, ok := d.cat.Sketch(d.cat.RootsOf(key), d.cat.ReadNames)
		if !ok {
			return next(ctx, raw)
		}
		d.ingest.registerSoon(key)
		return &query.Answer{Result: query.ResolveSet(set, p.Name), Clock: d.clockAt(st.Version)}, nil
	}
}
