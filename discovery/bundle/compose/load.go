package compose

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/diag"
)

// Bounds of one composition.
const (
	// MaxIncludeDepth is the deepest chain of includes followed.
	MaxIncludeDepth = 32
	// MaxLoads is the most bundle loads one composition makes.
	MaxLoads = 1000
)

// regEntry is a name of the runtime's registry during a load.
type regEntry struct {
	uri    string
	local  string // the runtime's local_path: where the bundle was loaded from ("" until it is)
	isRoot bool
}

// failKind is how a load failed, as the runtime's exceptions tell apart.
type failKind uint8

const (
	fNotFound   failKind = iota + 1 // BundleNotFoundError: nothing at the URI
	fNotCached                      // a fetch the runtime would make
	fLoad                           // the file does not load (BundleLoadError, YAML, validation)
	fCycle                          // BundleDependencyError: a circular include
	fDependency                     // BundleDependencyError: an include of it cannot resolve
	fCompose                        // composing raises
	fTooDeep
)

// failure is why a load failed; the diagnostic, when one is due, is made
// where the failure lands.
type failure struct {
	kind failKind
	msg  string
	url  string // for fNotCached: the repository
}

// site is an include line: the file and the range of the entry.
type site struct {
	file *bundle.File
	r    diag.Range
}

func (s site) origin() Origin {
	if s.file == nil {
		return Origin{}
	}
	return Origin{Path: s.file.Path, Line: s.r.Start.Line + 1}
}

// task is one _load_single of the runtime.
type task struct {
	source string // the include as written
	req    string // the name or URI asked for
	uri    string // after the registry
	base   string // directory relative sources resolve from
	chain  map[string]bool
	parent *task
	at     site
	depth  int
	bare   bool // auto_include=False: a namespace preload

	file     *bundle.File
	own      *value
	children []*task
	waiting  int
	finished bool
	result   *value
	fail     *failure
	waiters  []*task
	node     *IncludeNode
	// topFailures are the reasons the runtime refuses the top bundle,
	// which amplidex composes anyway.
	refused string
}

// loader is the state of one composition: the runtime's registry and its
// caches, and the queue of loads in the order asyncio runs them.
type loader struct {
	loc     *Locations
	files   *recorder
	reg     map[string]*regEntry
	loaded  map[string]*task
	pending map[string]*task
	queue   []*task
	loads   int
	diags   []diag.Diagnostic
	seen    map[string]bool // diagnostics made (path, line, code, message)
	cached  map[string]bool // not-cached warnings made (includer, repository)
}

func (l *loader) diag(s site, code string, sev diag.Severity, format string, args ...any) {
	if s.file == nil {
		return
	}
	d := diag.Diagnostic{Code: code, Severity: sev, Path: s.file.Path, Range: s.r, Message: fmt.Sprintf(format, args...)}
	k := fmt.Sprint(d.Path, d.Range, d.Code, d.Message)
	if l.seen[k] {
		return
	}
	l.seen[k] = true
	l.diags = append(l.diags, d)
}

// register sets a name of the registry, as BundleRegistry.register does.
func (l *loader) register(name, uri string) {
	if e := l.reg[name]; e != nil {
		e.uri = uri
		return
	}
	l.reg[name] = &regEntry{uri: uri, isRoot: true}
}

// run processes the queue until every load has finished. Loads that wait
// on each other (two includes of one bundle, each the other's include)
// would make the runtime wait forever; they fail as cycles.
func (l *loader) run() {
	for {
		for len(l.queue) > 0 {
			t := l.queue[0]
			l.queue = l.queue[1:]
			l.start(t)
		}
		var stuck []*task
		for _, p := range l.pending {
			stuck = append(stuck, p.waiters...)
			p.waiters = nil
		}
		if len(stuck) == 0 {
			return
		}
		sort.Slice(stuck, func(i, j int) bool {
			return stuck[i].at.origin().Path+stuck[i].source < stuck[j].at.origin().Path+stuck[j].source
		})
		for _, w := range stuck {
			w.node.Status = ""
			l.finish(w, &failure{kind: fCycle, msg: "it waits for a load of the same bundle that waits for it (the runtime hangs here)"})
		}
	}
}

// start runs a load up to where the runtime awaits its includes.
func (l *loader) start(t *task) {
	l.loads++
	uri := t.req
	registered := ""
	if e := l.reg[t.req]; e != nil {
		registered, uri = t.req, e.uri
	}
	t.uri = uri
	base := baseURI(uri)
	if done := l.loaded[uri]; done != nil {
		l.share(t, done)
		return
	}
	isSub := strings.Contains(uri, "#subdirectory=")
	if !isSub && (t.chain[uri] || t.chain[base]) {
		l.finish(t, &failure{kind: fCycle, msg: "it is still loading: the include leads back to it"})
		return
	}
	if p := l.pending[uri]; p != nil {
		p.waiters = append(p.waiters, t)
		t.node.Status = StatusShared
		return
	}
	if t.depth > MaxIncludeDepth || l.loads > MaxLoads {
		l.finish(t, &failure{kind: fTooDeep, msg: fmt.Sprintf("includes nest deeper than %d or load more than %d bundles", MaxIncludeDepth, MaxLoads)})
		return
	}
	l.pending[uri] = t
	chain := map[string]bool{uri: true}
	if !isSub {
		chain[base] = true
	}
	for k := range t.chain {
		chain[k] = true
	}
	if f := l.open(t, uri, registered); f != nil {
		l.finish(t, f)
		return
	}
	b := t.file.Bundle
	if t.bare || len(b.Includes) == 0 {
		l.finish(t, nil)
		return
	}
	if f := l.preload(t, chain); f != nil {
		if t.parent != nil {
			l.finish(t, f)
			return
		}
		t.refused = f.msg
	}
	var sources []*task
	for _, inc := range b.Includes {
		if inc.Source == "" {
			continue
		}
		at := site{t.file, inc.Range}
		src, f := l.resolveInclude(inc.Source, t.file)
		if f != nil {
			if t.parent != nil {
				l.diag(at, bundle.CodeIncludeUnresolved, diag.SeverityError, "%s; the runtime then leaves out all of %s from the bundles that include it", f.msg, filepath.Base(t.file.Path))
				l.finish(t, &failure{kind: fDependency, msg: fmt.Sprintf("its include %s (line %d) does not resolve", quote(inc.Source), at.r.Start.Line+1)})
				return
			}
			t.refused = f.msg
			l.diag(at, bundle.CodeIncludeUnresolved, diag.SeverityError, "%s; the runtime refuses to load this bundle at all (amplidex composes the rest)", f.msg)
			continue
		}
		if src == "" {
			continue
		}
		child := &task{source: inc.Source, req: src, chain: chain, parent: t, at: at, depth: t.depth + 1,
			base: filepath.Dir(t.file.Path)}
		child.node = &IncludeNode{Source: inc.Source, Origin: at.origin()}
		sources = append(sources, child)
	}
	if len(sources) == 0 {
		l.finish(t, nil)
		return
	}
	t.children = sources
	t.waiting = len(sources)
	for _, c := range sources {
		t.node.Includes = append(t.node.Includes, c.node)
	}
	l.queue = append(l.queue, sources...)
}

// open resolves uri and loads its file, registering names as the runtime
// does; t.file and t.own are set when it succeeds.
func (l *loader) open(t *task, uri, registered string) *failure {
	active, sourceRoot, f := l.resolve(uri, t.base)
	if f != nil {
		return f
	}
	file, f := l.loadPath(active)
	if f != nil {
		return f
	}
	t.file = file
	t.node.Path, t.node.Name = file.Path, file.Bundle.Name
	v := fileValue(file)
	local := active

	// A nested bundle: a root bundle above it gives the root's namespace.
	start := filepath.Dir(active)
	if l.files.Stat(active) == RegularFile {
		start = filepath.Dir(filepath.Dir(active))
	}
	stop := sourceRoot
	if stop == "" {
		stop = filepath.Join(l.loc.Env.Home, ".amplifier", "cache")
	}
	rootPath := l.nearestBundleFile(start, stop)
	bundleDir := filepath.Dir(file.Path)
	if l.files.Stat(active) == Directory {
		bundleDir = active
	}
	var rootName string
	if rootPath != "" && filepath.Dir(rootPath) != bundleDir {
		rf, f := l.loadPath(rootPath)
		if f != nil {
			return f
		}
		rootName = rf.Bundle.Name
		if rootName != "" {
			v.setNS(rootName, sourceRoot)
			if l.reg[rootName] == nil {
				l.reg[rootName] = &regEntry{uri: baseURI(uri), local: filepath.Dir(rootPath), isRoot: true}
			}
		}
		if v.name != "" && v.name != rootName {
			dir := v.basePath
			if nr := file.Bundle.NamespaceRoot; nr != "" {
				dir = filepath.Clean(filepath.Join(v.basePath, nr))
			}
			v.setNS(v.name, dir)
		}
	}
	isRoot := !(rootName != "" && rootName != v.name)
	if v.name != "" && l.reg[v.name] == nil {
		l.reg[v.name] = &regEntry{uri: uri, local: local, isRoot: isRoot}
	}
	update := registered
	if update == "" && v.name != "" && l.reg[v.name] != nil {
		update = v.name
	}
	if e := l.reg[update]; update != "" && e != nil && !(e.isRoot && strings.Contains(uri, "#subdirectory=")) {
		e.uri, e.local = uri, local
	}
	t.own = v
	return nil
}

// preload loads, without their includes, the namespaces that ns:path
// includes name and that are registered but not loaded yet, as
// _preload_namespace_bundles does. It returns the failure the runtime
// raises for the whole bundle.
func (l *loader) preload(t *task, chain map[string]bool) *failure {
	var names []string
	for _, inc := range t.file.Bundle.Includes {
		s := inc.Source
		if s == "" || !strings.Contains(s, ":") || strings.Contains(s, "://") {
			continue
		}
		ns, _, _ := strings.Cut(s, ":")
		e := l.reg[ns]
		if e == nil || e.local != "" {
			continue
		}
		if chain[e.uri] || chain[baseURI(e.uri)] {
			continue
		}
		if !containsStr(names, ns) {
			names = append(names, ns)
		}
	}
	for _, ns := range names {
		e := l.reg[ns]
		if e == nil || e.local != "" {
			continue
		}
		if l.loaded[e.uri] != nil || l.pending[e.uri] != nil {
			continue
		}
		p := &task{req: ns, chain: chain, parent: nil, bare: true, depth: t.depth + 1, base: filepath.Dir(t.file.Path),
			node: &IncludeNode{Source: ns}}
		l.start(p)
		if p.fail != nil && p.fail.kind != fCycle {
			at := l.firstUse(t.file, ns)
			msg := fmt.Sprintf("the namespace %s cannot be loaded (%s): the runtime refuses %s whole", ns, p.fail.msg, filepath.Base(t.file.Path))
			if p.fail.kind == fNotCached {
				l.notCached(at, p.fail.url, "the namespace "+ns+" is "+e.uri)
			} else {
				l.diag(at, bundle.CodeIncludeUnresolved, diag.SeverityError, "%s", msg)
			}
			return &failure{kind: fDependency, msg: msg}
		}
	}
	return nil
}

// firstUse returns the site of the first ns:path include of ns in f.
func (l *loader) firstUse(f *bundle.File, ns string) site {
	for _, inc := range f.Bundle.Includes {
		if strings.HasPrefix(inc.Source, ns+":") {
			return site{f, inc.Range}
		}
	}
	return site{f, diag.Range{}}
}

// resolveInclude is _resolve_include_source: an override of sources.bundles,
// a URI as is, ns:path through the registry (with the extension search), a
// name as is. It returns "" for an include the runtime skips, and the
// failure the runtime raises for the whole bundle.
func (l *loader) resolveInclude(src string, from *bundle.File) (string, *failure) {
	at := func() site {
		for _, inc := range from.Bundle.Includes {
			if inc.Source == src {
				return site{from, inc.Range}
			}
		}
		return site{from, diag.Range{}}
	}
	if !isNamespacePath(src) {
		for _, o := range l.loc.Overrides {
			if strings.Contains(src, o.Key) {
				if _, frag, ok := strings.Cut(src, "#"); ok && !strings.Contains(o.URI, "#") {
					return o.URI + "#" + frag, nil
				}
				return o.URI, nil
			}
		}
	}
	if isURI(src) {
		return src, nil
	}
	if strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../") {
		// Ruling: from the including file's directory, not the working directory.
		return filepath.Clean(filepath.Join(filepath.Dir(from.Path), src)), nil
	}
	ns, rel, ok := strings.Cut(src, ":")
	if !ok {
		return src, nil
	}
	e := l.reg[ns]
	if e == nil {
		names := make([]string, 0, len(l.reg))
		for n := range l.reg {
			names = append(names, n)
		}
		msg := fmt.Sprintf("%s names the namespace %s, which no loaded bundle has and no registered name gives", quote(src), quote(ns))
		if s := diag.Suggest(ns, names); s != "" {
			msg += "; did you mean " + quote(s) + "?"
		} else {
			msg += "; the namespace is a bundle's bundle.name, never its repository's name"
		}
		l.diag(at(), bundle.CodeIncludeUnresolved, diag.SeverityError, "%s; the runtime skips the include", msg)
		return "", nil
	}
	if e.local == "" {
		if strings.HasPrefix(e.uri, "git+") {
			return baseURI(e.uri) + "#subdirectory=" + rel, nil
		}
		return "", &failure{kind: fDependency, msg: fmt.Sprintf("%s: the namespace %s is registered (%s) but not loaded", quote(src), quote(ns), e.uri)}
	}
	nsPath := e.local
	dir := nsPath
	if l.files.Stat(nsPath) == RegularFile {
		dir = filepath.Dir(nsPath)
	}
	found := l.findResource(filepath.Join(dir, rel))
	if found == "" {
		return "", &failure{kind: fDependency, msg: fmt.Sprintf("%s resolves to nothing: the namespace %s (%s) has no %s, nor it with .yaml, .yml, .md, /bundle.yaml or /bundle.md", quote(src), quote(ns), dir, rel)}
	}
	if strings.HasPrefix(e.uri, "git+") {
		relFrom, err := filepath.Rel(dir, found)
		if err != nil || strings.HasPrefix(relFrom, "..") {
			return "", &failure{kind: fDependency, msg: fmt.Sprintf("%s leaves its namespace's directory", quote(src))}
		}
		return baseURI(e.uri) + "#subdirectory=" + filepath.ToSlash(relFrom), nil
	}
	return "file://" + found, nil
}

// isNamespacePath is the CLI's test for ns:path (never overridden).
func isNamespacePath(s string) bool {
	if strings.Contains(s, "://") || strings.HasPrefix(s, "git+") || strings.HasPrefix(s, "zip+") {
		return false
	}
	ns, _, ok := strings.Cut(s, ":")
	if !ok || len(ns) < 2 {
		return false
	}
	for i, c := range ns {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if i == 0 && !alpha || !(alpha || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// findResource is _find_resource_path: the path, then with .yaml, .yml and
// .md, then as a directory holding bundle.yaml or bundle.md.
func (l *loader) findResource(p string) string {
	for _, c := range []string{p, withSuffix(p, ".yaml"), withSuffix(p, ".yml"), withSuffix(p, ".md"),
		filepath.Join(p, "bundle.yaml"), filepath.Join(p, "bundle.md")} {
		if exists(l.files, c) {
			return filepath.Clean(c)
		}
	}
	return ""
}

// resolve is SimpleSourceResolver.resolve: the local path a URI loads and
// the root of the source it is in.
func (l *loader) resolve(uri, base string) (active, sourceRoot string, f *failure) {
	u := ParseURI(uri)
	switch {
	case u.IsFile():
		p := u.Path
		if strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") {
			p = filepath.Join(base, p)
		}
		p = filepath.Clean(p)
		active = p
		if u.Subpath != "" {
			active = filepath.Join(p, u.Subpath)
		}
		if !exists(l.files, active) {
			return "", "", &failure{kind: fNotFound, msg: "no file or directory at " + active}
		}
		if u.Subpath != "" {
			return active, p, nil
		}
		return active, l.sourceRoot(active), nil
	case u.IsGit():
		cache := filepath.Join(l.loc.Env.CacheDir(), u.CacheDir())
		repo := baseURI(uri)
		if !l.validCheckout(cache) {
			return "", "", &failure{kind: fNotCached, url: u.GitURL() + "@" + u.Ref, msg: "not in the cache"}
		}
		active = cache
		if u.Subpath != "" {
			active = filepath.Join(cache, u.Subpath)
		}
		if !exists(l.files, active) {
			return "", "", &failure{kind: fNotFound, msg: fmt.Sprintf("the checkout of %s in the cache (%s) has no %s", repo, cache, u.Subpath)}
		}
		return active, cache, nil
	case u.Scheme != "":
		return "", "", &failure{kind: fNotCached, url: baseURI(uri), msg: "a download the runtime would make"}
	}
	return "", "", &failure{kind: fNotFound, msg: fmt.Sprintf("%s is not a registered name, a path (./, ../ or /) or a URI", quote(uri))}
}

// validCheckout is the runtime's _verify_clone_integrity: a .git and a
// pyproject.toml, setup.py, setup.cfg, bundle.md, bundle.yaml or
// amplifier.toml.
func (l *loader) validCheckout(dir string) bool {
	if l.files.Stat(dir) != Directory || !exists(l.files, filepath.Join(dir, ".git")) {
		return false
	}
	for _, n := range []string{"pyproject.toml", "setup.py", "setup.cfg", "bundle.md", "bundle.yaml", "amplifier.toml"} {
		if exists(l.files, filepath.Join(dir, n)) {
			return true
		}
	}
	return false
}

// sourceRoot is FileSourceHandler._find_source_root.
func (l *loader) sourceRoot(active string) string {
	cache := filepath.Clean(l.loc.Env.CacheDir())
	if rel, err := filepath.Rel(cache, active); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		return filepath.Join(cache, first)
	}
	cur := active
	if l.files.Stat(cur) == RegularFile {
		cur = filepath.Dir(cur)
	}
	// Up to the home directory, or short of the filesystem's root for a
	// file outside it (ruling 10 of docs/bundles.md: the runtime compares
	// the paths as strings, and finds no root for a repository whose path
	// sorts before the home directory).
	home := filepath.Clean(l.loc.Env.Home)
	for cur != filepath.Dir(cur) {
		if rootBundleIn(l.files, cur) != "" {
			return cur
		}
		if cur == home {
			break
		}
		cur = filepath.Dir(cur)
	}
	if l.files.Stat(active) == RegularFile {
		return filepath.Dir(active)
	}
	return active
}

// nearestBundleFile is _find_nearest_bundle_file: bundle.md, then
// bundle.yaml, from start up to stop.
func (l *loader) nearestBundleFile(start, stop string) string {
	cur, stop := filepath.Clean(start), filepath.Clean(stop)
	for i := 0; !pathLess(cur, stop) && i < 64; i++ {
		for _, n := range []string{"bundle.md", "bundle.yaml"} {
			if p := filepath.Join(cur, n); exists(l.files, p) {
				return p
			}
		}
		if cur == stop || cur == filepath.Dir(cur) {
			break
		}
		cur = filepath.Dir(cur)
	}
	return ""
}

// loadPath is _load_from_path: a directory's bundle.md or bundle.yaml, or
// a .md, .yaml or .yml file.
func (l *loader) loadPath(p string) (*bundle.File, *failure) {
	if l.files.Stat(p) == Directory {
		switch {
		case exists(l.files, filepath.Join(p, "bundle.md")):
			p = filepath.Join(p, "bundle.md")
		case exists(l.files, filepath.Join(p, "bundle.yaml")):
			p = filepath.Join(p, "bundle.yaml")
		default:
			return nil, &failure{kind: fLoad, msg: "not a bundle: " + p + " has no bundle.md or bundle.yaml"}
		}
	}
	switch filepath.Ext(p) {
	case ".md", ".yaml", ".yml":
	default:
		return nil, &failure{kind: fLoad, msg: "not a bundle: " + p + " is not .md, .yaml or .yml"}
	}
	f, err := l.files.Parse(p, bundle.KindBundle)
	if err != nil {
		return nil, &failure{kind: fLoad, msg: fmt.Sprintf("%s cannot be read: %v", p, err)}
	}
	if f.Refused != "" || f.Bundle == nil {
		why := f.Refused
		if why == "" {
			why = "it does not parse"
		}
		return nil, &failure{kind: fLoad, msg: fmt.Sprintf("%s does not load: %s", p, why)}
	}
	return f, nil
}

// share completes t with the result of a load of the same URI.
func (l *loader) share(t, done *task) {
	t.node.Status = StatusShared
	t.node.Path = done.node.Path
	t.node.Name = done.node.Name
	if done.fail != nil {
		l.finish(t, done.fail)
		return
	}
	if done.bare && !t.bare && done.file != nil && len(done.file.Bundle.Includes) > 0 {
		l.diag(t.at, bundle.CodeIncludePartial, diag.SeverityWarning,
			"%s is composed without its own includes: an earlier ns:path include of its namespace made the runtime load it bare first; list - bundle: %s before the namespace's other includes",
			quote(t.source), t.source)
		t.node.Status = StatusPartial
	}
	t.result = done.result
	t.finished = true
	l.done(t)
}

// finish completes t: with a failure, or by composing its includes.
func (l *loader) finish(t *task, f *failure) {
	if t.finished {
		return
	}
	if f == nil && t.own != nil {
		res := t.own
		if t.bare {
			res = &value{}
			*res = *t.own
			res.bare = true
		}
		var inc []*value
		for _, c := range t.children {
			if c.fail == nil && c.result != nil {
				inc = append(inc, c.result)
			}
		}
		if len(inc) > 0 {
			r := inc[0]
			var why string
			for _, x := range append(inc[1:], t.own) {
				if r, why = compose(r, x); why != "" {
					break
				}
			}
			if why != "" {
				f = &failure{kind: fCompose, msg: "composing it raises: " + why}
			} else {
				res = r
			}
		}
		t.result = res
	}
	t.finished = true
	t.fail = f
	if f != nil {
		t.result = nil
		t.node.Status = statusOf(f)
		t.node.Message = f.msg
	} else if t.node.Status == "" {
		t.node.Status = StatusLoaded
	}
	if l.pending[t.uri] == t {
		delete(l.pending, t.uri)
	}
	if f == nil && t.uri != "" && t.own != nil {
		l.loaded[t.uri] = t
	}
	for _, w := range t.waiters {
		l.share(w, t)
	}
	l.done(t)
}

// done tells t's parent that t has finished, reporting a failure where
// it lands.
func (l *loader) done(t *task) {
	if t.fail != nil && t.parent != nil && !t.bare {
		l.report(t)
	}
	p := t.parent
	if p == nil || t.bare {
		return
	}
	p.waiting--
	if p.waiting == 0 && !p.finished {
		l.finish(p, nil)
	}
}

// report makes the diagnostic of a failed include at its line.
func (l *loader) report(t *task) {
	f := t.fail
	switch f.kind {
	case fNotCached:
		l.notCached(t.at, f.url, "")
	case fCycle:
		l.diag(t.at, bundle.CodeIncludeCycle, diag.SeverityError,
			"%s leads back to a bundle that is still loading (a cycle): the runtime skips it", quote(t.source))
	case fTooDeep:
		l.diag(t.at, bundle.CodeIncludeTooDeep, diag.SeverityError, "%s is not followed: %s", quote(t.source), f.msg)
	case fCompose:
		l.diag(t.at, bundle.CodeComposeFails, diag.SeverityError, "%s is left out: %s", quote(t.source), f.msg)
	default:
		l.diag(t.at, bundle.CodeIncludeUnresolved, diag.SeverityError, "%s is left out: %s", quote(t.source), f.msg)
	}
}

// notCached warns, once per includer and repository, that an include is
// not in the runtime's cache.
func (l *loader) notCached(at site, url, why string) {
	if at.file == nil {
		return
	}
	k := at.file.Path + "\x00" + url
	if l.cached[k] {
		return
	}
	l.cached[k] = true
	if why != "" {
		why = " (" + why + ")"
	}
	l.diag(at, bundle.CodeIncludeNotCached, diag.SeverityWarning,
		"%s%s is not in the runtime's cache (%s), so it is not checked; amplidex never fetches: run the bundle once with amplifier to clone it, or map it to a local checkout in settings.yaml under sources.bundles",
		url, why, l.loc.Env.CacheDir())
}

func statusOf(f *failure) Status {
	switch f.kind {
	case fNotCached:
		return StatusNotCached
	case fCycle:
		return StatusCycle
	case fNotFound:
		return StatusUnresolved
	}
	return StatusFailed
}

// fileValue is Bundle.from_dict of a loaded file.
func fileValue(f *bundle.File) *value {
	b := f.Bundle
	dir := filepath.Dir(f.Path)
	v := &value{name: b.Name, version: b.Version, description: b.Description, basePath: dir, files: []*bundle.File{f}}
	v.session, v.spawn = b.Session, b.Spawn
	if !b.SessionSet {
		v.session = (&bundle.MapBuilder{}).Map()
	}
	if !b.SpawnSet {
		v.spawn = (&bundle.MapBuilder{}).Map()
	}
	v.composeErr = b.ComposeError
	if b.HasInstruction {
		v.instruction = f
	}
	at := func(r diag.Range) Origin { return Origin{Path: f.Path, Line: r.Start.Line + 1} }
	mods := func(ms []bundle.Module) []module {
		out := make([]module, 0, len(ms))
		for _, m := range ms {
			out = append(out, module{id: m.ID, idKey: m.ID, entry: m.Entry, origin: at(m.Range)})
		}
		return out
	}
	v.providers, v.tools, v.hooks = mods(b.Providers), mods(b.Tools), mods(b.Hooks)
	for _, a := range b.Agents {
		v.agents = setAgent(v.agents, agent{name: a.Name, value: a.Value, included: a.Included, origin: at(a.Range)})
	}
	for _, c := range b.Context {
		e := ctxEntry{key: c.Key, origin: at(c.Range)}
		switch {
		case c.Namespaced && !c.Direct:
			e.pending, e.ref = true, c.Path
		case c.Direct:
			e.path = filepath.Join(dir, c.Path)
			if filepath.IsAbs(c.Path) {
				e.path = filepath.Clean(c.Path)
			}
		default:
			e.path = contextPath(dir, c.Path)
		}
		v.setContext(e)
	}
	if len(b.Keys) > 0 {
		v.keyOrigins = make(map[string]Origin, len(b.Keys))
		for k, r := range b.Keys {
			v.keyOrigins[k] = at(r)
		}
	}
	return v
}

// contextPath is construct_context_path: name relative to base, a leading
// / dropped.
func contextPath(base, name string) string {
	name = strings.TrimLeft(name, "/")
	if name == "" {
		return base
	}
	return filepath.Join(base, name)
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quote(s string) string { return "`" + s + "`" }
