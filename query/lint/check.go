package lint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/check"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/lock"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
)

// checkScope checks what is reported: every root (--all-roots), the
// paths named, or by default what this directory is (see checkDefault).
func (ck *checker) checkScope(ws *Workspace, opts *Options) (checkResult, error) {
	switch {
	case opts.AllRoots:
		return ck.checkAll(ws, opts.With)
	case len(opts.Paths) > 0:
		return ck.checkPaths(ws, opts)
	}
	return ck.checkDefault(ws, opts.With)
}

// checkDefault is check without a path: the project's own collections and
// lock file, whatever else sits at the project's root (and the project
// directory itself when it is a collection); without a project, the
// collection the working directory is in (or, for a directory holding
// collections, those). The user and bundled roots are resolved against,
// never reported: a check of a repository reports the repository. Where
// there is nothing to check (a plain Python repository), it says so on
// stderr and passes, as ruff does on a tree without Python files.
func (ck *checker) checkDefault(ws *Workspace, with []string) (checkResult, error) {
	v, cat := ws.View()
	if err := unlistedRoots(cat); err != nil {
		return checkResult{}, err
	}
	p := newPlanner(ws, v)
	wd, err := os.Getwd()
	if err != nil {
		return checkResult{}, usageErrorf("working directory: %v", err)
	}
	// The bundle repository the working directory is in: all of it.
	repo := p.bundleRoot(wd)
	if repo != "" {
		p.bundle(repo, "")
	}
	var none string
	// The home directory's .amplifier holds the user root: it is no
	// project to report.
	if project := ws.DaemonProject(); project != "" && !samePath(project, ws.Home) {
		p.dir(filepath.Join(project, ".amplifier"))
		if discovery.IsMarked(project) && (repo == "" || !within(project, repo)) {
			if c := p.load(project); c != nil {
				p.addArg(c)
				p.targets = append(p.targets, target{col: c})
			}
		}
		none = fmt.Sprintf("the project %s has no collections and no collections.lock in .amplifier, and no bundle (bundle.md or bundle.yaml) is at or above %s", project, wd)
	} else if repo == "" {
		target := wd
		if c, _ := p.owner(wd, true); c != nil {
			target = c.Dir
		}
		p.dir(target)
		none = fmt.Sprintf("no project (.amplifier) above %s and no collection or bundle (bundle.md or bundle.yaml) at or above it", wd)
	}
	if len(p.targets) == 0 {
		fmt.Fprintf(ck.stderr, "amplidex: nothing to check: %s; name a PATH, or use --all-roots for the user and bundled roots\n", none)
	}
	return ck.checkPlan(ws, cat, p, with, false)
}

// errNothingToCheck is returned by checkPaths when a directory holds
// nothing check can check.
var errNothingToCheck = errors.New("no collections")

// checkAll checks every collection of every root and their lock files,
// as --all-roots asks.
func (ck *checker) checkAll(ws *Workspace, with []string) (checkResult, error) {
	v, cat := ws.View()
	if err := unlistedRoots(cat); err != nil {
		return checkResult{}, err
	}
	res := checkResult{view: v, all: true, files: map[string]bool{}}
	if len(with) == 0 {
		res.diags = slices.Clone(v.Diagnostics())
	} else {
		p := newPlanner(ws, v)
		cols, err := p.withCollections(with)
		if err != nil {
			return checkResult{}, err
		}
		wv := v.WithArguments(cols)
		res.view = wv
		for _, c := range wv.Set.Collections() {
			if c.Root.Kind != discovery.RootArgument {
				res.diags = append(res.diags, wv.CollectionDiagnostics(c)...)
			}
		}
		for _, lf := range wv.LockFiles() {
			ds, _ := wv.LockDiagnostics(lf)
			res.diags = append(res.diags, ds...)
		}
	}
	for _, c := range v.Set.Collections() {
		res.collections++
		for f := range c.Facts {
			res.files[f] = true
		}
	}
	for _, lf := range v.LockFiles() {
		if isFileAt(lf) {
			res.files[lf] = true
		}
	}
	return res, nil
}

// checkResult is what a check found before suppression and selection:
// the diagnostics, how many collections they come from, and the files in
// scope (those whose unused suppression comments are reported); all is
// set when every file read is in scope.
type checkResult struct {
	// view is the View the diagnostics come from (with the collections
	// named on the command line).
	view        *catalog.View
	diags       []diag.Diagnostic
	collections int
	files       map[string]bool
	all         bool
	// repositories counts the bundle repositories checked, bundleFiles
	// holds the parses of their files (check --fix fixes them).
	repositories int
	bundleFiles  map[string]bundleFile
}

// checked counts the files checked: those in scope, and any other path a
// diagnostic reported is about.
func (r checkResult) checked(ds []diag.Diagnostic) int {
	n := len(r.files)
	seen := map[string]bool{}
	for _, d := range ds {
		if !r.files[d.Path] && !seen[d.Path] {
			seen[d.Path] = true
			n++
		}
	}
	return n
}

// dirs returns the directories of the files in scope, sorted.
func (r checkResult) dirs() []string {
	seen := make(map[string]bool, len(r.files))
	var out []string
	for f := range r.files {
		if d := dirOf(f); !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// dirOf is filepath.Dir of a clean path, without cleaning it again.
func dirOf(p string) string {
	i := strings.LastIndexByte(p, filepath.Separator)
	if i <= len(filepath.VolumeName(p)) || i == len(p)-1 {
		return filepath.Dir(p)
	}
	return p[:i]
}

// target is one part of what `check PATH…` checks: a whole collection,
// the files of one below a directory (under) or one file (file), a lock
// file, a file that no collection holds, or a bundle repository (bundle,
// its root), all of it or what is at or below under.
type target struct {
	col    *discovery.Collection
	under  string
	file   string
	lock   string
	lone   string
	bundle string
}

// planner turns the paths of `check PATH…` into targets.
type planner struct {
	view   *catalog.View
	loader *discovery.Loader
	// files reads bundle repositories, each file once; home is never
	// one.
	files  *compose.DiskFiles
	home   string
	loaded map[string]*discovery.Collection // argument collections by directory
	shapes map[string]bool                  // isCollectionDir by directory
	// args are the collections found outside the workspace's roots; they
	// are checked ahead of every root (catalog.WithArguments).
	args []*discovery.Collection
	// whole makes a path inside a collection stand for all of it.
	whole   bool
	targets []target
	unknown []string
	// notMetadata are the pyproject.toml files named that are no
	// collection's metadata.
	notMetadata []string
	// unreadable says why each bundle file named cannot be read.
	unreadable []string
}

// checkPaths checks what each path names: a file, a collection, a
// directory inside one, a root, a project directory or its .amplifier.
// Cross-references resolve against the collections named first, then the
// workspace's roots.
//
// With --whole, a file or directory inside a collection stands for the
// whole collection: a rename in agents/ is checked from the profiles that
// name it (the pre-commit hook names the staged files).
func (ck *checker) checkPaths(ws *Workspace, opts *Options) (checkResult, error) {
	v, cat := ws.View()
	if err := unlistedRoots(cat); err != nil {
		return checkResult{}, err
	}
	p := newPlanner(ws, v)
	p.whole = opts.Whole
	seen := map[string]bool{}
	for _, arg := range opts.Paths {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return checkResult{}, usageErrorf("check: %v", err)
		}
		key := abs
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			key = real
		}
		if seen[key] {
			continue // a path named twice is checked once
		}
		seen[key] = true
		fi, err := os.Stat(abs)
		if err != nil {
			return checkResult{}, usageErrorf("check: %s: %s", arg, errText(err))
		}
		if fi.IsDir() {
			if !p.dir(abs) {
				return checkResult{}, &UsageError{Err: fmt.Errorf("check: %w under %s", errNothingToCheck, arg)}
			}
			continue
		}
		p.file(abs)
	}
	return ck.checkPlan(ws, cat, p, opts.With, opts.IgnoreUnknown)
}

// newPlanner returns a planner over the workspace's View v.
func newPlanner(ws *Workspace, v *catalog.View) *planner {
	return &planner{view: v, loader: ws.Loader(), loaded: map[string]*discovery.Collection{}, shapes: map[string]bool{},
		files: &compose.DiskFiles{}, home: ws.Home}
}

// checkPlan checks the targets p planned, the collections of --with
// resolved against.
func (ck *checker) checkPlan(ws *Workspace, cat *catalog.Catalog, p *planner, with []string, ignoreUnknown bool) (checkResult, error) {
	v := p.view
	if len(p.unknown) > 0 && !ignoreUnknown {
		return checkResult{}, usageErrorf("check: amplidex does not check %s: it checks profiles/*.md, agents/*.md, context/**/*.md, "+
			"pyproject.toml and collections.lock, and a bundle repository's bundles, agents, modes, skills, recipes and context "+
			"(--ignore-unknown skips the others)", strings.Join(p.unknown, ", "))
	}
	if len(p.notMetadata) > 0 && !ignoreUnknown {
		return checkResult{}, usageErrorf("check: %s: no collection's metadata: a pyproject.toml is a collection's with profiles/, agents/, "+
			"context/, scenario-tools/ or modules/ beside it or in its package, a [tool.amplifier.collection] table, or in .amplifier/collections "+
			"(--ignore-unknown skips it)", strings.Join(p.notMetadata, ", "))
	}
	if len(p.unreadable) > 0 {
		return checkResult{}, usageErrorf("check: %s", strings.Join(p.unreadable, "; "))
	}
	withCols, err := p.withCollections(with)
	if err != nil {
		return checkResult{}, err
	}
	view := v
	if args := append(slices.Clone(p.args), withCols...); len(args) > 0 {
		view, _ = cat.WithArguments(ws.DaemonProject(), args)
	}
	n := 0 // the files in scope, at most
	for _, t := range p.targets {
		if t.col != nil {
			n += len(t.col.Facts)
		}
	}
	res := checkResult{view: view, files: make(map[string]bool, n), bundleFiles: map[string]bundleFile{}}
	seenDiag := map[diag.Diagnostic]bool{}
	add := func(ds []diag.Diagnostic, keep func(diag.Diagnostic) bool) {
		for _, d := range ds {
			if (keep == nil || keep(d)) && !seenDiag[d] {
				seenDiag[d] = true
				res.diags = append(res.diags, d)
			}
		}
	}
	cols := map[string]bool{}
	for _, t := range p.targets {
		switch {
		case t.col != nil:
			cols[t.col.Dir] = true
			ds := view.CollectionDiagnostics(t.col)
			switch {
			case t.file != "":
				res.files[t.file] = true
				add(ds, func(d diag.Diagnostic) bool { return d.Path == t.file })
			case t.under != "":
				for f := range t.col.Facts {
					if within(f, t.under) {
						res.files[f] = true
					}
				}
				add(ds, func(d diag.Diagnostic) bool { return within(d.Path, t.under) })
			default:
				for f := range t.col.Facts {
					res.files[f] = true
				}
				add(ds, nil)
			}
		case t.lock != "":
			res.files[t.lock] = true
			if ds, ok := view.LockDiagnostics(t.lock); ok {
				add(ds, nil)
				continue
			}
			ds, err := checkLock(t.lock)
			if err != nil {
				return checkResult{}, err
			}
			add(ds, nil)
		case t.lone != "":
			res.files[t.lone] = true
			ds, err := checkLoneFile(ws, view.Set, t.lone)
			if err != nil {
				return checkResult{}, err
			}
			add(ds, nil)
		}
	}
	res.collections = len(cols)
	ck.checkBundles(ws, p.files, p.targets, &res)
	return res, nil
}

// dir plans the check of directory d; it reports false when nothing
// under d can be checked.
func (p *planner) dir(d string) bool {
	// A bundle repository, or a directory inside one; a repository's
	// project collections are checked beside it.
	if root := p.bundleRoot(d); root != "" {
		p.bundle(root, d)
		if amp := filepath.Join(d, ".amplifier"); d == root && isDirAt(amp) {
			p.dir(amp)
		}
		return true
	}
	// A collection, or a directory inside one.
	if c, dir := p.owner(d, true); c != nil {
		if dir == c.Dir || p.whole {
			p.targets = append(p.targets, target{col: c})
		} else {
			p.targets = append(p.targets, target{col: c, under: dir})
		}
		return true
	}
	// A project directory: its .amplifier.
	if amp := filepath.Join(d, ".amplifier"); isDirAt(amp) && filepath.Base(d) != ".amplifier" {
		return p.dir(amp)
	}
	// .amplifier: the collections root and the lock file beside it.
	if filepath.Base(d) == ".amplifier" {
		found := false
		if lock := filepath.Join(d, "collections.lock"); existsAt(lock) {
			p.targets = append(p.targets, target{lock: lock})
			found = true
		}
		if root := filepath.Join(d, "collections"); isDirAt(root) && p.root(root) {
			found = true
		}
		return found
	}
	// A root holding collections.
	return p.root(d)
}

// root plans the check of every collection of the root at dir: from the
// workspace's View when it is one of its roots (as plain check reports
// it), else read as an argument. It reports false when it holds none.
func (p *planner) root(dir string) bool {
	for i, r := range p.view.Set.Roots {
		if !samePath(r.Path, dir) {
			continue
		}
		found := false
		for _, c := range p.view.Set.InRoot(i) {
			p.targets = append(p.targets, target{col: c})
			found = true
		}
		if lp := discovery.LockPath(r); lp != "" && existsAt(lp) {
			p.targets = append(p.targets, target{lock: lp})
		}
		return found
	}
	dirs, err := discovery.CandidateDirs(dir)
	if err != nil {
		return false
	}
	// Outside a collections root, a directory is a collection where its
	// layout says so: a Python project's pyproject.toml is not metadata.
	marked := !isCollectionsRoot(dir)
	found := false
	for _, d := range dirs {
		if !isDirAt(d) || marked && !discovery.IsMarked(d) {
			continue
		}
		if c := p.load(d); c != nil {
			p.addArg(c)
			p.targets = append(p.targets, target{col: c})
			found = true
		}
	}
	return found
}

// withCollections loads the collections of --with: each directory is a
// collection, or a root holding collections. They resolve after the paths
// checked and ahead of every root, and are not reported.
func (p *planner) withCollections(dirs []string) ([]*discovery.Collection, error) {
	var out []*discovery.Collection
	for _, arg := range dirs {
		dir, err := filepath.Abs(arg)
		if err != nil {
			return nil, usageErrorf("check: --with %s: %v", arg, err)
		}
		if !isDirAt(dir) {
			return nil, usageErrorf("check: --with %s: not a directory", arg)
		}
		var cands []string
		if looksLikeCollection(dir) {
			cands = []string{dir}
		} else if cands, err = discovery.CandidateDirs(dir); err != nil {
			return nil, usageErrorf("check: --with %s: %v", arg, errText(err))
		}
		found := false
		for _, d := range cands {
			if !isDirAt(d) {
				continue
			}
			if c := p.load(d); c != nil && !slices.Contains(p.args, c) && !slices.Contains(out, c) {
				out = append(out, c)
				found = true
			}
		}
		if !found {
			return nil, usageErrorf("check: --with %s: no collection there, and no directory of collections", arg)
		}
	}
	return out, nil
}

// addArg records an argument collection once.
func (p *planner) addArg(c *discovery.Collection) {
	if !slices.Contains(p.args, c) {
		p.args = append(p.args, c)
	}
}

// file plans the check of one file: as a file of the collection that holds
// it, else on its own when its kind is told by its name, else it is of a
// kind amplidex does not check.
func (p *planner) file(f string) {
	if p.bundleFile(f, false) {
		return
	}
	if c, file := p.owner(f, false); c != nil {
		if p.whole {
			p.targets = append(p.targets, target{col: c})
		} else {
			p.targets = append(p.targets, target{col: c, file: file})
		}
		return
	}
	for _, r := range p.view.Set.Roots {
		if lp := discovery.LockPath(r); lp != "" && samePath(lp, f) {
			p.targets = append(p.targets, target{lock: lp})
			return
		}
	}
	base, dir := filepath.Base(f), filepath.Base(filepath.Dir(f))
	switch {
	case base == "collections.lock":
		p.targets = append(p.targets, target{lock: f})
	case p.bundleFile(f, true):
	case base == "pyproject.toml" && !inToolOrModule(filepath.Dir(f)):
		// No collection holds it (owner would have said): an ordinary
		// Python project's.
		wd, _ := os.Getwd()
		p.notMetadata = append(p.notMetadata, query.DisplayPath(wd, f))
	case (dir == "profiles" || dir == "agents") && strings.HasSuffix(base, ".md") &&
		!discovery.IsEditorDropping(base) && !strings.EqualFold(base, "README.md"):
		p.targets = append(p.targets, target{lone: f})
	default:
		wd, _ := os.Getwd()
		p.unknown = append(p.unknown, query.DisplayPath(wd, f))
	}
}

// owner returns the collection that holds p and p as that collection
// spells it (its directory rather than the real path it links to): for a
// file, one it read; for a directory (isDir), the collection's own
// directory or one below it with files or diagnostics. The workspace's
// View is asked first; else the directories from p up are looked at, the
// outermost collection that holds p winning (a nested layout's package
// directory belongs to the collection above it).
func (p *planner) owner(path string, isDir bool) (*discovery.Collection, string) {
	if c := p.view.Set.Owner(path); c != nil {
		if sp, ok := holds(p.view.CollectionDiagnostics(c), c, path, isDir); ok {
			return c, sp
		}
	}
	var candidates []string
	for d := path; ; {
		if d != path || isDir {
			is, seen := p.shapes[d]
			if !seen {
				is = isCollectionDir(d) && !inToolOrModule(d)
				p.shapes[d] = is
			}
			if is {
				candidates = append(candidates, d)
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	for i := len(candidates) - 1; i >= 0; i-- {
		c := p.load(candidates[i])
		if c == nil {
			continue
		}
		if sp, ok := holds(c.Diagnostics, c, path, isDir); ok {
			p.addArg(c)
			return c, sp
		}
	}
	return nil, ""
}

// load reads the collection at dir as an argument (in a root that is its
// parent directory), once per run, so that a directory reached from two
// paths is one collection.
func (p *planner) load(dir string) *discovery.Collection {
	if c, ok := p.loaded[dir]; ok {
		return c
	}
	c := p.loader.Load(discovery.Root{Kind: discovery.RootArgument, Path: filepath.Dir(dir)}, dir)
	p.loaded[dir] = c
	return c
}

// holds reports whether c holds path, and path as c spells it: a file c
// read, or (isDir) c's directory or a directory with some of its files or
// diagnostics below it.
func holds(diags []diag.Diagnostic, c *discovery.Collection, path string, isDir bool) (string, bool) {
	sp := respell(c, path)
	if !isDir {
		return sp, c.Facts[sp] != nil || c.Pyproject == sp
	}
	if sp == c.Dir {
		return sp, true
	}
	for f := range c.Facts {
		if within(f, sp) {
			return sp, true
		}
	}
	for _, d := range diags {
		if within(d.Path, sp) {
			return sp, true
		}
	}
	return sp, false
}

// respell rewrites a path below c's real directory to the same path below
// its directory, the spelling its files and diagnostics use.
func respell(c *discovery.Collection, p string) string {
	if c.RealDir != "" && c.RealDir != c.Dir && within(p, c.RealDir) {
		rel, _ := filepath.Rel(c.RealDir, p)
		return filepath.Join(c.Dir, rel)
	}
	return p
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// samePath reports whether a and b name the same directory or file,
// following symbolic links.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// inToolOrModule reports whether dir is a scenario tool or a module of a
// collection: its pyproject.toml is the tool's, not collection metadata.
func inToolOrModule(dir string) bool {
	switch filepath.Base(filepath.Dir(dir)) {
	case "scenario-tools", "modules":
		return true
	}
	return false
}

// isCollectionDir reports whether dir, met on the way up from a path
// checked, is a collection: a directory its layout marks as one (see
// discovery.Shape.Marked), or one with metadata in a collections root
// (.amplifier/collections), which says so whatever it holds.
func isCollectionDir(dir string) bool {
	if isCollectionsRoot(filepath.Dir(dir)) {
		return looksLikeCollection(dir)
	}
	return discovery.IsMarked(dir)
}

// isCollectionsRoot reports whether dir is a collections root by its
// name: the collections directory of a .amplifier directory.
func isCollectionsRoot(dir string) bool {
	return filepath.Base(dir) == "collections" && filepath.Base(filepath.Dir(dir)) == ".amplifier"
}

// looksLikeCollection tells a collection directory from a root holding
// collections: a collection has a pyproject.toml or a resource directory at
// its top, or pip's metadata (a *.dist-info directory).
// One listing of dir answers, with a stat for a symbolic link: a root
// holding thousands of collections is not looked into further.
func looksLikeCollection(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	// is reports whether entry e is of the type want says, following a
	// symbolic link.
	is := func(e os.DirEntry, want func(fs.FileMode) bool) bool {
		if e.Type()&fs.ModeSymlink == 0 {
			return want(e.Type())
		}
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		return err == nil && want(fi.Mode())
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasSuffix(name, ".dist-info"):
			return true
		case name == "pyproject.toml":
			if is(e, fs.FileMode.IsRegular) {
				return true
			}
		case isResourceDirName(name):
			if is(e, fs.FileMode.IsDir) {
				return true
			}
		}
	}
	return false
}

// isResourceDirName reports the names of the directories that hold a
// collection's resources.
func isResourceDirName(name string) bool {
	for _, k := range discovery.Kinds {
		if name == k.Dir() {
			return true
		}
	}
	return false
}

// checkLock checks a lock file that belongs to no root of the workspace.
// One that is not a regular file (a link to /dev/zero, a FIFO) or cannot
// be read is reported, not read.
func checkLock(path string) ([]diag.Diagnostic, error) {
	_, ds, err := lock.Read(path)
	if err != nil && len(ds) == 0 {
		return nil, usageErrorf("check: %v", err)
	}
	return ds, nil
}

// checkLoneFile checks one file that no collection holds, its kind told by
// its name and directory, as the editor does (check.Lone: its own
// problems, its qualified references over set, its suppression
// comments). path is absolute. Only a regular file of at most the
// document limit is read: a FIFO, a device or a link to one named on the
// command line is a usage error naming it, never a hang. (A bundle
// repository's files are checked with their repository: see
// checkBundles.)
func checkLoneFile(ws *Workspace, set *resolve.Set, path string) ([]diag.Diagnostic, error) {
	src, err := syntax.ReadFile(path, syntax.DefaultMaxFileSize)
	if err != nil {
		return nil, usageErrorf("check: %v", err)
	}
	kind := discovery.KindAgent // agents/*.md
	if filepath.Base(filepath.Dir(path)) == "profiles" {
		kind = discovery.KindProfile
	}
	return check.Lone(set, path, src, kind, ws.SchemaOptions()), nil
}

// existsAt reports whether there is anything at p, of any type, a
// dangling link included: a lock file that is not a regular file is
// reported, not passed over.
func existsAt(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func isFileAt(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isDirAt(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Summarize counts diagnostics by severity and file.
func Summarize(ds []diag.Diagnostic) query.Summary {
	var s query.Summary
	files := map[string]bool{}
	for _, d := range ds {
		files[d.Path] = true
		switch d.Severity {
		case diag.SeverityError:
			s.Errors++
		case diag.SeverityWarning:
			s.Warnings++
		default:
			s.Infos++
		}
	}
	s.Files = len(files)
	return s
}

// SummaryLine is the last line of check's text: "All checks passed: 12
// files in 1 collection." when nothing is reported, else the count of
// each severity (named as --severity names them) and of the files.
func SummaryLine(s Summary) string {
	where := query.Plural(s.Collections, "collection")
	switch {
	case s.Repositories > 0 && s.Collections == 0:
		where = query.Plural(s.Repositories, "bundle repository")
	case s.Repositories > 0:
		where += " and " + query.Plural(s.Repositories, "bundle repository")
	}
	scope := fmt.Sprintf("%s in %s", query.Plural(s.FilesChecked, "file"), where)
	if s.Errors+s.Warnings+s.Infos == 0 && s.FilesChecked == 0 && s.Baselined == 0 {
		return "Nothing checked: no files."
	}
	if s.Errors+s.Warnings+s.Infos == 0 {
		line := "All checks passed: " + scope
		if s.Baselined > 0 {
			line += fmt.Sprintf(" (%d more in the baseline)", s.Baselined)
		}
		return line + "."
	}
	files := fmt.Sprintf("%d of %s", s.Files, query.Plural(s.FilesChecked, "file"))
	if s.Files == s.FilesChecked {
		files = query.Plural(s.Files, "file")
	}
	line := fmt.Sprintf("%s, %s, %d info in %s (%s checked",
		query.Plural(s.Errors, "error"), query.Plural(s.Warnings, "warning"), s.Infos, files, where)
	if s.Baselined > 0 {
		line += fmt.Sprintf(", %d in the baseline", s.Baselined)
	}
	return line + ")"
}

// unlistedRoots is the error of a check whose roots could not all be
// listed: a root that cannot be listed is not an empty one, and a check
// of it must not pass.
func unlistedRoots(cat *catalog.Catalog) error {
	var why []string
	for _, ri := range cat.State().Roots() {
		if ri.Failed != "" {
			why = append(why, ri.Failed)
		}
	}
	if len(why) > 0 {
		return usageErrorf("check: %s", strings.Join(why, "; "))
	}
	return nil
}
