package analysis

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/check"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/lock"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/suppress"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
)

// Workspace is the Analyzer of amplidex: package discovery's parsers and
// checks over the catalog View of a file's project, with the editor's open
// buffers laid over the files on disk. The language server runs it over a
// Local catalog, and the daemon runs the same code over its own (Analyze),
// so both answer alike.
type Workspace struct {
	views   Views
	project string
	schema  schema.Options
	cache   *statCache
	loader  *discovery.Loader // loads a buffer's collection when no root holds it
	bundle  func(path string, src []byte, opts schema.Options) []diag.Diagnostic
	log     *slog.Logger
	// bundleEnv is where bundles are looked for (see bundles.go);
	// bundles keeps the last check of each bundle repository.
	bundleEnv compose.Env
	bundles   bundleChecks

	mu       sync.Mutex                       // guards fields below
	warned   map[string]bool                  // refused .amplifier directories already logged
	copies   map[string]*discovery.Collection // working copies by directory, as last loaded
	argViews map[argKey]argView               // Views with a working copy ahead of the roots
	empty    *catalog.View                    // the View of no root, for when a source fails
}

// argKey names a View with a working copy: the project and the copy's
// directory.
type argKey struct{ project, dir string }

// argView is a View with a working copy ahead of the roots, and what it
// was made from: it holds as long as both are the same.
type argView struct {
	base *catalog.View
	copy *discovery.Collection
	view *catalog.View
}

// maxArgViews bounds the Views with a working copy kept at once.
const maxArgViews = 8

// WorkspaceOptions configure a Workspace.
type WorkspaceOptions struct {
	// Project is the editor's project directory ("" for none): a file
	// below a directory holding .amplifier/ is answered for that project,
	// any other file for this one.
	Project string
	// Schema tunes front matter validation of the buffers and of working
	// copies; it should be what the Views' catalog loads with.
	Schema schema.Options
	// CheckBundle checks a bundle manifest; nil checks its front matter
	// against the bundle schema only. The command line passes the prepare
	// package's full check here.
	CheckBundle func(path string, src []byte, opts schema.Options) []diag.Diagnostic
	// Log receives failures of the Views and refused projects; nil
	// discards.
	Log *slog.Logger
	// Bundles is where the includes of bundle repositories' documents
	// are looked for: AmplifierHome ($AMPLIFIER_HOME, else
	// ~/.amplifier) and Home; the working directory is the repository of
	// the document, and ProjectDir, when empty, too.
	Bundles compose.Env
}

// NewWorkspace returns a Workspace over views.
func NewWorkspace(views Views, opts WorkspaceOptions) *Workspace {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	cache := newStatCache()
	return &Workspace{views: views, project: opts.Project, schema: opts.Schema, cache: cache,
		loader: &discovery.Loader{Schema: opts.Schema, Cache: cache}, bundle: opts.CheckBundle, log: opts.Log, bundleEnv: opts.Bundles,
		warned: map[string]bool{}, copies: map[string]*discovery.Collection{}, argViews: map[argKey]argView{}}
}

// Schema returns the options the Workspace checks buffers with.
func (w *Workspace) Schema() schema.Options { return w.schema }

// Invalidate passes a saved file on to the Views, and reads it again
// when it belongs to a working copy.
func (w *Workspace) Invalidate(path string) {
	w.cache.forget(path)
	w.bundles.forget()
	w.views.Changed(path)
}

// ProjectOf returns the project a file is answered for: the nearest
// directory above it holding a .amplifier directory of the user's, else
// the Workspace's project. A .amplifier directory of another user makes
// no project (""); it is logged once.
func (w *Workspace) ProjectOf(path string) string {
	s := discovery.FindProject(filepath.Dir(path))
	if s.Refused != "" {
		w.mu.Lock()
		first := !w.warned[s.Refused]
		w.warned[s.Refused] = true
		w.mu.Unlock()
		if first {
			w.log.Warn("analysis: " + s.Warning())
		}
		return ""
	}
	if s.Dir == w.project {
		return w.project
	}
	if fi, err := os.Stat(filepath.Join(s.Dir, ".amplifier")); err != nil || !fi.IsDir() {
		return w.project
	}
	return s.Dir
}

// viewOf returns the View of the project a file is answered for, or the
// View of no root when the source fails (nil when ctx is done).
func (w *Workspace) viewOf(ctx context.Context, path string) *catalog.View {
	v, err := w.views.View(ctx, w.ProjectOf(path))
	if err == nil {
		return v
	}
	if ctx.Err() != nil {
		return nil
	}
	w.log.Warn("analysis: collections unavailable", "err", err)
	return w.emptyView()
}

// emptyView returns a View of no root.
func (w *Workspace) emptyView() *catalog.View {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.empty == nil {
		st, _ := catalog.New(catalog.Options{}).AddProject("")
		w.empty, _ = st.View("")
	}
	return w.empty
}

// Analyze answers one question of the analyze method over v, the View of
// the question's project: the daemon's handler. The params must have
// passed their Check; their schema is the Workspace's.
func (w *Workspace) Analyze(ctx context.Context, v *catalog.View, p query.AnalyzeParams) (*query.AnalyzeResult, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	text := []byte(p.Text)
	overlay := make(map[string][]byte, len(p.Overlay)+1)
	for path, t := range p.Overlay {
		overlay[filepath.Clean(path)] = []byte(t)
	}
	path := filepath.Clean(p.Path)
	res := &query.AnalyzeResult{}
	switch p.Op {
	case query.OpDiagnose:
		res.Diagnostics = w.diagnose(ctx, v, path, text, overlay)
	case query.OpComplete:
		res.Items = w.complete(ctx, v, path, text, overlay, p.Position)
	case query.OpDefinition:
		res.Locations = w.definition(ctx, v, path, text, overlay, p.Position)
	case query.OpHover:
		res.Hover, _ = w.hover(ctx, v, path, text, overlay, p.Position)
	case query.OpCodeActions:
		rng := diag.Range{Start: p.Position, End: p.Position}
		if p.Range != nil {
			rng = *p.Range
		}
		res.Actions = w.codeActions(ctx, v, path, text, overlay, rng)
	case query.OpReferences:
		res.Locations = w.references(ctx, v, path, text, overlay, p.Position, p.IncludeDeclaration)
	case query.OpMergedProfile:
		res.Merged = w.mergedProfile(ctx, v, path, text, overlay)
	case query.OpFixes:
		res.Edits, _ = w.fixes(ctx, v, path, text, overlay, p.Diagnostics, false)
	}
	return res, ctx.Err()
}

// Diagnose checks one file given its unsaved text: its own problems and its
// cross-references, resolved over every open buffer.
func (w *Workspace) Diagnose(ctx context.Context, path string, text []byte, overlay map[string][]byte) []diag.Diagnostic {
	if kindOf(path) == fileOther {
		return nil
	}
	if b := w.bundleDocOf(path, text, overlay); b != nil {
		return w.bundleDiagnose(ctx, b, text)
	}
	if kindOf(path) == fileBundleDoc && !inContextDir(path) {
		return nil
	}
	v := w.viewOf(ctx, path)
	if v == nil {
		return nil
	}
	return w.diagnose(ctx, v, path, text, overlay)
}

// Complete lists what may be typed at pos in the file at path.
func (w *Workspace) Complete(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) []query.CompletionItem {
	if b := w.bundleDocOf(path, text, overlay); b != nil {
		return w.bundleComplete(b, text, pos)
	}
	v := w.viewOf(ctx, path)
	if v == nil {
		return nil
	}
	return w.complete(ctx, v, path, text, overlay, pos)
}

// Definition returns where the reference at pos points.
func (w *Workspace) Definition(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) []query.Location {
	if b := w.bundleDocOf(path, text, overlay); b != nil {
		return w.bundleDefinition(b, pos)
	}
	v := w.viewOf(ctx, path)
	if v == nil {
		return nil
	}
	return w.definition(ctx, v, path, text, overlay, pos)
}

// Hover describes what is at pos in Markdown; ok is false when there
// is nothing to say.
func (w *Workspace) Hover(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) (markdown string, ok bool) {
	if b := w.bundleDocOf(path, text, overlay); b != nil {
		return w.bundleHover(b, pos)
	}
	v := w.viewOf(ctx, path)
	if v == nil {
		return "", false
	}
	return w.hover(ctx, v, path, text, overlay, pos)
}

// CodeActions lists the fixes of the diagnostics in rng and the
// rewrites of what is at its start; their edits are of path alone.
func (w *Workspace) CodeActions(ctx context.Context, path string, text []byte, overlay map[string][]byte, rng diag.Range) []query.CodeAction {
	if kindOf(path) == fileOther {
		return nil
	}
	if b := w.bundleDocOf(path, text, overlay); b != nil {
		return w.bundleCodeActions(ctx, b, text, rng)
	}
	v := w.viewOf(ctx, path)
	if v == nil {
		return nil
	}
	return w.codeActions(ctx, v, path, text, overlay, rng)
}

// References returns where what is at pos (or the file) is referred
// to from; with includeDeclaration, the file referred to too.
func (w *Workspace) References(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position, includeDeclaration bool) []query.Location {
	if b := w.bundleDocOf(path, text, overlay); b != nil {
		return w.bundleReferences(ctx, b, pos, includeDeclaration)
	}
	v := w.viewOf(ctx, path)
	if v == nil {
		return nil
	}
	return w.references(ctx, v, path, text, overlay, pos, includeDeclaration)
}

// layered is the collections as the open buffers make them, for one file.
type layered struct {
	set *resolve.Set
	// own is the collection holding the file asked about (nil when none);
	// key is that file's path as own names it (a linked collection names
	// its files under the link, editors under the real path).
	own *discovery.Collection
	key string
}

// layer lays the buffers (overlay, and text at path) over v: the
// collections they belong to are cloned with what the buffers say and put
// in place of the originals (resolve.Set.Apply, which costs what it
// changes). A file whose collection is in no root (a working copy) brings
// that collection along, ahead of every root.
func (w *Workspace) layer(ctx context.Context, v *catalog.View, path string, text []byte, overlay map[string][]byte) *layered {
	set := v.Set
	if set.Owner(path) == nil && kindOf(path) != fileBundle && !isBundleAgent(path) {
		if wc := w.workingCopy(path, text); wc != nil {
			set = w.withCopy(ctx, v, wc).Set
		}
	}
	buffers := maps.Clone(overlay)
	if buffers == nil {
		buffers = map[string][]byte{}
	}
	buffers[path] = text
	copies := map[*discovery.Collection]*discovery.Collection{}
	// In path order, so that two buffers of one file name (a link and its
	// target) settle alike every time.
	for _, p := range slices.Sorted(maps.Keys(buffers)) {
		c := set.Owner(p)
		if c == nil {
			continue
		}
		cp, ok := copies[c]
		if !ok {
			cp = c.Clone()
			copies[c] = cp
		}
		w.overlayFile(cp, p, buffers[p])
	}
	if len(copies) > 0 {
		removed := make([]*discovery.Collection, 0, len(copies))
		added := make([]*discovery.Collection, 0, len(copies))
		for c, cp := range copies {
			removed = append(removed, c)
			added = append(added, cp)
		}
		set, _ = set.Apply(removed, added)
	}
	l := &layered{set: set, own: set.Owner(path)}
	l.key = keyIn(l.own, path)
	return l
}

// workingCopy loads the collection holding path (whose unsaved text is
// text) from disk, when it is a collection in no root. An unchanged
// collection is the one loaded last time, so that the View made with it
// is reused.
func (w *Workspace) workingCopy(path string, text []byte) *discovery.Collection {
	c := w.loadOwner(path, text)
	if c == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if old := w.copies[c.Dir]; old != nil && sameCollection(old, c) {
		return old
	}
	w.copies[c.Dir] = c
	return c
}

// sameCollection reports whether two loads of one directory found the
// same: the same files, with the same Facts (the stat cache hands out the
// Facts of an unchanged file again).
func sameCollection(a, b *discovery.Collection) bool {
	if a.Name != b.Name || a.Version != b.Version || a.Description != b.Description || a.Root != b.Root ||
		a.Dir != b.Dir || a.RealDir != b.RealDir || a.Base != b.Base || a.Pyproject != b.Pyproject ||
		a.Layout != b.Layout || a.Metadata != b.Metadata || a.Valid != b.Valid || a.Problem != b.Problem ||
		!slices.Equal(a.Resources, b.Resources) || !slices.Equal(a.Diagnostics, b.Diagnostics) || len(a.Facts) != len(b.Facts) {
		return false
	}
	for p, f := range a.Facts {
		if b.Facts[p] != f {
			return false
		}
	}
	return true
}

// withCopy returns v with the working copy wc ahead of every root, made
// again only when v or wc changed. When the source cannot make it, v is
// returned: the file is then checked on its own.
func (w *Workspace) withCopy(ctx context.Context, v *catalog.View, wc *discovery.Collection) *catalog.View {
	key := argKey{project: v.Project, dir: wc.Dir}
	w.mu.Lock()
	a, ok := w.argViews[key]
	w.mu.Unlock()
	if ok && a.base == v && a.copy == wc {
		return a.view
	}
	av, err := w.views.WithArguments(ctx, v.Project, []*discovery.Collection{wc})
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("analysis: cannot resolve a working copy", "dir", wc.Dir, "err", err)
		}
		return v
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.argViews[key]; !ok && len(w.argViews) >= maxArgViews {
		for k := range w.argViews {
			delete(w.argViews, k)
			break
		}
	}
	w.argViews[key] = argView{base: v, copy: wc, view: av}
	return av
}

// loadOwner loads the collection holding path from disk: the one whose
// resource base holds profiles/x.md or agents/x.md (the collection
// directory, or its package directory in a nested layout), or whose
// metadata file path is, when its layout marks it as a collection (see
// discovery.Shape.Marked; text is path's unsaved text): an ordinary
// Python project's pyproject.toml is not collection metadata. It returns
// nil when there is none.
func (w *Workspace) loadOwner(path string, text []byte) *discovery.Collection {
	kind := kindOf(path)
	var dirs []string
	switch kind {
	case filePyproject:
		dirs = []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))}
	case fileProfile, fileAgent:
		base := filepath.Dir(filepath.Dir(path))
		dirs = []string{base, filepath.Dir(base)}
	default:
		return nil
	}
	for _, dir := range dirs {
		shape, err := discovery.DetectShape(dir, "")
		if err != nil || !shape.IsCollection() {
			continue
		}
		if !shape.HasResources() {
			py := text
			if shape.Pyproject != path {
				if py, err = syntax.ReadFile(shape.Pyproject, syntax.DefaultMaxFileSize); err != nil {
					continue
				}
			}
			if !shape.Marked(py) {
				continue
			}
		}
		c := w.loader.Load(discovery.Root{Kind: discovery.RootArgument, Path: filepath.Dir(dir)}, dir)
		switch {
		case c == nil:
		case kind == filePyproject && c.Pyproject == path:
			return c
		case kind != filePyproject && filepath.Dir(filepath.Dir(path)) == c.Base:
			return c
		}
	}
	return nil
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// keyIn returns p as c names it: under c.Dir even when p is under the
// real directory of a linked collection.
func keyIn(c *discovery.Collection, p string) string {
	if c == nil {
		return p
	}
	if c.RealDir != c.Dir && within(p, c.RealDir) && !within(p, c.Dir) {
		rel, _ := filepath.Rel(c.RealDir, p)
		return filepath.Join(c.Dir, rel)
	}
	return p
}

// overlayFile replaces what c knows of the file at p by what text says:
// its Facts, its share of c's own diagnostics, and for the pyproject.toml
// the metadata.
func (w *Workspace) overlayFile(c *discovery.Collection, p string, text []byte) {
	key := keyIn(c, p)
	if key == c.Pyproject {
		f := discovery.AnalyzeFile(key, text, "", w.schema)
		replaceFacts(c, key, f)
		c.Metadata = f.Metadata
		c.Name, c.Version, c.Description = filepath.Base(c.Dir), "", ""
		if md := f.Metadata; md != nil {
			if md.Name != "" {
				c.Name = md.Name
			}
			c.Version, c.Description = md.Version, md.Description
		}
		// As discovery.Loader decides it.
		c.Valid, c.Problem = discovery.Usable(f), discovery.PyprojectProblem(f)
		return
	}
	rel, err := filepath.Rel(c.Base, key)
	if err != nil || strings.HasPrefix(rel, "..") {
		return
	}
	rel = filepath.ToSlash(rel)
	var kind discovery.Kind
	name := strings.TrimSuffix(filepath.Base(rel), ".md")
	switch {
	case !strings.HasSuffix(rel, ".md"):
		return
	case strings.Count(rel, "/") == 1 && strings.HasPrefix(rel, "profiles/"):
		kind = discovery.KindProfile
	case strings.Count(rel, "/") == 1 && strings.HasPrefix(rel, "agents/"):
		kind = discovery.KindAgent
	case strings.HasPrefix(rel, "context/"):
		kind, name = discovery.KindContext, strings.TrimPrefix(rel, "context/")
	default:
		return
	}
	if kind != discovery.KindContext && (strings.EqualFold(name, "README") || discovery.IsEditorDropping(filepath.Base(rel))) {
		return
	}
	replaceFacts(c, key, discovery.AnalyzeFile(key, text, kind, w.schema))
	for _, r := range c.Resources {
		if r.Path == key {
			return
		}
	}
	// A buffer not yet saved is a resource already.
	c.Resources = append(c.Resources, discovery.Resource{Kind: kind, Name: name, Path: key, Rel: rel})
}

// replaceFacts puts f in the place of what c knew of the file at key; its
// own diagnostics travel with it (see discovery.Collection.OwnDiagnostics).
func replaceFacts(c *discovery.Collection, key string, f *discovery.Facts) {
	c.Facts[key] = f
}

// isBundleAgent reports an agent shipped beside a bundle manifest.
func isBundleAgent(path string) bool {
	if kindOf(path) != fileAgent {
		return false
	}
	fi, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(path)), "bundle.md"))
	return err == nil && fi.Mode().IsRegular()
}

// diagnose checks one file given its unsaved text over v. A profile,
// agent or pyproject.toml of a collection gets what `check` reports about
// it (the collection's own diagnostics of the file, its cross-references
// and its shadowing), computed over the buffers.
func (w *Workspace) diagnose(ctx context.Context, v *catalog.View, path string, text []byte, overlay map[string][]byte) []diag.Diagnostic {
	if kindOf(path) == fileOther {
		return nil
	}
	l := w.layer(ctx, v, path, text, overlay)
	if ctx.Err() != nil {
		return nil
	}
	return w.diagnoseIn(l, path, text)
}

// diagnoseIn checks one file given its unsaved text, with the buffers
// laid over the View in l.
func (w *Workspace) diagnoseIn(l *layered, path string, text []byte) []diag.Diagnostic {
	kind := kindOf(path)
	var out []diag.Diagnostic
	// composed is set when out comes composed, suppression included, as
	// a View composes the diagnostics of the files on disk.
	composed := false
	switch {
	case kind == fileBundle:
		if w.bundle != nil {
			out = w.bundle(path, text, w.schema)
		} else {
			out = schema.ParseDocument(path, text, schema.DocBundle, w.schema).Diagnostics
		}
	case isBundleAgent(path):
		doc := schema.ParseDocument(path, text, schema.DocBundleAgent, w.schema)
		out = append(doc.Diagnostics, check.Mentions(l.set, path, syntax.FindMentions(doc.Src, doc.BodyStart, doc.Lines))...)
	case kind == fileProfile || kind == fileAgent:
		if l.own != nil && l.own.Facts[l.key] != nil {
			out, composed = l.fileDiagnostics(), true
			break
		}
		k := discovery.KindAgent
		if kind == fileProfile {
			k = discovery.KindProfile
		}
		out, composed = check.Lone(l.set, path, text, k, w.schema), true
	case kind == filePyproject:
		switch {
		case l.own != nil && l.own.Pyproject == l.key:
			out, composed = l.fileDiagnostics(), true
		case l.own == nil && !looksLikeCollection(path, text):
			return nil // an ordinary Python project
		default:
			_, out = discovery.ParsePyproject(path, text)
		}
	case kind == fileLock:
		out, composed = lockDiagnostics(l.set, path, text), true
	case kind == fileBundleDoc:
		// A collection's context file: what the View gives it (its
		// mentions), over the buffers; another Markdown file, nothing.
		if l.own == nil || l.own.Facts[l.key] == nil {
			return nil
		}
		out, composed = l.fileDiagnostics(), true
	}
	for i := range out {
		if out[i].Path == l.key || out[i].Path == "" {
			out[i].Path = path
		}
	}
	if !composed {
		// A file no collection holds: the suppression comments of the
		// buffer as it is, unsaved, by the rule every View applies to
		// the files on disk (Collection.Suppress).
		out = suppress.File(path, text, out)
	}
	diag.Sort(out)
	return out
}

// fileDiagnostics returns what `check` reports about the file l is about,
// computed over the buffers: the diagnostics of its collection as
// check.Compose composes them for a View (its own, its cross-references
// and its shadowing, the comments of the buffers applied), of that file.
func (l *layered) fileDiagnostics() []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, d := range check.Compose(l.set, l.own, check.Collection(l.set, l.own)) {
		if d.Path == l.key {
			out = append(out, d)
		}
	}
	return out
}

// looksLikeCollection reports whether a pyproject.toml that no root holds
// belongs to a collection, as its layout or its unsaved text says (see
// discovery.Shape.Marked).
func looksLikeCollection(path string, text []byte) bool {
	shape, err := discovery.DetectShape(filepath.Dir(path), "")
	if err != nil {
		return discovery.DeclaresCollection(text)
	}
	shape.Pyproject = path
	return shape.Marked(text)
}

// lockDiagnostics returns the diagnostics of the lock file at path,
// whose unsaved text is text: what check.Lock composes for the root it
// belongs to, as a View does for the file on disk, and what parsing it
// finds when it belongs to none.
func lockDiagnostics(set *resolve.Set, path string, text []byte) []diag.Diagnostic {
	l, ds, _ := lock.Parse(path, text)
	for _, r := range set.Roots {
		if discovery.LockPath(r) == path {
			return check.Lock(set, r, path, l, ds)
		}
	}
	return ds
}

// refAt is the reference under the cursor.
type refAt struct {
	kind  string // "extends", "agent", "mention" or "requires"
	value string
	rng   diag.Range
	coll  string // the collection name the reference goes through ("" for a bare name)
	m     syntax.Mention
}

// findRef returns the reference at pos in the file, if any.
func (w *Workspace) findRef(v *layered, path string, text []byte, pos diag.Position) (refAt, bool) {
	switch kindOf(path) {
	case filePyproject:
		md, _ := discovery.ParsePyproject(path, text)
		for _, r := range md.Requires {
			// The range covers the value; the name on its left counts too.
			line := diag.Range{Start: diag.Position{Line: r.Range.Start.Line}, End: r.Range.End}
			if contains(line, pos) {
				return refAt{kind: "requires", value: r.Name, rng: r.Range, coll: r.Name}, true
			}
		}
		return refAt{}, false
	case fileProfile, fileAgent, fileBundle:
	default:
		// Context files and others: mentions only.
		for _, m := range syntax.FindMentions(text, 0, syntax.NewLineIndex(text)) {
			if contains(m.Range, pos) {
				return refAt{kind: "mention", value: m.Text(), rng: m.Range, coll: m.Collection, m: m}, true
			}
		}
		return refAt{}, false
	}
	var f *discovery.Facts
	if v.own != nil {
		f = v.own.Facts[v.key]
	}
	if f == nil {
		k := discovery.KindAgent
		if kindOf(path) == fileProfile {
			k = discovery.KindProfile
		}
		f = discovery.AnalyzeFile(path, text, k, w.schema)
	}
	if f.Extends != nil && contains(f.Extends.Range, pos) {
		coll, _, _ := strings.Cut(unquote(f.Extends.Value), ":")
		if !strings.Contains(f.Extends.Value, ":") {
			coll = ""
		}
		return refAt{kind: "extends", value: f.Extends.Value, rng: f.Extends.Range, coll: coll}, true
	}
	for _, a := range f.Agents {
		if contains(a.Range, pos) {
			coll, _, ok := strings.Cut(a.Value, ":")
			if !ok {
				coll = ""
			}
			return refAt{kind: "agent", value: a.Value, rng: a.Range, coll: coll}, true
		}
	}
	for _, m := range f.Mentions {
		if contains(m.Range, pos) {
			return refAt{kind: "mention", value: m.Text(), rng: m.Range, coll: m.Collection, m: m}, true
		}
	}
	return refAt{}, false
}

func unquote(s string) string { return strings.Trim(s, `"'`) }

// contains reports whether pos lies in r, its end included (a cursor just
// after a word is on it).
func contains(r diag.Range, pos diag.Position) bool {
	before := func(a, b diag.Position) bool {
		return a.Line < b.Line || a.Line == b.Line && a.Character <= b.Character
	}
	return before(r.Start, pos) && before(pos, r.End)
}
