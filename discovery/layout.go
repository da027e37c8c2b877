package discovery

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// resourceDirs are the directory names that make a directory hold resources.
var resourceDirs = [...]string{"profiles", "agents", "context", "scenario-tools", "modules"}

// Shape is where a collection directory keeps its metadata and resources,
// found from directory listings alone (no file is read).
type Shape struct {
	// Dir is the collection directory as found in its root; RealDir is its
	// real path when Dir is a symbolic link, else Dir.
	Dir, RealDir string
	// Base is the directory that holds the resource directories.
	Base string
	// Pyproject is the metadata file: Dir/pyproject.toml, or the package
	// copy for a hybrid layout. Empty when there is none.
	Pyproject string
	// PackagePyproject is the package copy beside the root one, if any,
	// checked for a disagreeing name.
	PackagePyproject string
	Layout           Layout

	// named holds the resource directory names that Base holds, of any
	// type, when namedKnown: ListResources need not try to read the
	// others.
	named      resourceSet
	namedKnown bool
}

// IsCollection reports whether the shape is a collection: it has metadata.
func (s Shape) IsCollection() bool { return s.Pyproject != "" }

// HasResources reports whether any resource directory was found.
func (s Shape) HasResources() bool { return s.Layout != LayoutNone }

// Marked reports whether the directory of s, which no collections root
// holds, is a collection's by its layout, as the spec's markers say:
// resource directories (profiles/, agents/, context/, scenario-tools/,
// modules/) at its top (a flat or hybrid layout, or resources without
// metadata, which is an error to report), or a pyproject.toml at its top
// with resource directories in its package directory (nested) or whose
// text (pyproject) declares a [tool.amplifier…] table. A pyproject.toml
// alone is an ordinary Python project's, not collection metadata; a
// directory of collections is none either. Inside a collections root any
// directory with metadata is a collection: the root says so, and this
// test is not asked.
func (s Shape) Marked(pyproject []byte) bool {
	atTop := s.Pyproject != "" && filepath.Dir(s.Pyproject) == filepath.Clean(s.Dir)
	switch s.Layout {
	case LayoutFlat, LayoutHybrid:
		return true
	case LayoutNested:
		return atTop
	}
	return atTop && DeclaresCollection(pyproject)
}

// IsMarked reports whether dir, which no collections root holds, is a
// collection's by its layout (see Shape.Marked), reading its metadata
// only when its directories do not tell.
func IsMarked(dir string) bool {
	s, err := DetectShape(dir, "")
	if err != nil {
		return false
	}
	if s.HasResources() || !s.IsCollection() {
		return s.Marked(nil)
	}
	src, err := syntax.ReadFile(s.Pyproject, syntax.DefaultMaxFileSize)
	return err == nil && s.Marked(src)
}

// DeclaresCollection reports whether the text of a pyproject.toml has a
// [tool.amplifier] table or one below it ([tool.amplifier.collection]),
// as a table header at the start of a line.
func DeclaresCollection(pyproject []byte) bool { return HasTOMLTable(pyproject, "tool.amplifier") }

// HasTOMLTable reports whether the TOML text src has a header of the
// table name or of one below it ([name], [name.sub], [[name.sub]]) at the
// start of a line. It reads lines, not TOML: it answers for text that
// does not parse too.
func HasTOMLTable(src []byte, name string) bool {
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		line = bytes.TrimLeft(line, " \t")
		if bytes.HasPrefix(line, []byte("[[")) {
			line = line[1:] // an array of tables
		}
		if len(line) < len(name)+2 || line[0] != '[' || string(line[1:1+len(name)]) != name {
			continue
		}
		switch line[1+len(name)] {
		case '.', ']', ' ', '\t':
			return true
		}
	}
	return false
}

// DetectShape looks at dir and decides its layout: flat when a resource
// directory sits at its top, nested when resource directories sit only in
// a Python package directory below it (one holding __init__.py or
// pyproject.toml) (the one named after the project, else the
// only or first such directory), hybrid when the metadata sits only in that
// package directory while the resources sit at the top. packageName is the
// project name with "-" turned into "_" when already known ("" otherwise).
func DetectShape(dir, packageName string) (Shape, error) {
	realDir := dir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		realDir = real
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Shape{Dir: dir, RealDir: realDir, Layout: LayoutNone}, err
	}
	return detectShape(&statter{}, dir, realDir, packageName, entries), nil
}

// detectShape is DetectShape given the real path of dir and its entries,
// asking st what the entries cannot say. The types of the entries answer
// what a stat would, but for symbolic links, which are followed.
func detectShape(st *statter, dir, realDir, packageName string, entries []os.DirEntry) Shape {
	s := Shape{Dir: dir, RealDir: realDir, Layout: LayoutNone}
	clean := filepath.Clean(dir) // the entries' paths are joined to it
	rootPy := false
	var pkgs []string // subdirectories that may be the Python package
	flat := false
	var named resourceSet // the resource directory names dir holds, of any type
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == "pyproject.toml" && entryIsFile(st, dir, e):
			rootPy = true
		case isResourceDir(name):
			named |= resourceBit(name)
			if entryIsDir(st, dir, e) {
				flat = true
			}
		case e.IsDir() && !skipDir(name) && isPackage(st, joinName(clean, name)):
			pkgs = append(pkgs, name)
		}
	}
	// The package directory: the one named after the project, else the first
	// (in name order) that holds resources, else the first holding a
	// pyproject.toml copy.
	pkg, pkgHasRes := choosePackage(st, dir, pkgs, packageName)
	if rootPy {
		s.Pyproject = filepath.Join(dir, "pyproject.toml")
		if pkg != "" && st.isFile(filepath.Join(dir, pkg, "pyproject.toml")) {
			s.PackagePyproject = filepath.Join(dir, pkg, "pyproject.toml")
		}
	}
	switch {
	case flat:
		s.Base, s.Layout = dir, LayoutFlat
		if !rootPy && pkg != "" && st.isFile(filepath.Join(dir, pkg, "pyproject.toml")) {
			s.Pyproject, s.Layout = filepath.Join(dir, pkg, "pyproject.toml"), LayoutHybrid
		}
	case pkgHasRes:
		s.Base, s.Layout = filepath.Join(dir, pkg), LayoutNested
		if !rootPy && st.isFile(filepath.Join(dir, pkg, "pyproject.toml")) {
			s.Pyproject = filepath.Join(dir, pkg, "pyproject.toml")
		}
	default:
		s.Base = dir
	}
	if s.Base == dir {
		s.named, s.namedKnown = named, true
	}
	return s
}

// resourceSet is a set of the names in resourceDirs.
type resourceSet uint8

// resourceBit is the member of a resourceSet for a name in resourceDirs.
func resourceBit(name string) resourceSet {
	for i, r := range resourceDirs {
		if name == r {
			return 1 << i
		}
	}
	return 0
}

// entryIsFile reports whether entry e of dir is a regular file, following
// a symbolic link, as isFile would.
func entryIsFile(st *statter, dir string, e os.DirEntry) bool {
	switch t := e.Type(); {
	case t.IsRegular():
		return true
	case t&fs.ModeSymlink != 0:
		return st.isFile(filepath.Join(dir, e.Name()))
	}
	return false
}

// entryIsDir reports whether entry e of dir is a directory, following a
// symbolic link, as isDir would.
func entryIsDir(st *statter, dir string, e os.DirEntry) bool {
	switch t := e.Type(); {
	case t.IsDir():
		return true
	case t&fs.ModeSymlink != 0:
		return st.isDir(filepath.Join(dir, e.Name()))
	}
	return false
}

// choosePackage picks the package directory among candidates and reports
// whether it holds resource directories.
func choosePackage(st *statter, dir string, candidates []string, want string) (string, bool) {
	if want != "" {
		for _, c := range candidates {
			if c == want && holdsResources(st, filepath.Join(dir, c)) {
				return c, true
			}
		}
	}
	for _, c := range candidates {
		if holdsResources(st, filepath.Join(dir, c)) {
			return c, true
		}
	}
	if want != "" {
		for _, c := range candidates {
			if c == want && st.isFile(filepath.Join(dir, c, "pyproject.toml")) {
				return c, false
			}
		}
	}
	for _, c := range candidates {
		if st.isFile(filepath.Join(dir, c, "pyproject.toml")) {
			return c, false
		}
	}
	return "", false
}

// isPackage reports whether dir looks like a Python package: it holds an
// __init__.py or a pyproject.toml.
func isPackage(st *statter, dir string) bool {
	dir = filepath.Clean(dir)
	return st.isFile(joinName(dir, "__init__.py")) || st.isFile(joinName(dir, "pyproject.toml"))
}

func holdsResources(st *statter, dir string) bool {
	for _, r := range resourceDirs {
		if st.isDir(filepath.Join(dir, r)) {
			return true
		}
	}
	return false
}

func isResourceDir(name string) bool {
	for _, r := range resourceDirs {
		if name == r {
			return true
		}
	}
	return false
}

// skipDir reports directories that are never a collection's package:
// hidden ones, pip metadata, caches and virtual environments.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
		strings.HasSuffix(name, ".dist-info") || strings.HasSuffix(name, ".egg-info") ||
		name == "node_modules" || name == "venv"
}

// isFile follows symbolic links.
func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// IsEditorDropping reports names that are never resources: dotfiles and the
// temporary and backup files editors leave behind.
func IsEditorDropping(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") ||
		strings.HasSuffix(name, ".swp") || strings.HasSuffix(name, ".swx") ||
		strings.HasSuffix(name, "___jb_tmp___") || strings.HasSuffix(name, "___jb_old___") ||
		name == "4913"
}

// skipResourceDir reports the directories inside context/,
// scenario-tools/ and modules/ that hold no resources: dotfiles and editor
// droppings, as the rulings say, and __pycache__, Python's bytecode cache.
// Every other directory is walked, whatever its name (_private,
// node_modules, venv, *.egg-info): context is every *.md under context/.
func skipResourceDir(name string) bool {
	return IsEditorDropping(name) || name == "__pycache__"
}

// isReadme reports README files ("README.md" in any case).
func isReadme(name string) bool { return strings.EqualFold(name, "README.md") }

// ListResources lists the resources under base, sorted by kind and then
// component-wise by path. Problems met on the way (unreadable directories,
// looping links, scenario tools without pyproject.toml) come back as
// diagnostics; nothing is read but directory listings and stats.
func ListResources(base string) ([]Resource, []diag.Diagnostic) {
	res, diags, _ := listResources(base, ^resourceSet(0), os.ReadDir)
	return res, diags
}

// listResources is ListResources, trying to read only the resource
// directories named in dirs (those that base may hold), listing them with
// list. degraded says why, when a directory could not be listed.
func listResources(base string, dirs resourceSet, list func(string) ([]os.DirEntry, error)) (out []Resource, diags []diag.Diagnostic, degraded string) {
	// Every path below is base's and an entry's name joined: base is
	// cleaned once, not each of them.
	base = filepath.Clean(base)
	warn := func(code, path, msg string) {
		diags = append(diags, diag.Diagnostic{Code: code, Severity: diag.SeverityWarning, Path: path, Message: msg})
	}
	// readDir lists a resource directory; one that is absent holds nothing,
	// one that cannot be read is warned about.
	readDir := func(dir string) []os.DirEntry {
		if dirs&resourceBit(filepath.Base(dir)) == 0 {
			return nil // base holds no such name
		}
		entries, err := list(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			warn(diag.CodeUnreadable, dir, "cannot read directory: "+errText(err))
		}
		if listingFailed(err) {
			if degraded == "" {
				degraded = "cannot read directory " + dir + ": " + errText(err)
			}
		}
		return entries
	}
	add := func(k Kind, name, path string) {
		out = append(out, newResource(base, k, name, path))
	}
	for _, k := range []Kind{KindProfile, KindAgent} {
		dir := joinName(base, k.Dir())
		for _, e := range readDir(dir) {
			name := e.Name()
			if !strings.HasSuffix(name, ".md") || IsEditorDropping(name) || isReadme(name) {
				continue
			}
			p := joinName(dir, name)
			if ok, problem := regularFile(p, e); !ok {
				if problem != nil {
					diags = append(diags, *problem)
				}
				continue
			}
			add(k, strings.TrimSuffix(name, ".md"), p)
		}
	}
	ctxDir := joinName(base, KindContext.Dir())
	if entries := readDir(ctxDir); entries != nil {
		ds, why := walkContext(ctxDir, "", entries, add, list)
		diags = append(diags, ds...)
		if degraded == "" {
			degraded = why
		}
	}
	for _, k := range []Kind{KindTool, KindModule} {
		dir := joinName(base, k.Dir())
		for _, e := range readDir(dir) {
			name := e.Name()
			p := joinName(dir, name)
			if skipResourceDir(name) || !e.IsDir() {
				// Directory symlinks inside a collection are not followed.
				continue
			}
			switch k {
			case KindTool:
				if !isFile(filepath.Join(p, "pyproject.toml")) {
					warn(diag.CodeToolNoPyproject, p, "scenario tool "+name+" has no pyproject.toml")
				}
				add(k, name, p)
			case KindModule:
				if isFile(filepath.Join(p, "__init__.py")) || isFile(filepath.Join(p, "pyproject.toml")) {
					add(k, name, p)
				}
			}
		}
	}
	return out, diags, degraded
}

// walkContext lists context/**/*.md depth-first in component order,
// listing subdirectories with list. Directory symlinks are not followed,
// so a loop cannot form. degraded says why, when a directory could not be
// listed. dir is clean.
func walkContext(dir, rel string, entries []os.DirEntry, add func(Kind, string, string), list func(string) ([]os.DirEntry, error)) (diags []diag.Diagnostic, degraded string) {
	for _, e := range entries {
		name := e.Name()
		if IsEditorDropping(name) {
			continue
		}
		p := joinName(dir, name)
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		if e.IsDir() {
			if skipResourceDir(name) {
				continue
			}
			sub, err := list(p)
			if err != nil {
				diags = append(diags, diag.Diagnostic{Code: diag.CodeUnreadable, Severity: diag.SeverityWarning, Path: p,
					Message: "cannot read directory: " + errText(err)})
				if listingFailed(err) && degraded == "" {
					degraded = "cannot read directory " + p + ": " + errText(err)
				}
				continue
			}
			ds, why := walkContext(p, r, sub, add, list)
			diags = append(diags, ds...)
			if degraded == "" {
				degraded = why
			}
			continue
		}
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		ok, problem := regularFile(p, e)
		if problem != nil {
			diags = append(diags, *problem)
		}
		if ok {
			add(KindContext, r, p)
		}
	}
	return diags, degraded
}

// joinName is filepath.Join(dir, name) for a clean dir and the name of
// one of its entries (no separator in it, not "." or ".."), without
// cleaning the path made again.
func joinName(dir, name string) string {
	if rest := dir[len(filepath.VolumeName(dir)):]; rest == "" || rest == "." || os.IsPathSeparator(rest[len(rest)-1]) {
		return filepath.Join(dir, name) // "", ".", a root or a volume
	}
	return dir + string(filepath.Separator) + name
}

// regularFile reports whether the entry is a regular file, following a
// symbolic link to a file. A directory, or a link to one, is skipped
// quietly (such links are not followed inside a collection); a dangling or
// looping link is skipped with a warning, and so is a FIFO, socket or
// device, or a link to one, which is never opened.
func regularFile(p string, e os.DirEntry) (bool, *diag.Diagnostic) {
	mode := e.Type()
	if mode.IsRegular() {
		return true, nil
	}
	if mode&fs.ModeSymlink != 0 {
		fi, err := os.Stat(p)
		if err != nil {
			return false, &diag.Diagnostic{Code: diag.CodeSymlinkLoop, Severity: diag.SeverityWarning, Path: p,
				Message: "symbolic link skipped: " + errText(err)}
		}
		mode = fi.Mode()
	}
	if mode.IsRegular() || mode.IsDir() {
		return mode.IsRegular(), nil
	}
	return false, &diag.Diagnostic{Code: diag.CodeNotRegular, Severity: diag.SeverityWarning, Path: p,
		Message: "not read: " + syntax.ModeName(mode)}
}

// errText is err's message without the path os errors repeat.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// newResource makes the Resource of kind k called name at path below base,
// with its Rel and Name cut from its Path where the platform allows, so
// that a resource holds one string, not three.
func newResource(base string, k Kind, name, path string) Resource {
	r := Resource{Kind: k, Name: name, Path: path}
	if filepath.Separator == '/' && len(path) > len(base)+1 && path[:len(base)] == base && path[len(base)] == '/' {
		r.Rel = path[len(base)+1:]
	} else {
		rel, _ := filepath.Rel(base, path)
		r.Rel = filepath.ToSlash(rel)
	}
	if i := strings.LastIndex(r.Rel, name); i >= 0 && strings.HasSuffix(r.Rel[:i+len(name)], name) {
		r.Name = r.Rel[i : i+len(name)]
	}
	return r
}
