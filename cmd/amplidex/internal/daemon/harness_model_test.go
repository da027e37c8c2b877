package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/query"
)

// The harness's model of resolution. A fresh scan, the harness's first
// oracle, runs the code under test: a mistake in discovery's reading of
// the tree or in its precedence would be in the daemon's answers and in
// the fresh scan's alike. The model is written from the specification
// (seeds/collection-format-spec.md: "Search Path Precedence", "Discovery
// Algorithm", "Package Structure for Installation") and the rulings of
// PRODUCT.md, and shares no code with discovery: it lists the roots and
// reads the pyproject.toml files the harness writes itself.
//
// What it reads, per root (an absent root holds nothing):
//   - every directory of the root but dotfiles is a candidate;
//   - one whose pyproject.toml names it ([project] name) is a usable
//     collection of that name, whatever else its metadata lacks
//     (PRODUCT.md: "an invalid collection still resolves for
//     references");
//   - one with a pyproject.toml that names nothing, or with resource
//     directories (profiles, agents, context, scenario-tools, modules:
//     at its top, or in a Python package directory, as pip installs a
//     collection) but no pyproject.toml, is no collection: it "resolves
//     nowhere", but answers to its directory's name ("the directory name
//     is only a fast path"), as a directory the resolver skips;
//   - one with neither is ignored.
//
// What it decides of a name, and a resolve answer must say:
//   - found, and the winner: "project > user > bundled, first match
//     wins, by metadata name": the first root, in precedence order, that
//     holds a usable collection of the name, and in it the first such in
//     path order when they all have one layout (the specification orders
//     no two layouts of one root: then any of them);
//   - shadowed: every other usable collection of the name, in the
//     precedence order of their roots;
//   - skipped: every directory of no collection that answers to the name,
//     in the precedence order of their roots;
//   - the status of each: active (the winner), shadowed or skipped.

// modelCol is one candidate directory as the model reads it.
type modelCol struct {
	root    int // index of its root, in precedence order
	dir     string
	name    string // what it answers to
	usable  bool
	version string
	layout  string // "flat", "nested", or "" (no resource directory)
}

// resourceDirs are the directories the specification's discovery
// algorithm looks for.
var resourceDirs = []string{"profiles", "agents", "context", "scenario-tools", "modules"}

// modelRead reads the candidates of roots, given in precedence order,
// each root's in path order.
func modelRead(roots []string) []modelCol {
	var out []modelCol
	for i, root := range roots {
		entries, _ := os.ReadDir(root) // sorted by name, byte-wise
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			dir := filepath.Join(root, e.Name())
			c := modelCol{root: i, dir: dir, layout: modelLayout(dir)}
			name, version, hasMetadata := modelPyproject(filepath.Join(dir, "pyproject.toml"))
			switch {
			case name != "":
				c.name, c.usable, c.version = name, true, version
			case hasMetadata || c.layout != "":
				c.name = e.Name()
			default:
				continue
			}
			out = append(out, c)
		}
	}
	return out
}

// modelLayout says where dir holds resource directories: at its top
// (flat), in a Python package directory of it (nested), or nowhere.
func modelLayout(dir string) string {
	holds := func(d string) bool {
		for _, r := range resourceDirs {
			if fi, err := os.Stat(filepath.Join(d, r)); err == nil && fi.IsDir() {
				return true
			}
		}
		return false
	}
	if holds(dir) {
		return "flat"
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		pkg := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(pkg, "__init__.py")); e.IsDir() && err == nil && holds(pkg) {
			return "nested"
		}
	}
	return ""
}

// modelPyproject reads the [project] name and version of a
// pyproject.toml, as the harness writes them (one `key = "value"` a
// line), and whether the file is there.
func modelPyproject(path string) (name, version string, ok bool) {
	text, err := os.ReadFile(path)
	if err != nil {
		return "", "", false
	}
	table := ""
	for _, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			table = strings.Trim(line, "[]")
			continue
		}
		key, value, found := strings.Cut(line, "=")
		if !found || table != "project" {
			continue
		}
		value = strings.Trim(strings.TrimSpace(value), `"`)
		switch strings.TrimSpace(key) {
		case "name":
			name = value
		case "version":
			version = value
		}
	}
	return name, version, true
}

// modelDiff says how a resolve answer for name differs from what the
// model decides over cols, read from roots ("" when it does not).
func modelDiff(roots []string, cols []modelCol, name string, got *query.ResolveResult) string {
	var usable, skipped []modelCol
	for _, c := range cols {
		switch {
		case c.name != name:
		case c.usable:
			usable = append(usable, c)
		default:
			skipped = append(skipped, c)
		}
	}
	byDir := map[string]modelCol{}
	for _, c := range cols {
		byDir[c.dir] = c
	}
	dirs := func(cs []modelCol) []string {
		out := []string{}
		for _, c := range cs {
			out = append(out, c.dir)
		}
		slices.Sort(out)
		return out
	}
	// inOrder checks that infos are the collections of want, in the
	// precedence order of their roots.
	inOrder := func(what string, infos []query.CollectionInfo, want []modelCol) string {
		var gotDirs []string
		last := -1
		for _, ci := range infos {
			if ci.Status != what {
				return fmt.Sprintf("%s %s is said to be %q", what, ci.Dir, ci.Status)
			}
			gotDirs = append(gotDirs, ci.Dir)
			mc, ok := byDir[ci.Dir]
			if !ok {
				return fmt.Sprintf("%s holds %s, which the model does not know", what, ci.Dir)
			}
			if mc.root < last {
				return fmt.Sprintf("%s are not in the precedence order of their roots: %v", what, gotDirs)
			}
			last = mc.root
		}
		slices.Sort(gotDirs)
		if w := dirs(want); !slices.Equal(gotDirs, w) && len(gotDirs)+len(w) > 0 {
			return fmt.Sprintf("%s %v, the model's %v", what, gotDirs, w)
		}
		return ""
	}
	if len(usable) == 0 {
		if got.Found || got.Winner != nil {
			return fmt.Sprintf("found at %s, the model has no usable collection of the name", got.Winner.Dir)
		}
	} else {
		first := usable[0].root
		var w []modelCol
		for _, c := range usable {
			if c.root == first {
				w = append(w, c)
			}
		}
		oneLayout := !slices.ContainsFunc(w, func(c modelCol) bool { return c.layout != w[0].layout })
		switch {
		case !got.Found || got.Winner == nil:
			return fmt.Sprintf("not found; the model has %v in %s", dirs(w), roots[first])
		case !slices.ContainsFunc(w, func(c modelCol) bool { return c.dir == got.Winner.Dir }):
			return fmt.Sprintf("the winner is %s, the model's one of %v in %s", got.Winner.Dir, dirs(w), roots[first])
		case oneLayout && got.Winner.Dir != w[0].dir:
			return fmt.Sprintf("the winner is %s, the model's %s, first in path order of %v", got.Winner.Dir, w[0].dir, dirs(w))
		case got.Winner.RootPath != roots[first] || got.Winner.Name != name:
			return fmt.Sprintf("the winner %s is %q of root %s, the model's %q of %s", got.Winner.Dir, got.Winner.Name, got.Winner.RootPath, name, roots[first])
		case got.Winner.Status != "active":
			return fmt.Sprintf("the winner %s is said to be %q", got.Winner.Dir, got.Winner.Status)
		case got.Winner.Version != byDir[got.Winner.Dir].version:
			return fmt.Sprintf("the winner %s has version %q, its pyproject.toml %q", got.Winner.Dir, got.Winner.Version, byDir[got.Winner.Dir].version)
		}
		usable = slices.DeleteFunc(usable, func(c modelCol) bool { return c.dir == got.Winner.Dir })
	}
	if d := inOrder("shadowed", got.Shadowed, usable); d != "" {
		return d
	}
	return inOrder("skipped", got.Skipped, skipped)
}

// modelNames are the names the model is asked about over roots: those
// the harness gives collections, the directories' own and the roots'
// anchors'.
func modelNames(roots []string) []string {
	names := []string{"c0", "c1", "c2", "c3", "c4", "c5", "d0", "d1", "d2", "d3", "nowhere"}
	for _, r := range roots {
		names = append(names, anchorName(r))
	}
	return names
}

// compareModel returns how the daemon's resolve answers for a project,
// asked with common, differ from the model's over roots, in precedence
// order ("" when they agree).
func (h *harness) compareModel(c *query.Client, common query.Common, roots []string) string {
	cols := modelRead(roots)
	for _, name := range modelNames(roots) {
		var got *query.ResolveResult
		ok, degraded := h.callDegraded(c, "resolve "+name, func(ctx context.Context) (err error) {
			got, _, err = query.Call(ctx, c, query.MethodResolve, query.NameParams{Common: common, Name: name})
			return err
		})
		if !ok {
			return fmt.Sprintf("project %q: resolve %s: no answer (degraded: %v)", common.Project, name, degraded)
		}
		if d := modelDiff(roots, cols, name, got); d != "" {
			return fmt.Sprintf("project %q (roots %v): resolve %s: the daemon's answer and the harness's model differ: %s\n%s",
				common.Project, roots, name, d, h.journal.about(name))
		}
	}
	return ""
}
