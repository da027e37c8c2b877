package lint

import (
	"os"
	"path/filepath"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
)

// StandIn returns the directory of the collection the working directory
// is in, when no root of the workspace holds it: a clone of a
// collection's repository, with no project around it. query and watch
// put it ahead of every root, as check and the language server do (the
// collection you stand in is part of what every surface sees, as the
// module you stand in is for gopls). It is found as check finds it: the
// outermost directory at or above the working directory that looks like
// a collection (and is no scenario tool or module of one), read for its
// names only; one with no profile, agent or context is none (a Python
// project's pyproject.toml alone makes no collection). "" when there is
// none. It is worked out once per run.
func (ws *Workspace) StandIn() string {
	ws.hereOnce.Do(func() { ws.here = ws.findStandIn() })
	return ws.here
}

func (ws *Workspace) findStandIn() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	var candidates []string
	for d := wd; ; {
		if looksLikeCollection(d) && !inToolOrModule(d) {
			candidates = append(candidates, d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	loader := &discovery.Loader{Schema: ws.SchemaOptions(), NamesOnly: true}
	for i := len(candidates) - 1; i >= 0; i-- {
		dir := candidates[i]
		c := loader.Load(discovery.Root{Kind: discovery.RootArgument, Path: dir}, dir)
		if c == nil || len(c.Resources) == 0 {
			continue
		}
		if ws.rootHolds(dir) {
			return ""
		}
		return dir
	}
	return ""
}

// rootHolds reports whether a root of the workspace holds the collection
// directory dir: it is directly in the root, or the root holds a link of
// its name to it (an author's working copy linked into a root).
func (ws *Workspace) rootHolds(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for _, r := range ws.Roots {
		if filepath.Dir(dir) == r.Path {
			return true
		}
		if li, err := os.Stat(filepath.Join(r.Path, filepath.Base(dir))); err == nil && os.SameFile(fi, li) {
			return true
		}
	}
	return false
}

// WithStandIn returns v with the collection the working directory is in
// ahead of every root, read whole, as a daemon answers over it: the
// in-process answer of query.
func (ws *Workspace) WithStandIn(v *catalog.View) *catalog.View {
	dir := ws.StandIn()
	if dir == "" || v == nil {
		return v
	}
	c := ws.Loader().Load(discovery.Root{Kind: discovery.RootArgument, Path: dir}, dir)
	if c == nil {
		return v
	}
	return v.WithArguments([]*discovery.Collection{c})
}
