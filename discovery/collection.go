package discovery

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/suppress"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Collection is one collection directory found in a root.
type Collection struct {
	// Name is the metadata name; for a directory without valid metadata it
	// is the directory name.
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	Root        Root   `json:"root"`
	// Dir is the directory in the root; RealDir its real path when Dir is
	// a symbolic link; Base the directory that holds the resources.
	Dir       string    `json:"dir"`
	RealDir   string    `json:"real_dir"`
	Base      string    `json:"base"`
	Pyproject string    `json:"pyproject,omitempty"`
	Layout    Layout    `json:"layout"`
	Metadata  *Metadata `json:"metadata,omitempty"`
	// Valid is false when the directory cannot be used: it has no
	// pyproject.toml, or one that names no collection (see Usable);
	// Problem says why. A collection whose metadata is otherwise invalid
	// (a bad version or constraint, a missing description) is valid here:
	// it resolves and is checked as usual, and its pyproject.toml carries
	// the errors.
	Valid   bool   `json:"valid"`
	Problem string `json:"problem,omitempty"`
	// Degraded, when set, says why the load that made the collection is
	// incomplete: a directory of it could not be listed, or a file could
	// not be read for want of descriptors or memory (see IsTransient).
	// What it holds is then not all the directory holds; a holder of an
	// older, complete load keeps that one and tries again later.
	Degraded string `json:"degraded,omitempty"`

	Resources []Resource `json:"resources"`
	// Facts holds the analysis of each profile, agent and context file and
	// of the pyproject.toml files, by absolute path. They may be brief (see
	// Facts.Brief); FullFacts has the rest.
	Facts map[string]*Facts `json:"-"`
	// Diagnostics are the collection's problems that belong to no file's
	// Facts: missing metadata, unreadable directories, layout. The files'
	// own diagnostics are in their Facts; OwnDiagnostics gathers both.
	Diagnostics []diag.Diagnostic `json:"-"`
	// details returns the full Facts of a file whose Facts are brief;
	// mentions, when set, only their mentions.
	details  func(path string) *Facts
	mentions func(path string) ([]syntax.Mention, bool)

	relsOnce sync.Once
	rels     map[string]int // Rel → index in Resources of every resource
}

// Clone returns a copy of c whose Resources, Facts and Diagnostics may be
// changed without touching c (the Facts values themselves are shared).
func (c *Collection) Clone() *Collection {
	d := &Collection{}
	c.copyTo(d)
	d.Facts = maps.Clone(c.Facts)
	if d.Facts == nil {
		d.Facts = map[string]*Facts{}
	}
	d.Resources, d.Diagnostics = slices.Clone(c.Resources), slices.Clone(c.Diagnostics)
	return d
}

// copyTo sets the fields of d, a Collection not yet published, to c's,
// but for what c works out from them when asked (its resources by Rel).
func (c *Collection) copyTo(d *Collection) {
	d.Name, d.Version, d.Description, d.Root = c.Name, c.Version, c.Description, c.Root
	d.Dir, d.RealDir, d.Base, d.Pyproject, d.Layout = c.Dir, c.RealDir, c.Base, c.Pyproject, c.Layout
	d.Metadata, d.Valid, d.Problem, d.Degraded = c.Metadata, c.Valid, c.Problem, c.Degraded
	d.Resources, d.Facts, d.Diagnostics = c.Resources, c.Facts, c.Diagnostics
	d.details, d.mentions = c.details, c.mentions
}

// FullFacts returns the Facts of the file at path with everything in them:
// those held, or, when they are brief, those the Loader's Details gives
// (the brief ones when it cannot). It returns nil for a file the
// collection does not hold.
func (c *Collection) FullFacts(path string) *Facts {
	f := c.Facts[path]
	if f == nil || !f.brief || c.details == nil {
		return f
	}
	if full := c.details(path); full != nil {
		return full
	}
	return f
}

// OwnDiagnostics returns every problem of the collection that is not a
// cross-reference: its own (Diagnostics), then its pyproject.toml's and
// each profile's, agent's and context file's, in that order.
func (c *Collection) OwnDiagnostics() []diag.Diagnostic {
	out := slices.Clone(c.Diagnostics)
	add := func(p string) {
		f := c.Facts[p]
		if f == nil || f.Counts().Total() == 0 {
			return
		}
		for _, d := range c.FullFacts(p).Diagnostics {
			d.Collection = c.Name
			out = append(out, d)
		}
	}
	if c.Pyproject != "" {
		add(c.Pyproject)
	}
	for _, r := range c.Resources {
		switch r.Kind {
		case KindProfile, KindAgent, KindContext:
			add(r.Path)
		}
	}
	return out
}

// ResourcePath returns the path of the resource at rel (slash-separated,
// relative to the base), if there is one. Resources must not change once
// it has been called.
func (c *Collection) ResourcePath(rel string) (string, bool) {
	if r, ok := c.ResourceAt(rel); ok {
		return r.Path, true
	}
	return "", false
}

// manyResources is how many resources a collection needs before
// ResourceAt builds a table rather than looking through them.
const manyResources = 64

// ResourceAt returns the resource at rel (the last of two at one rel, as
// ResourcePath always had): looked through in a small collection, looked
// up in a table built on the first call in a large one.
func (c *Collection) ResourceAt(rel string) (Resource, bool) {
	if len(c.Resources) < manyResources {
		for i := len(c.Resources) - 1; i >= 0; i-- {
			if c.Resources[i].Rel == rel {
				return c.Resources[i], true
			}
		}
		return Resource{}, false
	}
	c.relsOnce.Do(func() {
		c.rels = make(map[string]int, len(c.Resources))
		for i, r := range c.Resources {
			c.rels[r.Rel] = i
		}
	})
	i, ok := c.rels[rel]
	if !ok {
		return Resource{}, false
	}
	return c.Resources[i], true
}

// Count returns how many resources of kind k the collection has.
func (c *Collection) Count(k Kind) int {
	n := 0
	for _, r := range c.Resources {
		if r.Kind == k {
			n++
		}
	}
	return n
}

// Resource returns the resource of kind k and name, if any.
func (c *Collection) Resource(k Kind, name string) (Resource, bool) {
	for _, r := range c.Resources {
		if r.Kind == k && r.Name == name {
			return r, true
		}
	}
	return Resource{}, false
}

// FileCache lets a Loader reuse the Facts of files it has seen before.
// Implementations decide what "unchanged" means; the daemon compares size,
// modification time and inode first, then the content hash, so that a
// restart reads no unchanged file and a save that leaves the bytes as they
// were is not analyzed again.
type FileCache interface {
	// Lookup returns the cached Facts for path when fi says it is
	// unchanged.
	Lookup(path string, fi fs.FileInfo, k Kind) (*Facts, bool)
	// Analyze returns the Facts of path, whose bytes are src (nil when the
	// file was not read, being too large): the cached ones when src is the
	// content they were computed from, else those analyze computes. It
	// remembers the result and fi.
	Analyze(path string, fi fs.FileInfo, src []byte, k Kind, analyze func() *Facts) *Facts
}

// Loader reads collections from disk.
type Loader struct {
	Schema schema.Options
	// Cache, when set, supplies and receives per-file Facts.
	Cache FileCache
	// ReadFile reads a file; when nil, ReadFile of this package with
	// MaxFileSize as the limit. Tests count reads here.
	ReadFile func(string) ([]byte, error)
	// ReadDir lists a directory (a root, a collection, its resource
	// directories); os.ReadDir when nil. Tests inject failures here.
	ReadDir func(string) ([]os.DirEntry, error)
	// Stat returns what a path is, following symbolic links: to tell a
	// collection's layout (which entries are its metadata, its package
	// and its resource directories) and before a document is read;
	// os.Stat when nil. Tests inject failures here.
	Stat func(string) (fs.FileInfo, error)
	// OnRead, when set, sees the bytes of every file read with the
	// Loader's own reader (ReadFile nil); it is called from as many
	// goroutines as load collections at once, and must not keep or change
	// src. A caller that only looks at the bytes sets it rather than
	// ReadFile, so that a file is opened once and not first stat'ed.
	OnRead func(path string, src []byte)
	// MaxFileSize bounds the documents read; DefaultMaxFileSize when 0.
	MaxFileSize int64
	// RealPath returns the real path of a collection directory, its
	// symbolic links resolved, as filepath.EvalSymlinks does (which it is
	// when nil); it is called from as many goroutines as load collections
	// at once. A check, which runs once, remembers the real paths of the
	// roots rather than resolving them again for each collection.
	RealPath func(dir string) (string, error)
	// Details, when set, makes the collections loaded keep brief Facts
	// (see Facts.Brief), and get the full ones from it when a check or a
	// query needs them: it returns the full Facts of a file as last
	// analyzed, or nil. A daemon that keeps every file's Facts in its
	// index sets it, so that what lives in memory is what answers need at
	// once.
	Details func(path string) *Facts
	// Mentions, when set beside Details, returns the mentions of a file as
	// last analyzed, and whether it knows them: what the cross-reference
	// checks ask of every file with mentions, for less than Details costs.
	Mentions func(path string) ([]syntax.Mention, bool)
	// NamesOnly reads each collection's pyproject.toml files and lists its
	// resources, but reads no document: enough to tell which collection
	// wins a name and to describe it (name, version, description, layout,
	// validity, resource counts), not to check it. Its collections hold
	// no Facts but their pyproject.toml files'.
	NamesOnly bool
	// slabs holds *syntax.Nodes and bufs *[]byte: node memory and file
	// buffers reused from file to file.
	slabs, bufs sync.Pool
}

// maxPooledBuffer is the largest file buffer a Loader keeps for the next
// file.
const maxPooledBuffer = 1 << 20

func (l *Loader) maxFileSize() int64 {
	if l.MaxFileSize <= 0 {
		return syntax.DefaultMaxFileSize
	}
	return l.MaxFileSize
}

func (l *Loader) realPath(dir string) (string, error) {
	if l.RealPath != nil {
		return l.RealPath(dir)
	}
	return filepath.EvalSymlinks(dir)
}

func (l *Loader) readFile(p string) ([]byte, error) {
	if l.ReadFile != nil {
		return l.ReadFile(p)
	}
	src, err := syntax.ReadFile(p, l.maxFileSize())
	if err == nil && l.OnRead != nil {
		l.OnRead(p, src)
	}
	return src, err
}

// fileProblem returns Facts holding only the warning that says why the
// file at p was not read.
func fileProblem(p string, k Kind, err error) *Facts {
	return &Facts{Kind: k, Diagnostics: []diag.Diagnostic{syntax.ReadProblem(p, err)}, transient: IsTransient(err)}
}

// analyze returns the Facts of the file at p, from the cache when it is
// unchanged. A file that cannot be read, is not a regular file or is too
// large gets Facts holding only a warning; it is never opened for reading
// unless it is a regular file.
func (l *Loader) analyze(p string, k Kind) *Facts {
	if l.Cache == nil && l.ReadFile == nil {
		// Nothing needs the file's stat before it is read: ReadFile opens
		// it without blocking and reads it only if it is a regular file
		// within the limit. Nor does anything keep its bytes (the Facts
		// hold copies, OnRead must not keep them): they are read into a
		// buffer of the Loader's, used again for the next file.
		buf, _ := l.bufs.Get().(*[]byte)
		if buf == nil {
			buf = new([]byte)
		}
		src, err := syntax.ReadFileInto(p, l.maxFileSize(), *buf)
		if err != nil {
			l.bufs.Put(buf)
			return l.unread(p, k, err)
		}
		if l.OnRead != nil {
			l.OnRead(p, src)
		}
		f := l.analyzeFile(p, src, k)
		if cap(src) <= maxPooledBuffer {
			*buf = src[:0]
		}
		l.bufs.Put(buf)
		return f
	}
	fi, err := (&statter{stat: l.Stat}).info(p)
	if err != nil {
		return fileProblem(p, k, err)
	}
	if l.Cache != nil {
		if f, ok := l.Cache.Lookup(p, fi, k); ok {
			return f
		}
	}
	max := l.maxFileSize()
	var (
		src     []byte
		analyze func() *Facts
	)
	switch {
	case !fi.Mode().IsRegular():
		analyze = func() *Facts {
			return fileProblem(p, k, fmt.Errorf("%w (%s)", syntax.ErrNotRegular, syntax.ModeName(fi.Mode())))
		}
	case fi.Size() > max:
		analyze = func() *Facts {
			return fileProblem(p, k, fmt.Errorf("%w: %d bytes, more than the %d read", syntax.ErrTooLarge, fi.Size(), max))
		}
	default:
		if src, err = l.readFile(p); err != nil {
			return fileProblem(p, k, err)
		}
		analyze = func() *Facts { return l.analyzeFile(p, src, k) }
	}
	if l.Cache != nil {
		return l.Cache.Analyze(p, fi, src, k, analyze)
	}
	return analyze()
}

// analyzeFile is AnalyzeFile with the Loader's schema options, parsing
// front matter into a node slab of the Loader's, reset afterwards for the
// next file.
func (l *Loader) analyzeFile(p string, src []byte, k Kind) *Facts {
	slab, _ := l.slabs.Get().(*syntax.Nodes)
	if slab == nil {
		slab = &syntax.Nodes{}
	}
	f := analyzeFile(p, src, k, l.Schema, slab)
	slab.Reset()
	l.slabs.Put(slab)
	return f
}

// unread returns the Facts of a file that ReadFile did not read, err
// being why: the warning analyze gives after a stat, which says why
// more precisely than the open can (a socket cannot be opened at all).
func (l *Loader) unread(p string, k Kind, err error) *Facts {
	if errors.Is(err, syntax.ErrNotRegular) || errors.Is(err, syntax.ErrTooLarge) {
		return fileProblem(p, k, err)
	}
	fi, serr := (&statter{stat: l.Stat}).info(p)
	switch max := l.maxFileSize(); {
	case serr != nil:
		return fileProblem(p, k, serr)
	case !fi.Mode().IsRegular():
		return fileProblem(p, k, fmt.Errorf("%w (%s)", syntax.ErrNotRegular, syntax.ModeName(fi.Mode())))
	case fi.Size() > max:
		return fileProblem(p, k, fmt.Errorf("%w: %d bytes, more than the %d read", syntax.ErrTooLarge, fi.Size(), max))
	}
	return fileProblem(p, k, err)
}

// Load reads the collection directory dir found in root. It returns nil
// when dir is not a collection at all (no metadata and no resources).
func (l *Loader) Load(root Root, dir string) *Collection {
	entries, err := l.readDir(dir)
	return l.load(root, dir, entries, err)
}

// load is Load given what reading the directory dir returned.
func (l *Loader) load(root Root, dir string, entries []os.DirEntry, err error) *Collection {
	realDir := dir
	if err == nil {
		if real, rerr := l.realPath(dir); rerr == nil {
			realDir = real
		}
	}
	if err == nil && realDir != dir && root.Kind != RootArgument {
		if rootReal, rerr := l.realPath(root.Path); rerr != nil || joinName(rootReal, filepath.Base(dir)) != realDir {
			// A link (not only a root reached through one): followed
			// only as FollowLink says.
			if ferr := FollowLink(root.Path, dir, realDir); ferr != nil {
				msg := errText(ferr)
				return &Collection{Name: filepath.Base(dir), Root: root, Dir: dir, RealDir: realDir, Base: dir,
					Layout: LayoutNone, Problem: msg,
					Diagnostics: []diag.Diagnostic{{Code: diag.CodeSymlinkLoop, Severity: diag.SeverityWarning, Path: dir, Message: msg,
						Collection: filepath.Base(dir)}}}
			}
		}
	}
	var shape Shape
	st := &statter{stat: l.Stat}
	if err == nil {
		shape = detectShape(st, dir, realDir, "", entries)
	}
	if err != nil {
		return &Collection{Name: filepath.Base(dir), Root: root, Dir: dir, RealDir: dir, Base: dir,
			Layout: LayoutNone, Problem: "cannot read directory: " + errText(err), Degraded: "cannot read directory " + dir + ": " + errText(err),
			Diagnostics: []diag.Diagnostic{{Code: diag.CodeUnreadable, Severity: diag.SeverityWarning, Path: dir,
				Message: "cannot read directory: " + errText(err)}}}
	}
	if !shape.IsCollection() && !shape.HasResources() {
		if st.failed != "" {
			// Nothing found, but a stat that failed may have hidden it.
			return &Collection{Name: filepath.Base(dir), Root: root, Dir: dir, RealDir: realDir, Base: dir,
				Layout: LayoutNone, Problem: st.failed, Degraded: st.failed,
				Diagnostics: []diag.Diagnostic{{Code: diag.CodeUnreadable, Severity: diag.SeverityWarning, Path: dir, Message: st.failed}}}
		}
		return nil
	}
	c := &Collection{Name: filepath.Base(dir), Root: root, Dir: shape.Dir, RealDir: shape.RealDir,
		Base: shape.Base, Layout: shape.Layout, Facts: map[string]*Facts{}, details: l.Details, mentions: l.Mentions}
	if !shape.IsCollection() {
		c.Problem = "Missing pyproject.toml"
		// The directory is what is wrong, not a file that is not there.
		c.Diagnostics = append(c.Diagnostics, diag.Diagnostic{Code: diag.CodeMissingPyproject, Severity: diag.SeverityError,
			Path: dir, Message: "Missing pyproject.toml"})
	} else {
		c.Pyproject = shape.Pyproject
		f := l.keep(c.noteUnread(l.analyze(shape.Pyproject, "")))
		c.Facts[shape.Pyproject] = f
		c.Metadata = f.Metadata // brief Facts keep it too
		if f.Metadata != nil {
			if f.Metadata.Name != "" {
				c.Name = f.Metadata.Name
			}
			c.Version, c.Description = f.Metadata.Version, f.Metadata.Description
		}
		// The package directory named after the project wins over another
		// one when both hold resources.
		if want := strings.ReplaceAll(c.Name, "-", "_"); shape.Layout == LayoutNested && filepath.Base(shape.Base) != want {
			if s2 := detectShape(st, dir, realDir, want, entries); s2.Layout == LayoutNested {
				shape = s2
				c.Base = s2.Base
			}
		}
		if Usable(f) {
			c.Valid = true
		} else {
			// Only now are the diagnostics needed, to say why.
			if f = c.FullFacts(shape.Pyproject); f.brief {
				f = l.analyzeAgain(shape.Pyproject, "")
			}
			c.Problem = PyprojectProblem(f)
		}
		if shape.PackagePyproject != "" {
			c.Diagnostics = append(c.Diagnostics, l.checkPackageCopy(c, shape)...)
		}
	}
	dirs := ^resourceSet(0)
	if shape.namedKnown && shape.Base == c.Base {
		dirs = shape.named
	}
	res, diags, degraded := listResources(c.Base, dirs, l.readDir)
	c.Resources = res
	c.Diagnostics = append(c.Diagnostics, diags...)
	if degraded != "" && c.Degraded == "" {
		c.Degraded = degraded
	}
	if st.failed != "" && c.Degraded == "" {
		c.Degraded = st.failed
	}
	for _, r := range res {
		switch r.Kind {
		case KindProfile, KindAgent, KindContext:
			if !l.NamesOnly {
				c.Facts[r.Path] = l.keep(c.noteUnread(l.analyze(r.Path, r.Kind)))
			}
		}
	}
	for i := range c.Diagnostics {
		c.Diagnostics[i].Collection = c.Name
	}
	return c
}

// noteUnread marks c degraded when f is the Facts of a file that could
// not be read for a reason that says nothing of the file (IsTransient),
// and returns f.
func (c *Collection) noteUnread(f *Facts) *Facts {
	if f.transient && c.Degraded == "" && len(f.Diagnostics) > 0 {
		c.Degraded = f.Diagnostics[0].Path + ": " + f.Diagnostics[0].Message
	}
	return f
}

// keep returns what a collection keeps of a file's Facts: brief ones when
// the Loader has Details.
func (l *Loader) keep(f *Facts) *Facts {
	if l.Details != nil {
		return f.Brief()
	}
	return f
}

// analyzeAgain reads and analyzes the file at p whatever the cache says:
// for the rare file whose full Facts are needed now and that Details
// cannot give.
func (l *Loader) analyzeAgain(p string, k Kind) *Facts {
	src, err := l.readFile(p)
	if err != nil {
		return fileProblem(p, k, err)
	}
	return AnalyzeFile(p, src, k, l.Schema)
}

// checkPackageCopy warns when the package's pyproject.toml names another
// collection than the root one.
func (l *Loader) checkPackageCopy(c *Collection, shape Shape) []diag.Diagnostic {
	f := c.noteUnread(l.analyze(shape.PackagePyproject, ""))
	c.Facts[shape.PackagePyproject] = l.keep(f)
	md := f.Metadata
	if md == nil || md.Name == "" || c.Metadata == nil || md.Name == c.Metadata.Name {
		return nil
	}
	return []diag.Diagnostic{{Code: diag.CodeNestedNameMismatch, Severity: diag.SeverityWarning, Path: shape.PackagePyproject,
		Message: fmt.Sprintf("package copy names the collection %q, but %s names it %q; the root pyproject.toml wins",
			md.Name, shape.Pyproject, c.Metadata.Name)}}
}

// ScanRoot loads every collection directly inside root, in path order.
// A root that does not exist holds no collections and is not an error.
func (l *Loader) ScanRoot(root Root) ([]*Collection, error) {
	dirs, err := l.CandidateDirs(root.Path)
	if err != nil {
		return nil, err
	}
	var out []*Collection
	for _, dir := range dirs {
		if c := l.LoadCandidate(root, dir); c != nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// CandidateDirs lists the entries of a root that may be collections, in
// path order: every entry but dotfiles, editor droppings and names that
// are never collections (see IsCandidate). A root that does not exist
// holds none and is not an error.
func CandidateDirs(root string) ([]string, error) {
	return (&Loader{}).CandidateDirs(root)
}

// CandidateDirs is the package's CandidateDirs, listing with the Loader's
// ReadDir. An error but the root's absence is returned: a root that cannot
// be listed is not an empty one.
func (l *Loader) CandidateDirs(root string) ([]string, error) {
	entries, err := l.readDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan root %s: %w", root, err)
	}
	var out []string
	clean := filepath.Clean(root)
	for _, e := range entries {
		if IsCandidate(e.Name()) && (e.IsDir() || e.Type()&fs.ModeSymlink != 0) {
			out = append(out, joinName(clean, e.Name()))
		}
	}
	return out, nil
}

// IsCandidate reports whether an entry of a root called name may be a
// collection.
func IsCandidate(name string) bool { return !skipDir(name) && !IsEditorDropping(name) }

// LoadCandidate loads the entry dir of root as a collection: nil when it
// is not a candidate name, not a directory (a symbolic link to one is
// followed), or not a collection at all.
func (l *Loader) LoadCandidate(root Root, dir string) *Collection {
	if !IsCandidate(filepath.Base(dir)) {
		return nil
	}
	// A directory that lists is a directory: only when the listing fails
	// is a stat needed to tell a file (not a candidate) from a directory
	// that cannot be read.
	entries, err := l.readDir(dir)
	if st := (&statter{stat: l.Stat}); err != nil && !st.isDir(dir) && st.failed == "" {
		return nil
	}
	return l.load(root, dir, entries, err)
}

// Files returns the paths of every file the collection read: its
// pyproject.toml files, profiles, agents and context files, sorted.
func (c *Collection) Files() []string {
	out := make([]string, 0, len(c.Facts))
	for p := range c.Facts {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Suppress applies the suppression comments of c's files, as its Facts
// hold them, to ds, every diagnostic of c's files (see
// suppress.Files.Apply): the one place the comments of a collection are
// applied, whatever asks. ds is returned as it is when no file of c has a
// comment.
func (c *Collection) Suppress(ds []diag.Diagnostic) []diag.Diagnostic {
	var s suppress.Files
	for p, f := range c.Facts {
		if f != nil && len(f.Suppressions) > 0 {
			if s == nil {
				s = suppress.Files{}
			}
			s[p] = f.Suppressions
		}
	}
	if s == nil {
		return ds
	}
	return s.Apply(ds)
}

// Requires reports whether c declares name in its requires; false for a
// nil c.
func (c *Collection) Requires(name string) bool {
	if c == nil || c.Metadata == nil {
		return false
	}
	for _, r := range c.Metadata.Requires {
		if r.Name == name {
			return true
		}
	}
	return false
}

// AnswersTo returns the names c is a candidate for in a Set: its metadata
// name and, for an unusable directory, its directory name too.
func (c *Collection) AnswersTo() []string {
	if dn := filepath.Base(c.Dir); dn != c.Name && !c.Valid {
		// The directory name is only a fast path: it finds skipped
		// directories whose metadata could not name them.
		return []string{c.Name, dn}
	}
	return []string{c.Name}
}

// MentionsOf returns the mentions of the file at p of c, whose Facts are
// f: from the full Facts when f is brief (see Loader.Mentions).
func (c *Collection) MentionsOf(p string, f *Facts) []syntax.Mention {
	if !f.brief {
		return f.Mentions
	}
	if !f.HasMentions() {
		return nil
	}
	if c.mentions != nil {
		if ms, ok := c.mentions(p); ok {
			return ms
		}
	}
	return c.FullFacts(p).Mentions
}
