package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Version is the newest lock file format version, the one the
// Amplifier CLI writes. Files of version "1.0" are read too, and upgraded
// on the next write.
const Version = "1.1"

// lockVersions are the lock file versions Read accepts.
var lockVersions = [...]string{"1.0", "1.1"}

// ErrCorrupt is returned (wrapped) when a lock file is not JSON, is not
// shaped like a lock file, or has a version this package does not know.
// Such a file is reported and never overwritten.
var ErrCorrupt = errors.New("discovery: corrupt lock file")

// File is the content of a collections.lock file.
type File struct {
	// Version is the format version of the file as read ("1.0" or "1.1"),
	// or Version for a lock file that does not exist yet.
	Version string `json:"version"`
	// Collections maps a collection name to its entry. An entry that lacks
	// fields (and has a lock/schema diagnostic) holds those that parsed.
	Collections map[string]Entry `json:"collections"`

	raw    map[string]json.RawMessage // entries as read
	extra  map[string]json.RawMessage // top-level keys other than version and collections
	exists bool                       // read from a file that exists
	lines  *syntax.LineIndex          // of the file read, for positions
	spans  map[string]jsonSpan        // positions of keys and values in the file read
}

// Entry is one installed collection in a lock file.
type Entry struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Commit is the git commit SHA, or nil when the source is not git.
	Commit *string `json:"commit"`
	// Path is the absolute directory the collection is installed in.
	Path string `json:"path"`
	// InstalledAt is an ISO 8601 timestamp.
	InstalledAt string `json:"installed_at"`
	// Modules maps a module name to its registration.
	Modules map[string]Module `json:"modules"`
}

// Module is one module registration of a lock entry.
type Module struct {
	// Type is tool, hook, provider, orchestrator or context (see
	// ModuleType).
	Type string `json:"type"`
	// Path is slash-separated and relative to the collection's directory.
	Path string `json:"path"`
}

// Installed is a collection found installed in the root a lock
// file belongs to, as Check compares them.
type Installed struct {
	// Name is the collection's name (its metadata name, or its directory
	// name when it has none).
	Name string
	// Dir is the absolute directory of the collection.
	Dir string
}

// Read reads the lock file at path. A file that does not exist is an
// empty lock of version Version and no error. A lock that is not a
// regular file, is larger than DefaultMaxFileSize or cannot be read is not
// parsed: the error comes with the diagnostic that reports it. See
// Parse for the rest.
func Read(path string) (*File, []diag.Diagnostic, error) {
	src, err := syntax.ReadFile(path, syntax.DefaultMaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Version: Version, Collections: map[string]Entry{}}, nil, nil
	}
	if err != nil {
		return nil, []diag.Diagnostic{syntax.ReadProblem(path, err)}, fmt.Errorf("read lock %s: %w", path, err)
	}
	return Parse(path, src)
}

// Parse parses the bytes of a lock file; path names it in diagnostics
// and errors.
//
// A file that is not JSON, is not an object with a string "version" of
// "1.0" or "1.1" and an object "collections", yields a nil File, one
// lock/corrupt diagnostic at the offending position, and an error that
// matches ErrCorrupt. Entries that are not objects, lack a required
// field or have one of the wrong type get lock/schema diagnostics (with the
// entry's name as collection) but do not make the file corrupt; "modules"
// is required from version 1.1 on.
func Parse(path string, src []byte) (*File, []diag.Diagnostic, error) {
	p := &lockParser{path: path, lines: syntax.NewLineIndex(src)}
	l := p.parse(src)
	if p.corrupt != nil {
		d := *p.corrupt
		err := fmt.Errorf("parse lock %s:%d:%d: %s: %w", path,
			d.Range.Start.Line+1, d.Range.Start.Character+1, p.why, ErrCorrupt)
		return nil, []diag.Diagnostic{d}, err
	}
	p.diags = append(p.diags, p.limit.Summaries(path, "")...)
	diag.Sort(p.diags)
	return l, p.diags, nil
}

// lockParser holds the state of one Parse call.
type lockParser struct {
	path    string
	lines   *syntax.LineIndex
	spans   map[string]jsonSpan
	diags   []diag.Diagnostic
	limit   diag.Limit
	corrupt *diag.Diagnostic // set when the file is corrupt
	why     string           // what makes it corrupt
}

func (p *lockParser) fail(r diag.Range, format string, args ...any) {
	p.why = fmt.Sprintf(format, args...)
	p.corrupt = &diag.Diagnostic{Code: diag.CodeLockCorrupt, Severity: diag.SeverityError, Path: p.path, Range: r,
		Message: "Corrupt lock file: " + p.why}
}

func (p *lockParser) schema(collection string, r diag.Range, format string, args ...any) {
	if !p.limit.Allow(diag.CodeLockSchema, diag.SeverityError, r) {
		return
	}
	p.diags = append(p.diags, diag.Diagnostic{Code: diag.CodeLockSchema, Severity: diag.SeverityError, Path: p.path, Range: r,
		Message: fmt.Sprintf(format, args...), Collection: collection})
}

// keyRange returns the Range of the key at path (see jsonPath), or of the
// nearest enclosing key, or the start of the file.
func (p *lockParser) keyRange(parts ...string) diag.Range {
	return jsonKeyRange(p.lines, p.spans, parts)
}

// rootRange returns the Range of the brace that opens the document.
func (p *lockParser) rootRange() diag.Range {
	s := p.spans[jsonPath()]
	return p.lines.Range(s.valStart, s.valStart+1)
}

// valueRange returns the Range of the value at path, falling back like
// keyRange.
func (p *lockParser) valueRange(parts ...string) diag.Range {
	if s, ok := p.spans[jsonPath(parts...)]; ok {
		return p.lines.Range(s.valStart, s.valEnd)
	}
	return p.keyRange(parts...)
}

func (p *lockParser) parse(src []byte) *File {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(src, &top); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			off := syntax.RuneBoundary(src, int(min(max(syn.Offset-1, 0), int64(len(src)))))
			_, size := utf8.DecodeRune(src[off:])
			end := off + size
			if end > off && (src[off] == '\n' || src[off] == '\r') {
				end = off // stopped at a line end: point at it, not across it
			}
			p.fail(p.lines.Range(off, end), "not valid JSON: %s", syn.Error())
		} else {
			p.fail(p.lines.Range(0, min(1, len(src))), "not a JSON object")
		}
		return nil
	}
	if top == nil {
		p.fail(p.lines.Range(0, min(4, len(src))), "not a JSON object")
		return nil
	}
	p.spans = lockJSONSpans(src)

	l := &File{
		Collections: map[string]Entry{},
		raw:         map[string]json.RawMessage{},
		exists:      true,
		lines:       p.lines,
		spans:       p.spans,
	}
	rawVersion, ok := top["version"]
	if !ok {
		p.fail(p.rootRange(), "no \"version\" field")
		return nil
	}
	if jsonTypeName(rawVersion) != "a string" || json.Unmarshal(rawVersion, &l.Version) != nil {
		p.fail(p.valueRange("version"), "\"version\" must be a string, not %s", jsonTypeName(rawVersion))
		return nil
	}
	if !slices.Contains(lockVersions[:], l.Version) {
		p.fail(p.valueRange("version"), "unsupported version %q (known: %s)", l.Version, strings.Join(lockVersions[:], ", "))
		return nil
	}
	rawColls, ok := top["collections"]
	if !ok {
		p.fail(p.rootRange(), "no \"collections\" field")
		return nil
	}
	if jsonTypeName(rawColls) != "an object" {
		p.fail(p.valueRange("collections"), "\"collections\" must be an object, not %s", jsonTypeName(rawColls))
		return nil
	}
	if err := json.Unmarshal(rawColls, &l.raw); err != nil {
		p.fail(p.valueRange("collections"), "\"collections\" could not be read as an object of entries")
		return nil
	}
	for k, v := range top {
		if k != "version" && k != "collections" {
			if l.extra == nil {
				l.extra = map[string]json.RawMessage{}
			}
			l.extra[k] = v
		}
	}
	// In name order: the diagnostics kept within the limit are the same
	// every time.
	for _, name := range slices.Sorted(maps.Keys(l.raw)) {
		if e, ok := p.entry(l.Version, name, l.raw[name]); ok {
			l.Collections[name] = e
		}
	}
	return l
}

// entry parses the lock entry called name. It reports false when the entry
// is not an object at all.
func (p *lockParser) entry(version, name string, raw json.RawMessage) (Entry, bool) {
	var e Entry
	var fields map[string]json.RawMessage
	if jsonTypeName(raw) != "an object" || json.Unmarshal(raw, &fields) != nil {
		p.schema(name, p.valueRange("collections", name),
			"lock entry %q must be an object, not %s", name, jsonTypeName(raw))
		return e, false
	}
	str := func(field string, dst *string, nullable bool) {
		v, ok := fields[field]
		if !ok {
			p.schema(name, p.keyRange("collections", name), "lock entry %q lacks %q", name, field)
			return
		}
		if nullable && jsonTypeName(v) == "null" {
			return
		}
		if json.Unmarshal(v, dst) != nil || jsonTypeName(v) != "a string" {
			want := "a string"
			if nullable {
				want = "a string or null"
			}
			p.schema(name, p.valueRange("collections", name, field),
				"%q of lock entry %q must be %s, not %s", field, name, want, jsonTypeName(v))
		}
	}
	str("name", &e.Name, false)
	str("source", &e.Source, false)
	var commit string
	str("commit", &commit, true)
	if v := fields["commit"]; jsonTypeName(v) == "a string" {
		e.Commit = &commit
	}
	str("path", &e.Path, false)
	str("installed_at", &e.InstalledAt, false)
	if e.Name != "" && e.Name != name {
		p.schema(name, p.valueRange("collections", name, "name"),
			"lock entry %q has name %q; the two must match", name, e.Name)
	}

	e.Modules = map[string]Module{}
	rawMods, ok := fields["modules"]
	switch {
	case !ok:
		if version != "1.0" {
			p.schema(name, p.keyRange("collections", name), "lock entry %q lacks %q", name, "modules")
		}
		return e, true
	case jsonTypeName(rawMods) != "an object":
		p.schema(name, p.valueRange("collections", name, "modules"),
			"\"modules\" of lock entry %q must be an object, not %s", name, jsonTypeName(rawMods))
		return e, true
	}
	var mods map[string]json.RawMessage
	if json.Unmarshal(rawMods, &mods) != nil {
		return e, true
	}
	for mod, rawMod := range mods {
		var mf map[string]json.RawMessage
		if jsonTypeName(rawMod) != "an object" || json.Unmarshal(rawMod, &mf) != nil {
			p.schema(name, p.valueRange("collections", name, "modules", mod),
				"module %q of lock entry %q must be an object, not %s", mod, name, jsonTypeName(rawMod))
			continue
		}
		var m Module
		ok := true
		for _, f := range [...]struct {
			name string
			dst  *string
		}{{"type", &m.Type}, {"path", &m.Path}} {
			v, present := mf[f.name]
			switch {
			case !present:
				p.schema(name, p.keyRange("collections", name, "modules", mod),
					"module %q of lock entry %q lacks %q", mod, name, f.name)
				ok = false
			case jsonTypeName(v) != "a string" || json.Unmarshal(v, f.dst) != nil:
				p.schema(name, p.valueRange("collections", name, "modules", mod, f.name),
					"%q of module %q of lock entry %q must be a string, not %s", f.name, mod, name, jsonTypeName(v))
				ok = false
			}
		}
		if ok {
			e.Modules[mod] = m
		}
	}
	return e, true
}

// jsonTypeName names the JSON type of a raw value, with an article.
func jsonTypeName(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// Check compares the lock file at lockPath, as read into l, with the
// file system and with the collections installed in its root:
//
//   - lock/path-missing (warning): an entry's path no longer exists (a
//     relative path is taken from the lock file's directory);
//   - lock/module-escapes (error): a module path is absolute or leaves the
//     collection once cleaned (".."), or it exists and its real path, all
//     symbolic links resolved, is outside the collection's real directory;
//   - lock/not-installed (warning): an entry whose path exists, but which is
//     not among installed by name or directory;
//   - lock/not-locked (warning): a collection of installed that no entry
//     names or points at. A lock file that does not exist reports none:
//     such a root is managed by hand.
//
// Diagnostics point into the lock file (at the entry, the module path, or
// the "collections" key) when l was read from it, and carry the
// collection's name.
func Check(lockPath string, l *File, installed []Installed) []diag.Diagnostic {
	if l == nil {
		return nil
	}
	var diags []diag.Diagnostic
	var limit diag.Limit
	report := func(code string, sev diag.Severity, r diag.Range, coll, format string, args ...any) {
		if !limit.Allow(code, sev, r) {
			return
		}
		diags = append(diags, diag.Diagnostic{Code: code, Severity: sev, Path: lockPath, Range: r,
			Message: fmt.Sprintf(format, args...), Collection: coll})
	}
	byName := map[string]bool{}
	byDir := map[string]bool{}
	for _, c := range installed {
		byName[c.Name] = true
		byDir[filepath.Clean(c.Dir)] = true
	}
	lockedDirs := map[string]bool{}

	names := make([]string, 0, len(l.Collections))
	for name := range l.Collections {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		e := l.Collections[name]
		entryRange := l.rangeOf(false, "collections", name)
		dir := e.Path
		if dir != "" && !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(lockPath), dir)
		}
		if dir != "" {
			dir = filepath.Clean(dir)
			lockedDirs[dir] = true
		}
		missing := false
		if dir != "" {
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				missing = true
				report(diag.CodeLockPathMissing, diag.SeverityWarning, entryRange, name,
					"Path %s of locked collection %s no longer exists", e.Path, name)
			}
		}
		mods := make([]string, 0, len(e.Modules))
		for mod := range e.Modules {
			mods = append(mods, mod)
		}
		slices.Sort(mods)
		realDir := ""
		if dir != "" && !missing {
			realDir, _ = filepath.EvalSymlinks(dir)
		}
		for _, mod := range mods {
			p := e.Modules[mod].Path
			r := l.rangeOf(true, "collections", name, "modules", mod, "path")
			if lockModuleEscapes(p) {
				report(diag.CodeLockModuleEscapes, diag.SeverityError, r, name,
					"Module %s of %s has path %q, which leaves the collection", mod, name, p)
			} else if real, ok := linkedOutside(realDir, dir, p); ok {
				report(diag.CodeLockModuleEscapes, diag.SeverityError, r, name,
					"Module %s of %s has path %q, which leads through a symbolic link to %s, outside the collection", mod, name, p, real)
			}
		}
		if !missing && !byName[name] && !(dir != "" && byDir[dir]) {
			report(diag.CodeLockNotInstalled, diag.SeverityWarning, entryRange, name,
				"Collection %s is locked but not installed in this root", name)
		}
	}
	if l.exists {
		for _, c := range installed {
			if _, ok := l.Collections[c.Name]; ok || lockedDirs[filepath.Clean(c.Dir)] {
				continue
			}
			report(diag.CodeLockNotLocked, diag.SeverityWarning, l.rangeOf(false, "collections"), c.Name,
				"Collection %s is installed at %s but not in the lock file", c.Name, c.Dir)
		}
	}
	diags = append(diags, limit.Summaries(lockPath, "")...)
	diag.Sort(diags)
	return diags
}

// rangeOf returns the Range of the key (or, with value set, the value) at
// path in the file l was read from, falling back to enclosing keys and then
// to the start of the file.
func (l *File) rangeOf(value bool, parts ...string) diag.Range {
	if l.lines == nil {
		return diag.Range{}
	}
	if s, ok := l.spans[jsonPath(parts...)]; ok && value {
		return l.lines.Range(s.valStart, s.valEnd)
	}
	return jsonKeyRange(l.lines, l.spans, parts)
}

// linkedOutside resolves the module path p, relative to the collection
// directory dir whose real path is realDir, through every symbolic link on
// the way, and reports the real path when it is outside realDir. A path
// that does not exist, or a collection directory that cannot be resolved,
// reports nothing: only what is there can be said to leave.
func linkedOutside(realDir, dir, p string) (string, bool) {
	if realDir == "" || p == "" {
		return "", false
	}
	// Not filepath.Join: cleaning would drop a ".." after a link before
	// the link is followed, where the system goes up from its target.
	real, err := filepath.EvalSymlinks(dir + string(filepath.Separator) + filepath.FromSlash(p))
	if err != nil || within(real, realDir) {
		return "", false
	}
	return real, true
}

// lockModuleEscapes reports whether a module path of a lock entry is
// absolute or leaves the collection directory once cleaned. Both slash and
// backslash count as separators.
func lockModuleEscapes(p string) bool {
	if p == "" {
		return false
	}
	s := strings.ReplaceAll(p, `\`, "/")
	if strings.HasPrefix(s, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "" {
		return true
	}
	if len(s) >= 2 && s[1] == ':' && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return true // a Windows drive letter
	}
	c := path.Clean(s)
	return c == ".." || strings.HasPrefix(c, "../")
}

// jsonSpan is where a member of a JSON document sits, as byte offsets: its
// key (empty for array elements and the root) and its value.
type jsonSpan struct {
	keyStart, keyEnd int
	valStart, valEnd int
}

// jsonPath joins the keys leading to a value into a span map key; array
// elements are named by their index in decimal. The root is jsonPath().
func jsonPath(parts ...string) string {
	return "$" + strings.Join(append([]string{""}, parts...), "\x00")
}

// jsonKeyRange returns the Range of the key at path, or of the nearest
// enclosing key, or the first byte of the text.
func jsonKeyRange(lines *syntax.LineIndex, spans map[string]jsonSpan, parts []string) diag.Range {
	for n := len(parts); n > 0; n-- {
		if s, ok := spans[jsonPath(parts[:n]...)]; ok && s.keyEnd > s.keyStart {
			return lines.Range(s.keyStart, s.keyEnd)
		}
	}
	return diag.Range{}
}

// maxLockSpanDepth is how deep lockJSONSpans records members: a module
// field (collections, entry, modules, module, field) is five levels down.
// Nothing deeper is ever pointed at, and recording it would cost time and
// memory quadratic in the nesting.
const maxLockSpanDepth = 5

// lockJSONSpans walks a JSON text that json.Unmarshal accepted and records
// the span of every member and element down to maxLockSpanDepth levels
// below the root, in one pass. On text that is not valid JSON it stops
// quietly where it cannot go on.
func lockJSONSpans(src []byte) map[string]jsonSpan {
	s := &jsonSpanScanner{src: src, spans: map[string]jsonSpan{}}
	s.space()
	s.value([]string{}, 0, 0)
	return s.spans
}

// jsonSpanScanner holds the state of one lockJSONSpans call.
type jsonSpanScanner struct {
	src   []byte
	pos   int
	spans map[string]jsonSpan
}

// peek returns the byte at the current position, or 0 at the end.
func (s *jsonSpanScanner) peek() byte {
	if s.pos < len(s.src) {
		return s.src[s.pos]
	}
	return 0
}

// space skips JSON white space.
func (s *jsonSpanScanner) space() {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

// str skips the string that starts at the current position.
func (s *jsonSpanScanner) str() {
	for s.pos++; s.pos < len(s.src); s.pos++ {
		switch s.src[s.pos] {
		case '\\':
			s.pos++
		case '"':
			s.pos++
			return
		}
	}
	s.pos = len(s.src)
}

// value reads the value at the current position, whose path is parts and
// whose key spans ks:ke (empty for an element or the root), and records
// the spans of it and of what it holds while parts is not too long.
func (s *jsonSpanScanner) value(parts []string, ks, ke int) {
	if len(parts) > maxLockSpanDepth {
		s.skip()
		return
	}
	start := s.pos
	switch s.peek() {
	case '{':
		s.pos++
		s.space()
		if s.peek() == '}' {
			s.pos++
			break
		}
		for {
			if s.peek() != '"' {
				return
			}
			kStart := s.pos
			s.str()
			kEnd := s.pos
			s.space()
			if s.peek() != ':' {
				return
			}
			s.pos++
			s.space()
			s.value(append(parts[:len(parts):len(parts)], jsonKey(s.src[kStart:kEnd])), kStart, kEnd)
			more, ok := s.next('}')
			if !ok {
				return
			}
			if !more {
				break
			}
		}
	case '[':
		s.pos++
		s.space()
		if s.peek() == ']' {
			s.pos++
			break
		}
		for i := 0; ; i++ {
			s.value(append(parts[:len(parts):len(parts)], strconv.Itoa(i)), 0, 0)
			more, ok := s.next(']')
			if !ok {
				return
			}
			if !more {
				break
			}
		}
	case '"':
		s.str()
	case 0:
		return
	default:
		s.scalar()
	}
	s.spans[jsonPath(parts...)] = jsonSpan{ks, ke, start, s.pos}
}

// next moves past the comma (and the blanks after it) or the closing
// bracket that follows a member or element, and reports which it was:
// more is set after a comma; ok is false when neither follows.
func (s *jsonSpanScanner) next(closing byte) (more, ok bool) {
	s.space()
	switch s.peek() {
	case ',':
		s.pos++
		s.space()
		return true, true
	case closing:
		s.pos++
		return false, true
	}
	return false, false
}

// scalar skips a number, true, false or null.
func (s *jsonSpanScanner) scalar() {
	for s.pos < len(s.src) && strings.IndexByte(",:]}[{\" \t\r\n", s.src[s.pos]) < 0 {
		s.pos++
	}
}

// skip skips the value at the current position, however deeply nested,
// without recording anything and without recursion.
func (s *jsonSpanScanner) skip() {
	depth := 0
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; c {
		case '"':
			s.str()
		case '{', '[':
			depth++
			s.pos++
		case '}', ']':
			if depth == 0 {
				return // the end of the enclosing value: not JSON
			}
			depth--
			s.pos++
		default:
			if depth == 0 {
				s.scalar()
				return
			}
			s.pos++
		}
		if depth == 0 {
			return
		}
	}
}

// jsonKey returns the text of a JSON key, as json.Unmarshal decodes it
// (escapes resolved, invalid UTF-8 replaced).
func jsonKey(raw []byte) string {
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1])
	}
	var k string
	if json.Unmarshal(raw, &k) != nil {
		return string(raw)
	}
	return k
}

// Exists reports whether the lock was read from a file; a lock file that
// does not exist reads as an empty lock that does not.
func (l *File) Exists() bool { return l != nil && l.exists }

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
