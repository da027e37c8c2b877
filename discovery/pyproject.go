package discovery

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Usable reports whether a collection whose pyproject.toml has the Facts
// f can be used: resolved by its name and checked. Only what keeps the
// directory from naming a collection makes it unusable: the file could not
// be read, is not TOML, or has no [project] name (none, an empty one, one
// that is not a string, or a [project] that is not a table). Whatever
// else the file gets wrong (the version, the description, the form of the
// name, urls, author, capabilities, requires and its constraints) is one
// diagnostic on its line, and the collection is used as usual, so that
// one mistake does not turn every reference into the collection into an
// error of its own. f may be brief.
func Usable(f *Facts) bool {
	return f != nil && f.Metadata != nil && f.Metadata.Name != ""
}

// PyprojectProblem says why a collection whose pyproject.toml has the
// full Facts f cannot be used (see Usable), in the words of the
// diagnostic that says it; "" when it can be.
func PyprojectProblem(f *Facts) string {
	if Usable(f) {
		return ""
	}
	if f == nil {
		return "cannot read pyproject.toml"
	}
	first := ""
	for _, d := range f.Diagnostics {
		if f.Metadata == nil || d.Code == diag.CodeTOMLSyntax ||
			d.Code == diag.CodeMissingField && d.Message == missingFieldMessage("name") ||
			d.Code == diag.CodeMetadataType && (strings.HasPrefix(d.Message, wrongTypePrefix("project")) || strings.HasPrefix(d.Message, wrongTypePrefix("project.name"))) {
			return d.Message
		}
		if first == "" && d.Severity == diag.SeverityError {
			first = d.Message
		}
	}
	if first == "" {
		first = missingFieldMessage("name")
	}
	return first
}

// ParsePyproject reads the metadata of a collection from the bytes of its
// pyproject.toml; path names the file in diagnostics.
//
// The Metadata is never nil: it holds every field that parsed, even when
// others are missing or invalid, so callers can still show the name. Its
// Requires lists the entries of [tool.amplifier.collection.requires] in file
// order, each with the Range of its value; it is nil when the table is
// absent and empty (not nil) when the table is present but empty. An entry
// whose constraint does not parse is listed too, and has a
// metadata/invalid-constraint diagnostic.
//
// Diagnostics:
//
//   - metadata/toml-syntax: the file is not TOML, at the position the TOML
//     parser reports, or it has a key of more than syntax.MaxTOMLKeyParts dotted
//     parts or arrays and inline tables nested deeper than
//     syntax.MaxTOMLScanDepth (not decoded: the decoder's time grows with their
//     square); nothing else is checked.
//   - metadata/missing-field: `Required field missing: <field>` for a
//     missing or empty [project] name, version or description, on the
//     [project] header (line 1 without one), or on an empty value.
//   - metadata/invalid-version: `Invalid version format: "0.1"; want
//     MAJOR.MINOR.PATCH` unless the version is X.Y.Z (digits only; no
//     pre-release or build suffix), with the version it most likely means.
//   - metadata/invalid-name: the name is not lowercase letters, digits and
//     single inner hyphens; the message says what is wrong.
//   - metadata/wrong-type: a field of [project], [project.urls] or
//     [tool.amplifier.collection] has the wrong type (`Wrong type for
//     project.name: an integer (1); want a string`).
//   - metadata/invalid-constraint: a requires value is not a constraint
//     ParseConstraint accepts.
//   - metadata/unknown-key (info): a key of [tool.amplifier.collection]
//     other than author, capabilities, requires and the undocumented but
//     common modules, agents and dependencies.
//
// Diagnostics carry path but no collection name.
func ParsePyproject(path string, src []byte) (*Metadata, []diag.Diagnostic) {
	p := &pyprojectParser{path: path, src: src, lines: syntax.NewLineIndex(src), meta: &Metadata{}}
	p.parse()
	return p.meta, append(p.diags, p.limit.Summaries(path, "")...)
}

// pyprojectParser holds the state of one ParsePyproject call.
type pyprojectParser struct {
	path  string
	src   []byte
	lines *syntax.LineIndex
	// spans are the positions of the keys, scanned when one is first
	// needed (see span), or before the decoder reads a text the fast
	// path does not.
	spans   syntax.TOMLSpans
	scanned bool
	keys    []toml.Key // every key and table header, in the order of the file
	meta    *Metadata
	diags   []diag.Diagnostic
	limit   diag.Limit
}

func (p *pyprojectParser) report(code string, sev diag.Severity, r diag.Range, format string, args ...any) {
	if !p.limit.Allow(code, sev, r) {
		return
	}
	p.diags = append(p.diags, diag.Diagnostic{
		Code:     code,
		Severity: sev,
		Path:     p.path,
		Range:    r,
		Message:  fmt.Sprintf(format, args...),
	})
}

func (p *pyprojectParser) parse() {
	// The fast path reads only texts within the scanner's bounds.
	doc, keys, ok := syntax.DecodeTOMLFast(p.src)
	if !ok {
		// The shape is bounded before the decoder sees the text (see
		// syntax.CheckTOMLShape): it takes time quadratic in the parts of
		// a dotted key and in the nesting of inline tables. The scanner
		// holds to the same bounds.
		var shape *syntax.TOMLShapeError
		if errors.As(syntax.CheckTOMLShape(p.src), &shape) {
			p.report(diag.CodeTOMLSyntax, diag.SeverityError, shape.Range, "TOML not read: %s", shape.Why)
			return
		}
		spans, deep := syntax.ScanTOMLSpans(p.src)
		if deep != nil {
			p.report(diag.CodeTOMLSyntax, diag.SeverityError, p.lines.Range(deep.Off, deep.Off+1), "TOML not read: %s", deep.Why)
			return
		}
		p.spans, p.scanned = spans, true
		var (
			md  toml.MetaData
			err error
		)
		md, err = syntax.DecodeTOML(p.src, &doc)
		if err != nil {
			p.report(diag.CodeTOMLSyntax, diag.SeverityError, p.errorRange(err), "Invalid TOML: %s", syntax.TOMLErrorMessage(err))
			return
		}
		keys = md.Keys()
	}
	p.keys = keys
	p.checkProject(doc)
	p.checkCollection(doc)
	diag.Sort(p.diags)
}

// errorRange converts the position of a TOML parse error into a Range. The
// decoder counts byte offsets after a byte order mark, which it drops.
func (p *pyprojectParser) errorRange(err error) diag.Range {
	pe, ok := err.(toml.ParseError)
	if !ok {
		return p.lines.LineRange(0)
	}
	bom := 0
	switch {
	case bytes.HasPrefix(p.src, []byte("\uFEFF")):
		bom = 3
	case bytes.HasPrefix(p.src, []byte("\xff\xfe")), bytes.HasPrefix(p.src, []byte("\xfe\xff")):
		bom = 2
	}
	off := pe.Position.Start + bom
	line := pe.Position.Line - 1
	if off < bom || off > len(p.src) || p.lines.Position(off).Line != line {
		// The offset does not agree with the line: trust the line.
		return p.lines.LineRange(line)
	}
	end := min(off+max(pe.Position.Len, 0), p.lines.LineEnd(line))
	off, end = syntax.RuneBoundary(p.src, off), syntax.RuneBoundary(p.src, max(end, off))
	// The lexer's span may open with the blanks before the offending text.
	for off+1 < end && (p.src[off] == ' ' || p.src[off] == '\t') {
		off++
	}
	return p.lines.Range(off, end)
}

// span returns the span of the key at path, scanning the text the first
// time one is asked for.
func (p *pyprojectParser) span(path []string) (syntax.TOMLSpan, bool) {
	if !p.scanned {
		p.spans, _ = syntax.ScanTOMLSpans(p.src)
		p.scanned = true
	}
	s, ok := p.spans[syntax.TOMLPath(path)]
	return s, ok
}

// valueRange returns the Range of the value at path, falling back to the
// nearest enclosing key or table that has a position, then to line 1.
func (p *pyprojectParser) valueRange(path ...string) diag.Range {
	for n := len(path); n > 0; n-- {
		if s, ok := p.span(path[:n]); ok {
			if n == len(path) {
				return p.lines.Range(s.ValStart, s.ValEnd)
			}
			return p.lines.Range(s.KeyStart, s.KeyEnd)
		}
	}
	return p.lines.LineRange(0)
}

// keyRange returns the Range of the key (or table header) at path, with
// the same fallbacks as valueRange.
func (p *pyprojectParser) keyRange(path ...string) diag.Range {
	for n := len(path); n > 0; n-- {
		if s, ok := p.span(path[:n]); ok {
			return p.lines.Range(s.KeyStart, s.KeyEnd)
		}
	}
	return p.lines.LineRange(0)
}

// tableRange returns the Range of the header that opens the table at path,
// or of the first key that defines it, or line 1.
func (p *pyprojectParser) tableRange(path ...string) diag.Range {
	if s, ok := p.span(path); ok {
		return p.lines.Range(s.KeyStart, s.KeyEnd)
	}
	return p.lines.LineRange(0)
}

func (p *pyprojectParser) checkProject(doc map[string]any) {
	raw, ok := doc["project"]
	if !ok {
		for _, f := range [...]string{"name", "version", "description"} {
			p.report(diag.CodeMissingField, diag.SeverityError, p.lines.LineRange(0), "%s", missingFieldMessage(f))
		}
		return
	}
	project, ok := raw.(map[string]any)
	if !ok {
		p.report(diag.CodeMetadataType, diag.SeverityError, p.valueRange("project"), "%s", wrongTypeMessage("project", raw, "a table"))
		return
	}
	p.meta.Name = p.requiredString(project, "name")
	if p.meta.Name != "" {
		if why := schema.CollectionNameProblem(p.meta.Name); why != "" {
			msg := fmt.Sprintf("Invalid name format: %q %s; want lowercase letters, digits and single hyphens", p.meta.Name, why)
			if fix := schema.SuggestCollectionName(p.meta.Name); fix != "" {
				msg += fmt.Sprintf(", such as %q", fix)
			}
			p.report(diag.CodeInvalidName, diag.SeverityError, p.valueRange("project", "name"), "%s", msg)
		}
	}
	p.meta.Version = p.requiredString(project, "version")
	if p.meta.Version != "" && !schema.IsCollectionVersion(p.meta.Version) {
		msg := fmt.Sprintf("Invalid version format: %q; want MAJOR.MINOR.PATCH", p.meta.Version)
		if fix := schema.SuggestCollectionVersion(p.meta.Version); fix != "" {
			msg += fmt.Sprintf(", such as %q", fix)
		}
		p.report(diag.CodeInvalidVersion, diag.SeverityError, p.valueRange("project", "version"), "%s", msg)
	}
	p.meta.Description = p.requiredString(project, "description")

	if raw, ok := project["urls"]; ok {
		urls, ok := raw.(map[string]any)
		if !ok {
			p.report(diag.CodeMetadataType, diag.SeverityError, p.valueRange("project", "urls"), "%s", wrongTypeMessage("project.urls", raw, "a table of strings"))
			return
		}
		p.meta.URLs = make(map[string]string, len(urls))
		for k, v := range urls {
			s, ok := v.(string)
			if !ok {
				p.report(diag.CodeMetadataType, diag.SeverityError, p.valueRange("project", "urls", k), "%s",
					wrongTypeMessage("project.urls."+syntax.TOMLKey(k), v, "a string"))
				continue
			}
			p.meta.URLs[k] = s
		}
	}
}

// requiredString returns project[field] when it is a non-empty string, and
// reports it missing or of the wrong type otherwise.
func (p *pyprojectParser) requiredString(project map[string]any, field string) string {
	raw, ok := project[field]
	if !ok {
		p.report(diag.CodeMissingField, diag.SeverityError, p.tableRange("project"), "%s", missingFieldMessage(field))
		return ""
	}
	s, ok := raw.(string)
	if !ok {
		p.report(diag.CodeMetadataType, diag.SeverityError, p.valueRange("project", field), "%s", wrongTypeMessage("project."+field, raw, "a string"))
		return ""
	}
	if strings.TrimSpace(s) == "" {
		p.report(diag.CodeMissingField, diag.SeverityError, p.valueRange("project", field), "%s", missingFieldMessage(field))
		return ""
	}
	return s
}

func (p *pyprojectParser) checkCollection(doc map[string]any) {
	var cur any = doc
	path := []string{"tool", "amplifier", "collection"}
	for i, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			p.report(diag.CodeMetadataType, diag.SeverityError, p.valueRange(path[:i]...), "%s", wrongTypeMessage(strings.Join(path[:i], "."), cur, "a table"))
			return
		}
		if cur, ok = m[k]; !ok {
			return
		}
	}
	coll, ok := cur.(map[string]any)
	if !ok {
		p.report(diag.CodeMetadataType, diag.SeverityError, p.valueRange(path...), "%s", wrongTypeMessage("tool.amplifier.collection", cur, "a table"))
		return
	}
	for _, key := range p.childKeys(path, coll) {
		v := coll[key]
		at := append(path[:len(path):len(path)], key)
		switch key {
		case "author":
			if s, ok := v.(string); ok {
				p.meta.Author = s
			} else {
				p.report(diag.CodeMetadataType, diag.SeverityError, p.valueRange(at...), "%s", wrongTypeMessage("tool.amplifier.collection.author", v, "a string"))
			}
		case "capabilities":
			p.checkCapabilities(at, v)
		case "requires":
			p.checkRequires(at, v)
		default:
			if schema.IsExtraCollectionKey(key) {
				continue
			}
			msg := fmt.Sprintf("Unknown key %q in [tool.amplifier.collection]", key)
			if near := diag.Suggest(key, schema.DocumentedCollectionKeys()); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			p.report(diag.CodeMetadataUnknownKey, diag.SeverityInfo, p.keyRange(at...), "%s", msg)
		}
	}
}

// childKeys returns the keys directly inside the table at path, in the
// order they first appear in the file (a dotted key such as
// requires.foundation = … counts as defining requires). Keys the decoder
// reports no order for come last, sorted.
func (p *pyprojectParser) childKeys(path []string, table map[string]any) []string {
	out := make([]string, 0, len(table))
	seen := make(map[string]bool, len(table))
	for _, k := range p.keys {
		if len(k) <= len(path) || !slices.Equal(k[:len(path)], path) {
			continue
		}
		if child := k[len(path)]; !seen[child] {
			seen[child] = true
			out = append(out, child)
		}
	}
	var rest []string
	for k := range table {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func (p *pyprojectParser) checkCapabilities(at []string, v any) {
	list, ok := v.([]any)
	if !ok {
		p.report(diag.CodeMetadataType, diag.SeverityError, p.valueRange(at...), "%s",
			wrongTypeMessage("tool.amplifier.collection.capabilities", v, "a list of strings"))
		return
	}
	caps := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			p.report(diag.CodeMetadataType, diag.SeverityError, p.valueRange(append(at[:len(at):len(at)], syntax.TOMLIndex(i))...), "%s",
				wrongTypeMessage(fmt.Sprintf("tool.amplifier.collection.capabilities[%d]", i), item, "a string"))
			continue
		}
		caps = append(caps, s)
	}
	p.meta.Capabilities = caps
}

func (p *pyprojectParser) checkRequires(at []string, v any) {
	table, ok := v.(map[string]any)
	if !ok {
		p.report(diag.CodeMetadataType, diag.SeverityError, p.valueRange(at...), "%s",
			wrongTypeMessage("tool.amplifier.collection.requires", v, "a table of version constraints"))
		return
	}
	p.meta.Requires = make([]Requirement, 0, len(table))
	for _, name := range p.childKeys(at, table) {
		raw := table[name]
		entry := append(at[:len(at):len(at)], name)
		r := p.valueRange(entry...)
		s, ok := raw.(string)
		if !ok {
			p.report(diag.CodeMetadataType, diag.SeverityError, r, "%s",
				wrongTypeMessage("requires."+syntax.TOMLKey(name), raw, "a version constraint string"))
			continue
		}
		if _, err := syntax.ParseConstraint(s); err != nil {
			why := err.Error()
			if ce, ok := err.(*syntax.ConstraintError); ok {
				why = ce.Reason
			}
			if rest, ok := strings.CutPrefix(why, strconv.Quote(s)+" "); ok {
				why = rest // "latest" is not a version: said once
				p.report(diag.CodeInvalidConstraint, diag.SeverityError, r, "Invalid constraint for requires.%s: %q %s", syntax.TOMLKey(name), s, why)
			} else {
				p.report(diag.CodeInvalidConstraint, diag.SeverityError, r, "Invalid constraint for requires.%s: %q: %s", syntax.TOMLKey(name), s, why)
			}
		}
		p.meta.Requires = append(p.meta.Requires, Requirement{Name: name, Constraint: s, Range: r})
	}
}

// missingFieldMessage is the message of a [project] field that is
// missing or empty: the spec's words.
func missingFieldMessage(field string) string { return "Required field missing: " + field }

// wrongTypeMessage is the message of a pyproject value v at key whose
// type is not want: its type, the value itself when it is a short scalar,
// and the type wanted.
func wrongTypeMessage(key string, v any, want string) string {
	got := tomlTypeName(v)
	if text := tomlScalarText(v); text != "" {
		got += " (" + text + ")"
	}
	return fmt.Sprintf("%s%s; want %s", wrongTypePrefix(key), got, want)
}

// wrongTypePrefix is how wrongTypeMessage starts for key.
func wrongTypePrefix(key string) string { return "Wrong type for " + key + ": " }

// tomlScalarText writes a decoded TOML scalar as TOML would, clipped; ""
// for a table or an array.
func tomlScalarText(v any) string {
	switch v := v.(type) {
	case string:
		return schema.QuoteValue(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		text := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(text, ".eIN") {
			text += ".0" // 1.0, not 1: what the author wrote, and a float
		}
		return text
	case bool:
		return strconv.FormatBool(v)
	case time.Time:
		return v.Format(time.RFC3339)
	}
	return ""
}

// tomlTypeName names the TOML type of a decoded value, with an article.
func tomlTypeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a date-time"
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a value of another type"
}
