package migrate

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// MaxFiles is the most files a migration carries.
const MaxFiles = 10_000

// ErrUnknownProfile is returned when Options.Profiles names a profile the
// collection does not have.
var ErrUnknownProfile = errors.New("migrate: no such profile")

// ErrTooManyFiles is returned when a collection holds more than MaxFiles
// files to carry.
var ErrTooManyFiles = errors.New("migrate: more files than a migration carries")

// ErrNoCollection is returned by Migrate for a nil collection.
var ErrNoCollection = errors.New("migrate: no collection")

// Options say how to migrate a collection.
type Options struct {
	// Profiles are the profiles the root bundle takes, by name (the file
	// name without .md, NS:name or profiles/NAME.md), in order. None: the
	// collection's only profile, else every profile.
	Profiles []string
	// Installed are the other collections a profile's bare agent name may
	// resolve to, as the collection's runtime looked it up there. The
	// collection migrated is skipped among them.
	Installed []*discovery.Collection
}

// File is one file of the bundle repository.
type File struct {
	// Path is relative to the repository's root, slash-separated.
	Path string
	Data []byte
	// From is the collection's file it is made from, relative to the
	// collection's directory ("" for bundle.md and MIGRATION.md).
	From string
}

// Note says what a migration did not carry over, or carried in another
// form than the collection had it.
type Note struct {
	// Path is the collection's file, relative to its directory and
	// slash-separated; "" for the collection as a whole.
	Path string
	// Line is 1-based; 0 for the whole file.
	Line    int
	Message string
}

// String formats n as `path:line: message`.
func (n Note) String() string {
	switch {
	case n.Path == "":
		return n.Message
	case n.Line == 0:
		return n.Path + ": " + n.Message
	}
	return fmt.Sprintf("%s:%d: %s", n.Path, n.Line, n.Message)
}

// Result is a collection migrated: the files of its bundle repository
// and the notes.
type Result struct {
	// Name is the bundle's name (its namespace); Collection the
	// collection's.
	Name       string
	Collection string
	// Root are the profiles the root bundle includes, in order.
	Root []string
	// Files are sorted by path (component by component); MIGRATION.md is
	// among them.
	Files []File
	// Notes are sorted by path and line.
	Notes []Note
}

// migration is the work of one Migrate.
type migration struct {
	c    *discovery.Collection
	opts Options
	// base is the collection's resource base relative to its directory
	// ("" for a flat layout).
	base string

	ns, version, description string
	// aliases are the names a mention of the collection itself may use.
	aliases map[string]bool

	profiles []*profile
	root     []*profile
	agents   []string        // the collection's agents, in path order
	modules  map[string]bool // the collection's modules, by directory name

	files map[string]*File
	notes []Note
	// carried holds every path under the base that a file was made from.
	carried map[string]bool
	// targets are the paths under the base the collection's own mentions
	// name, in the order met.
	targets []string
	// rewrites counts, per file, mentions whose collection name changed.
	rewrites map[string]map[string]int
	tooMany  bool
}

// Migrate turns collection c into the files of a bundle repository.
func Migrate(c *discovery.Collection, opts Options) (*Result, error) {
	if c == nil {
		return nil, ErrNoCollection
	}
	m := &migration{c: c, opts: opts, aliases: map[string]bool{}, modules: map[string]bool{},
		files: map[string]*File{}, carried: map[string]bool{}, rewrites: map[string]map[string]int{}}
	m.base = relDir(c)
	m.metadata()
	for _, r := range c.Resources {
		switch r.Kind {
		case discovery.KindAgent:
			m.agents = append(m.agents, r.Name)
		case discovery.KindModule:
			m.modules[r.Name] = true
		}
	}
	m.readProfiles()
	if err := m.chooseRoot(); err != nil {
		return nil, err
	}
	for _, p := range m.profiles {
		m.behavior(p)
		if !m.soleRoot(p) {
			m.variant(p)
		}
	}
	m.rootBundle()
	for _, r := range c.Resources {
		if r.Kind == discovery.KindAgent {
			m.agent(r)
		}
	}
	m.copyTree("context", true)
	m.copyTree("scenario-tools", false)
	m.copyTree("modules", false)
	m.mentionTargets()
	m.leftovers()
	if m.tooMany {
		return nil, fmt.Errorf("%w: %s holds more than %d", ErrTooManyFiles, c.Dir, MaxFiles)
	}
	m.rewriteNotes()
	m.sortNotes()
	m.add(&File{Path: "MIGRATION.md", Data: m.report()})
	return m.result(), nil
}

// relDir returns the collection's resource base relative to its
// directory, slash-separated ("" when they are one).
func relDir(c *discovery.Collection) string {
	for _, d := range []string{c.Dir, c.RealDir} {
		if d == "" {
			continue
		}
		if rel, err := filepath.Rel(d, c.Base); err == nil && !strings.HasPrefix(rel, "..") {
			if rel == "." {
				return ""
			}
			return filepath.ToSlash(rel)
		}
	}
	return ""
}

// rel returns the path of a file under the base, relative to the
// collection's directory, for a note.
func (m *migration) rel(underBase string) string {
	if strings.HasSuffix(underBase, "/") {
		return path.Join(m.base, underBase) + "/"
	}
	return path.Join(m.base, underBase)
}

// abs returns the absolute path of a file under the base.
func (m *migration) abs(underBase string) string {
	return filepath.Join(m.c.Base, filepath.FromSlash(underBase))
}

// note records a note about a file under the base.
func (m *migration) note(underBase string, line int, format string, args ...any) {
	p := ""
	if underBase != "" {
		p = m.rel(underBase)
	}
	m.notes = append(m.notes, Note{Path: p, Line: line, Message: fmt.Sprintf(format, args...)})
}

// noteAt records a note about a file named relative to the collection's
// directory.
func (m *migration) noteAt(rel string, line int, format string, args ...any) {
	m.notes = append(m.notes, Note{Path: rel, Line: line, Message: fmt.Sprintf(format, args...)})
}

// add records a file of the repository. A later file at the same path
// replaces an earlier one.
func (m *migration) add(f *File) {
	if f.Path != "MIGRATION.md" && (!safePath(f.Path) || strings.ContainsAny(f.Path, "\n\r")) {
		m.noteAt(f.From, 0, "not carried: its name cannot be a path of the repository")
		return
	}
	if _, ok := m.files[f.Path]; !ok && len(m.files) >= MaxFiles {
		m.tooMany = true
		return
	}
	m.files[f.Path] = f
}

// metadata reads the bundle's name, version and description from the
// collection's metadata, and the names its mentions may call it by.
func (m *migration) metadata() {
	c := m.c
	md := c.Metadata
	if md != nil && md.Name != "" {
		m.ns, m.version, m.description = md.Name, md.Version, md.Description
	} else {
		m.ns = dirName(filepath.Base(c.Dir))
		why := c.Problem
		if why == "" {
			why = "pyproject.toml names no collection"
		}
		m.noteAt("", 0, "%s: the bundle is named %s after the directory, with version 1.0.0 and no description; set bundle.name, version and description in bundle.md", strings.TrimSuffix(why, "."), m.ns)
	}
	if m.version == "" {
		m.version = "1.0.0"
	}
	if !isNamespace(m.ns) {
		m.noteAt("", 0, "the name %s is not a namespace the runtime recognizes in NS:path (a letter, then letters, digits, - or _): includes and mentions of %s:… do not resolve; rename the bundle", m.ns, m.ns)
	}
	m.aliases[m.ns] = true
	m.aliases[c.Name] = true
	for _, a := range []string{filepath.Base(c.Dir), filepath.Base(c.RealDir), "amplifier-collection-" + m.ns} {
		if a != "" && a != "." && a != "/" {
			m.aliases[a] = true
		}
	}
	if m.base != "" {
		m.aliases[filepath.Base(c.Base)] = true
		m.aliases[strings.ReplaceAll(filepath.Base(c.Base), "_", "-")] = true
	}
	for _, n := range packageNames(c.Dir) {
		m.aliases[n] = true
	}
	// A name that is another installed collection's is that one's.
	for _, o := range m.opts.Installed {
		if o != nil && o.Name != m.ns && !sameCollection(o, c) {
			delete(m.aliases, o.Name)
		}
	}
	m.pyprojectNotes()
}

// sameCollection reports whether a and b are the same directory.
func sameCollection(a, b *discovery.Collection) bool {
	return a == b || (a.Dir != "" && a.Dir == b.Dir) || (a.RealDir != "" && a.RealDir == b.RealDir)
}

// dirName turns a directory name into a bundle name: lowercase letters,
// digits and single hyphens.
func dirName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
	}
	if b.Len() == 0 {
		return "collection"
	}
	return b.String()
}

// isNamespace is the runtime's test of the namespace of NS:path.
func isNamespace(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i, c := range s {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if i == 0 && !alpha || !(alpha || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// soleRoot reports whether p is the one profile of the root bundle.
func (m *migration) soleRoot(p *profile) bool {
	return len(m.root) == 1 && m.root[0] == p
}

// instructionFile is the file of the repository that holds p's
// instruction.
func (m *migration) instructionFile(p *profile) string {
	if m.soleRoot(p) {
		return "bundle.md"
	}
	return "bundles/" + p.stem + ".md"
}

// chooseRoot picks the profiles of the root bundle.
func (m *migration) chooseRoot() error {
	if len(m.opts.Profiles) == 0 {
		m.root = slices.Clone(m.profiles)
		if len(m.profiles) > 1 {
			names := make([]string, len(m.profiles))
			for i, p := range m.profiles {
				names[i] = p.stem
			}
			m.noteAt("", 0, "%d profiles and none chosen: bundle.md includes the behaviors of all of them (%s), merged in that order, which no profile was; choose with --profile, or run one of bundles/PROFILE.md",
				len(m.profiles), strings.Join(names, ", "))
		}
		return nil
	}
	for _, want := range m.opts.Profiles {
		p := m.findProfile(want)
		if p == nil {
			var have []string
			for _, q := range m.profiles {
				have = append(have, q.stem)
			}
			if len(have) == 0 {
				return fmt.Errorf("%w: %s (the collection has no profile)", ErrUnknownProfile, want)
			}
			return fmt.Errorf("%w: %s (the collection's profiles: %s)", ErrUnknownProfile, want, strings.Join(have, ", "))
		}
		if !slices.Contains(m.root, p) {
			m.root = append(m.root, p)
		}
	}
	return nil
}

// findProfile finds a profile by its file name, NS:name, a path, or the
// name its front matter gives.
func (m *migration) findProfile(ref string) *profile {
	if coll, rest, ok := strings.Cut(ref, ":"); ok && m.aliases[coll] {
		ref = rest
	}
	ref = strings.TrimSuffix(strings.TrimPrefix(ref, "profiles/"), ".md")
	for _, p := range m.profiles {
		if p.stem == ref {
			return p
		}
	}
	for _, p := range m.profiles {
		if p.name == ref {
			return p
		}
	}
	return nil
}

// result returns the Result, files sorted by path.
func (m *migration) result() *Result {
	r := &Result{Name: m.ns, Collection: m.c.Name, Notes: m.notes}
	for _, p := range m.root {
		r.Root = append(r.Root, p.stem)
	}
	for _, f := range m.files {
		r.Files = append(r.Files, *f)
	}
	sort.Slice(r.Files, func(i, j int) bool { return diag.ComparePaths(r.Files[i].Path, r.Files[j].Path) < 0 })
	return r
}

// sortNotes orders the notes by path and line; notes of the collection
// as a whole come first.
func (m *migration) sortNotes() {
	sort.SliceStable(m.notes, func(i, j int) bool {
		a, b := m.notes[i], m.notes[j]
		if a.Path != b.Path {
			if a.Path == "" || b.Path == "" {
				return a.Path == ""
			}
			return diag.ComparePaths(a.Path, b.Path) < 0
		}
		return a.Line < b.Line
	})
}

// readFile reads a file under the base, saying in a note why it cannot.
func (m *migration) readFile(underBase string) ([]byte, bool) {
	src, err := syntax.ReadFile(m.abs(underBase), 0)
	if err != nil {
		m.note(underBase, 0, "not carried: %s", errText(err))
		return nil, false
	}
	return src, true
}

// errText is err's message without the path an os error repeats.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
