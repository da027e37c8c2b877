package daemon

import (
	"context"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// Common are the parameters every query may carry besides its own.
type Common struct {
	// Project is the project directory the query is about; "" for none
	// (the user and bundled roots only). A new project is registered and
	// watched from its first query on.
	Project string `json:"project,omitempty"`
	// NoSync skips the wait for pending changes (read-your-writes).
	NoSync bool `json:"no_sync,omitempty"`
}

// ChangesParams are the parameters of "changes".
type ChangesParams struct {
	Common
	Since string `json:"since"`
}

// Change is one entry of a "changes" answer.
type Change struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted"`
}

// ChangesResult is the answer to "changes".
type ChangesResult struct {
	Clock           query.Clock `json:"clock"`
	IsFreshInstance bool        `json:"is_fresh_instance"`
	// Files are the changed paths, or with IsFreshInstance every indexed
	// path.
	Files []Change `json:"files"`
}

// RootStatus is one root in a "status" answer.
type RootStatus struct {
	Path        string             `json:"path"`
	Kind        discovery.RootKind `json:"kind"`
	State       watcher.State      `json:"state"`
	Watches     int                `json:"watches"`
	Collections int                `json:"collections"`
	Warnings    []string           `json:"warnings,omitempty"`
}

// Status is the answer to "status".
type Status struct {
	PID      int          `json:"pid"`
	Started  time.Time    `json:"started"`
	Uptime   string       `json:"uptime"`
	Socket   string       `json:"socket"`
	Index    string       `json:"index"`
	Clock    query.Clock  `json:"clock"`
	Roots    []RootStatus `json:"roots"`
	Projects []string     `json:"projects"`
	Files    int          `json:"files"`
	Analyzed int          `json:"analyzed"`
	Warnings []string     `json:"warnings"`
	// Bundles are the prepared bundles the daemon keeps warm.
	Bundles []BundleStatus `json:"bundles"`
}

// mux registers every method the daemon answers.
func (d *Daemon) mux() *query.Mux {
	m := query.NewMux()
	for _, method := range query.Methods {
		method := method
		m.Handle(method, func(ctx context.Context, params json.RawMessage) (any, error) {
			snap, err := d.snapshot(ctx, params)
			if err != nil {
				return nil, err
			}
			return snap.Answer(method, params)
		})
	}
	m.Handle("changes", d.changes)
	m.Handle("status", func(ctx context.Context, params json.RawMessage) (any, error) { return d.Status(), nil })
	m.Handle("subscribe", d.subscribe)
	return m
}

// snapshot waits for pending changes unless the caller opts out, registers
// the caller's project, and returns its snapshot.
func (d *Daemon) snapshot(ctx context.Context, params json.RawMessage) (*query.Snapshot, error) {
	var c Common
	if len(params) > 0 {
		if err := json.Unmarshal(params, &c); err != nil {
			return nil, query.Errorf(query.CodeInvalidParams, "params: %v", err)
		}
	}
	if c.Project != "" && !filepath.IsAbs(c.Project) {
		return nil, query.Errorf(query.CodeInvalidParams, "project %q is not an absolute path", c.Project)
	}
	if c.NoSync {
		return d.published(cleanProject(c.Project))
	}
	if err := d.w.Flush(ctx); err != nil {
		return nil, err
	}
	return d.project(cleanProject(c.Project))
}

// cleanProject cleans a project directory, keeping "" for none.
func cleanProject(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}

func (d *Daemon) changes(ctx context.Context, params json.RawMessage) (any, error) {
	var p ChangesParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, query.Errorf(query.CodeInvalidParams, "params: %v", err)
	}
	since, err := query.ParseClock(p.Since)
	if err != nil {
		return nil, query.Errorf(query.CodeInvalidParams, "since: %v", err)
	}
	if !p.NoSync {
		if err := d.w.Flush(ctx); err != nil {
			return nil, err
		}
		if _, err := d.project(cleanProject(p.Project)); err != nil {
			return nil, err
		}
	}
	d.mu.Lock()
	d.waitWrites()
	logLags := d.unsaved
	d.mu.Unlock()
	now := d.clock()
	res := &ChangesResult{Clock: now, Files: []Change{}}
	if since.Start == now.Start && since.PID == now.PID && !logLags {
		changes, complete, err := d.store.Changes(since.Tick)
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
				res.Files = append(res.Files, Change{Path: c.Path, Deleted: c.Deleted})
			}
			return res, nil
		}
	}
	res.IsFreshInstance = true
	for _, p := range d.cache.paths() {
		res.Files = append(res.Files, Change{Path: p})
	}
	return res, nil
}

// Status reports the daemon's state.
func (d *Daemon) Status() *Status {
	ws := map[string]watcher.RootStatus{}
	for _, r := range d.w.Status() {
		ws[r.Path] = r
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	st := &Status{
		PID: d.pid, Started: d.start, Uptime: d.now().Sub(d.start).Round(time.Second).String(),
		Socket: d.opts.Paths.Socket, Index: d.opts.Paths.Index, Clock: d.clock(),
		Files: len(d.cache.paths()), Analyzed: d.cache.analyzed(), Projects: []string{},
		Warnings: append([]string{}, d.warnings...), Bundles: d.bundleStatus(),
	}
	for _, rs := range d.roots {
		w := ws[rs.root.Path]
		st.Roots = append(st.Roots, RootStatus{Path: rs.root.Path, Kind: rs.root.Kind, State: w.State,
			Watches: w.Watches, Collections: len(rs.cols), Warnings: w.Warnings})
	}
	sortRoots(st.Roots)
	for p := range d.projects {
		st.Projects = append(st.Projects, p)
	}
	sortStrings(st.Projects)
	return st
}
