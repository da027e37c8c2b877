package daemon

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/query"
)

// SubscribeParams are the parameters of "subscribe": the project, and the
// paths (files or directories) whose diagnostics to follow; none means
// every file.
type SubscribeParams struct {
	Common
	Paths []string `json:"paths,omitempty"`
}

// FileDiagnostics is the diagnostics of one file, as a subscription sends
// them whenever they change; an empty list means they cleared.
type FileDiagnostics struct {
	Path        string                 `json:"path"`
	Diagnostics []discovery.Diagnostic `json:"diagnostics"`
}

// Update is one notification of a subscription.
type Update struct {
	Clock query.Clock       `json:"clock"`
	Files []FileDiagnostics `json:"files"`
}

// subscriber is one open subscription, woken after each publish.
type subscriber struct {
	wake chan struct{}
}

func (s *subscriber) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// subscribe opens a stream that sends, first, the current diagnostics of
// every followed file that has any, then each change of any followed file's
// diagnostics.
func (d *Daemon) subscribe(ctx context.Context, params json.RawMessage) (any, error) {
	var p SubscribeParams
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, query.Errorf(query.CodeInvalidParams, "params: %v", err)
		}
	}
	for _, path := range p.Paths {
		if !filepath.IsAbs(path) {
			return nil, query.Errorf(query.CodeInvalidParams, "path %q is not absolute", path)
		}
	}
	if _, err := d.snapshot(ctx, params); err != nil {
		return nil, err
	}
	return &query.Stream{
		Result: map[string]any{"clock": d.clock()},
		Run: func(ctx context.Context, send func(any) error) error {
			return d.Follow(ctx, p.Project, p.Paths, func(u Update) error { return send(u) })
		},
	}, nil
}

// Follow calls fn with the diagnostics of the project's files below paths
// (every file when paths is empty): first those that have any, then, after
// each batch, those whose diagnostics changed. It returns nil when ctx
// ends, or fn's error.
func (d *Daemon) Follow(ctx context.Context, project string, paths []string, fn func(Update) error) error {
	project = cleanProject(project)
	for i := range paths {
		paths[i] = filepath.Clean(paths[i])
	}
	if _, err := d.project(project); err != nil {
		return err
	}
	sub := &subscriber{wake: make(chan struct{}, 1)}
	d.mu.Lock()
	d.subs[sub] = struct{}{}
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.subs, sub)
		d.mu.Unlock()
	}()
	follows := func(path string) bool {
		if len(paths) == 0 {
			return true
		}
		for _, q := range paths {
			if path == q || strings.HasPrefix(path, q+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	last := map[string][]discovery.Diagnostic{}
	sub.notify()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sub.wake:
		}
		d.mu.Lock()
		snap := d.view(project)
		d.mu.Unlock()
		cur := map[string][]discovery.Diagnostic{}
		for _, dg := range snap.Diagnostics {
			if follows(dg.Path) {
				cur[dg.Path] = append(cur[dg.Path], dg)
			}
		}
		var files []FileDiagnostics
		for path, ds := range cur {
			if !slices.Equal(ds, last[path]) {
				files = append(files, FileDiagnostics{Path: path, Diagnostics: ds})
			}
		}
		for path := range last {
			if _, ok := cur[path]; !ok {
				files = append(files, FileDiagnostics{Path: path, Diagnostics: []discovery.Diagnostic{}})
			}
		}
		last = cur
		if len(files) == 0 {
			continue
		}
		sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
		if err := fn(Update{Clock: d.clock(), Files: files}); err != nil {
			return err
		}
	}
}

func sortRoots(rs []RootStatus) {
	order := map[discovery.RootKind]int{discovery.RootProject: 0, discovery.RootUser: 1, discovery.RootBundled: 2}
	sort.SliceStable(rs, func(i, j int) bool {
		if order[rs[i].Kind] != order[rs[j].Kind] {
			return order[rs[i].Kind] < order[rs[j].Kind]
		}
		return rs[i].Path < rs[j].Path
	})
}

func sortStrings(s []string) { sort.Strings(s) }
