package lsp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/amplidex/amplidex/discovery"
)

// Workspace is the Analyzer of amplidex: package discovery's parsers and
// checks over the collections a Resolver supplies, with the editor's open
// buffers laid over the files on disk.
type Workspace struct {
	resolver    Resolver
	project     string
	resolverFor func(project string) Resolver
	schema      discovery.SchemaOptions
	loader      *discovery.Loader // loads a buffer's collection when no root holds it
	bundle      func(path string, src []byte, opts discovery.SchemaOptions) []discovery.Diagnostic
	log         *slog.Logger

	mu       sync.Mutex // guards fields below
	projects map[string]Resolver
}

// WorkspaceOptions configure a Workspace.
type WorkspaceOptions struct {
	// Schema tunes front matter validation.
	Schema discovery.SchemaOptions
	// Project is the project directory the Resolver was made for.
	// ResolverFor, when set, makes a Resolver for any other project: a
	// file below a directory holding .amplifier/ resolves against that
	// project's collections, whatever directory the editor started in.
	Project     string
	ResolverFor func(project string) Resolver
	// CheckBundle checks a bundle manifest; nil checks its front matter
	// against the bundle schema only. The command line passes the prepare
	// package's full check here.
	CheckBundle func(path string, src []byte, opts discovery.SchemaOptions) []discovery.Diagnostic
	// Log receives resolver failures; nil discards.
	Log *slog.Logger
}

// NewWorkspace returns a Workspace over r.
func NewWorkspace(r Resolver, opts WorkspaceOptions) *Workspace {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	w := &Workspace{resolver: r, project: opts.Project, resolverFor: opts.ResolverFor, schema: opts.Schema,
		bundle: opts.CheckBundle, log: opts.Log, projects: map[string]Resolver{}}
	if sc, ok := r.(*Scanner); ok {
		w.loader = sc.Loader()
	} else {
		w.loader = &discovery.Loader{Schema: opts.Schema, Cache: newStatCache()}
	}
	return w
}

var _ Analyzer = (*Workspace)(nil)

// Invalidate passes a saved file on to every Resolver.
func (w *Workspace) Invalidate(path string) {
	w.resolver.Invalidate(path)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.projects {
		r.Invalidate(path)
	}
}

// resolverOf returns the Resolver for the project path lies in.
func (w *Workspace) resolverOf(path string) Resolver {
	if w.resolverFor == nil {
		return w.resolver
	}
	project := discovery.FindProject(filepath.Dir(path)).Dir
	if project == w.project {
		return w.resolver
	}
	if fi, err := os.Stat(filepath.Join(project, ".amplifier")); err != nil || !fi.IsDir() {
		return w.resolver
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.projects[project]
	if !ok {
		r = w.resolverFor(project)
		w.projects[project] = r
	}
	return r
}

// view is the collections as the open buffers make them.
type view struct {
	set *discovery.Set
	// own is the collection holding the file asked about (nil when none);
	// key is that file's path as own names it (a linked collection names
	// its files under the link, editors under the real path).
	own *discovery.Collection
	key string
}

// view lays overlay (path → text) over the Resolver's collections and
// finds the collection that holds path.
func (w *Workspace) view(ctx context.Context, path string, overlay map[string][]byte) *view {
	base, err := w.resolverOf(path).Set(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("lsp: collections unavailable", "err", err)
		}
		base = discovery.NewSet(nil, nil)
	}
	roots := base.Roots
	groups := make([][]*discovery.Collection, len(roots))
	rootIndex := func(r discovery.Root) int {
		for i, x := range roots {
			if x == r {
				return i
			}
		}
		return -1
	}
	for _, c := range base.Collections() {
		if i := rootIndex(c.Root); i >= 0 {
			groups[i] = append(groups[i], c)
		}
	}

	// A buffer whose collection is in no root (a working copy) brings its
	// collection along, ahead of every root.
	var extra *discovery.Collection
	if base.Owner(path) == nil && kindOf(path) != fileBundle && !isBundleAgent(path) {
		extra = w.loadOwner(path)
	}

	copies := map[*discovery.Collection]*discovery.Collection{}
	for p, text := range overlay {
		c := base.Owner(p)
		if c == nil && extra != nil && inCollection(extra, p) {
			c = extra
		}
		if c == nil {
			continue
		}
		cp, ok := copies[c]
		if !ok {
			cp = c.Clone()
			copies[c] = cp
		}
		w.overlayFile(cp, p, text)
	}
	if extra != nil {
		if cp, ok := copies[extra]; ok {
			extra = cp
		}
	}
	if len(copies) == 0 && extra == nil {
		v := &view{set: base, own: base.Owner(path)}
		v.key = keyIn(v.own, path)
		return v
	}
	for i, g := range groups {
		for j, c := range g {
			if cp, ok := copies[c]; ok {
				groups[i][j] = cp
			}
		}
	}
	if extra != nil {
		roots = append([]discovery.Root{extra.Root}, roots...)
		groups = append([][]*discovery.Collection{{extra}}, groups...)
	}
	set := discovery.NewSet(roots, groups)
	v := &view{set: set, own: set.Owner(path)}
	v.key = keyIn(v.own, path)
	return v
}

// loadOwner loads the collection holding path from disk: the one whose
// resource base holds profiles/x.md or agents/x.md (the collection
// directory, or its package directory in a nested layout), or whose
// metadata file path is. It returns nil when there is none.
func (w *Workspace) loadOwner(path string) *discovery.Collection {
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

// inCollection reports whether p lies in c's directory or its real
// directory.
func inCollection(c *discovery.Collection, p string) bool {
	return within(p, c.Dir) || within(p, c.RealDir)
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

// overlayFile replaces what c knows of the file at p by what text says.
func (w *Workspace) overlayFile(c *discovery.Collection, p string, text []byte) {
	key := keyIn(c, p)
	if key == c.Pyproject {
		md, diags := discovery.ParsePyproject(key, text)
		c.Facts[key] = &discovery.Facts{Metadata: md, Diagnostics: diags}
		c.Metadata = md
		c.Name, c.Version, c.Description = filepath.Base(c.Dir), md.Version, md.Description
		if md.Name != "" {
			c.Name = md.Name
		}
		c.Valid = discovery.CountErrors(diags) == 0
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
	c.Facts[key] = discovery.AnalyzeFile(key, text, kind, w.schema)
	for _, r := range c.Resources {
		if r.Path == key {
			return
		}
	}
	// A buffer not yet saved is a resource already.
	c.Resources = append(c.Resources, discovery.Resource{Kind: kind, Name: name, Path: key, Rel: rel})
}

// isBundleAgent reports an agent shipped beside a bundle manifest.
func isBundleAgent(path string) bool {
	if kindOf(path) != fileAgent {
		return false
	}
	fi, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(path)), "bundle.md"))
	return err == nil && fi.Mode().IsRegular()
}

// Diagnose checks one file given its unsaved text: its own problems and its
// cross-references, resolved over every open buffer.
func (w *Workspace) Diagnose(ctx context.Context, path string, text []byte, overlay map[string][]byte) []discovery.Diagnostic {
	kind := kindOf(path)
	if kind == fileOther {
		return nil
	}
	overlay = maps.Clone(overlay)
	if overlay == nil {
		overlay = map[string][]byte{}
	}
	overlay[path] = text
	v := w.view(ctx, path, overlay)
	if ctx.Err() != nil {
		return nil
	}
	var out []discovery.Diagnostic
	switch {
	case kind == fileBundle:
		if w.bundle != nil {
			out = w.bundle(path, text, w.schema)
		} else {
			out = discovery.ParseDocument(path, text, discovery.DocBundle, w.schema).Diagnostics
		}
	case isBundleAgent(path):
		doc := discovery.ParseDocument(path, text, discovery.DocBundleAgent, w.schema)
		out = append(doc.Diagnostics, mentionDiagnostics(v.set, path, discovery.FindMentions(doc.Src, doc.BodyStart, doc.Lines))...)
	case kind == fileProfile || kind == fileAgent:
		var f *discovery.Facts
		if v.own != nil {
			f = v.own.Facts[v.key]
		}
		if f == nil {
			k := discovery.KindAgent
			if kind == fileProfile {
				k = discovery.KindProfile
			}
			f = discovery.AnalyzeFile(path, text, k, w.schema)
			out = append(out, loneRefDiagnostics(v.set, path, f)...)
		}
		out = append(out, f.Diagnostics...)
		if v.own != nil {
			out = append(out, ownDiagnostics(v, v.set.CheckCollection(v.own))...)
		}
	case kind == filePyproject:
		if v.own == nil && !looksLikeCollection(path, text) {
			return nil // an ordinary Python project
		}
		_, out = discovery.ParsePyproject(path, text)
		if v.own != nil && v.own.Pyproject == v.key {
			out = append(out, ownDiagnostics(v, v.set.CheckCollection(v.own))...)
		}
	case kind == fileLock:
		lock, ds, _ := discovery.ParseLock(path, text)
		out = ds
		if lock != nil {
			out = append(out, lockDiagnostics(v.set, path, lock)...)
		}
	}
	for i := range out {
		if out[i].Path == v.key || out[i].Path == "" {
			out[i].Path = path
		}
	}
	discovery.SortDiagnostics(out)
	return out
}

// looksLikeCollection reports whether a pyproject.toml that no root holds
// belongs to a collection: its directory holds resource directories, or it
// has a [tool.amplifier…] table.
func looksLikeCollection(path string, text []byte) bool {
	if shape, err := discovery.DetectShape(filepath.Dir(path), ""); err == nil && shape.HasResources() {
		return true
	}
	return bytes.Contains(text, []byte("[tool.amplifier"))
}

// ownDiagnostics keeps the diagnostics about v's file, named as the editor
// names it.
func ownDiagnostics(v *view, ds []discovery.Diagnostic) []discovery.Diagnostic {
	var out []discovery.Diagnostic
	for _, d := range ds {
		if d.Path == v.key {
			out = append(out, d)
		}
	}
	return out
}

// loneRefDiagnostics checks the references of a file no collection holds:
// only qualified names can resolve.
func loneRefDiagnostics(set *discovery.Set, path string, f *discovery.Facts) []discovery.Diagnostic {
	var out []discovery.Diagnostic
	if f.Extends != nil {
		if _, err := set.ResolveProfile(f.Extends.Value, nil); err != nil {
			out = append(out, discovery.Diagnostic{Code: discovery.CodeExtendsUnresolved, Severity: discovery.SeverityError,
				Path: path, Range: f.Extends.Range, Message: fmt.Sprintf("extends %q does not resolve: %v", f.Extends.Value, err)})
		}
	}
	for _, a := range f.Agents {
		if _, _, ok := set.ResolveAgent(a.Value, nil); !ok {
			out = append(out, discovery.Diagnostic{Code: discovery.CodeAgentUnknown, Severity: discovery.SeverityError,
				Path: path, Range: a.Range, Message: fmt.Sprintf("agent %q does not exist in any collection", a.Value)})
		}
	}
	return append(out, mentionDiagnostics(set, path, f.Mentions)...)
}

// mentionDiagnostics checks @collection:path mentions.
func mentionDiagnostics(set *discovery.Set, path string, ms []discovery.Mention) []discovery.Diagnostic {
	var out []discovery.Diagnostic
	for _, m := range ms {
		_, err := set.ResolveMention(m)
		switch {
		case err == nil:
		case escapesPath(m.Path):
			out = append(out, discovery.Diagnostic{Code: discovery.CodeMentionEscapes, Severity: discovery.SeverityError,
				Path: path, Range: m.Range, Message: fmt.Sprintf("@%s leaves collection %s (\"..\" is not allowed)", m.Text(), m.Collection)})
		default:
			out = append(out, discovery.Diagnostic{Code: discovery.CodeMentionUnresolved, Severity: discovery.SeverityError,
				Path: path, Range: m.Range, Message: fmt.Sprintf("@%s does not resolve: %v", m.Text(), err)})
		}
	}
	return out
}

func escapesPath(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	return slices.Contains(strings.Split(p, "/"), "..")
}

// lockDiagnostics compares a lock file with the root it belongs to, when it
// belongs to one.
func lockDiagnostics(set *discovery.Set, path string, lock *discovery.Lock) []discovery.Diagnostic {
	for _, r := range set.Roots {
		if discovery.LockPath(r) != path {
			continue
		}
		var installed []discovery.LockCheckCollection
		for _, c := range set.Collections() {
			if c.Root == r {
				installed = append(installed, discovery.LockCheckCollection{Name: c.Name, Dir: c.Dir})
			}
		}
		return discovery.CheckLock(path, lock, installed)
	}
	return nil
}

// refAt is the reference under the cursor.
type refAt struct {
	kind  string // "extends", "agent", "mention" or "requires"
	value string
	rng   discovery.Range
	coll  string // the collection name the reference goes through ("" for a bare name)
	m     discovery.Mention
}

// findRef returns the reference at pos in the file, if any.
func (w *Workspace) findRef(v *view, path string, text []byte, pos discovery.Position) (refAt, bool) {
	switch kindOf(path) {
	case filePyproject:
		md, _ := discovery.ParsePyproject(path, text)
		for _, r := range md.Requires {
			// The range covers the value; the name on its left counts too.
			line := discovery.Range{Start: discovery.Position{Line: r.Range.Start.Line}, End: r.Range.End}
			if contains(line, pos) {
				return refAt{kind: "requires", value: r.Name, rng: r.Range, coll: r.Name}, true
			}
		}
		return refAt{}, false
	case fileProfile, fileAgent, fileBundle:
	default:
		// Context files and others: mentions only.
		for _, m := range discovery.FindMentions(text, 0, discovery.NewLineIndex(text)) {
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
func contains(r discovery.Range, pos discovery.Position) bool {
	before := func(a, b discovery.Position) bool {
		return a.Line < b.Line || a.Line == b.Line && a.Character <= b.Character
	}
	return before(r.Start, pos) && before(pos, r.End)
}
