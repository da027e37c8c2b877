package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// DocKind names the schema a Markdown document's front matter follows.
type DocKind string

// The document kinds.
const (
	DocProfile DocKind = "profile"
	DocAgent   DocKind = "agent"
	DocBundle  DocKind = "bundle"
	// DocBundleAgent is an agent shipped with a bundle (agents/<name>.md
	// next to bundle.md): an agent that may also carry model_role.
	DocBundleAgent DocKind = "bundle-agent"
)

// ErrUnknownDocKind is returned when a DocKind has no schema.
var ErrUnknownDocKind = errors.New("discovery: unknown document kind")

// Options tune front matter validation.
type Options struct {
	// UnknownKeySeverity is the severity of schema/unknown-key; the zero
	// value means SeverityError.
	UnknownKeySeverity diag.Severity
}

// shape is what a YAML value may be. A shape that admits several types
// describes each with its own part: enum and semver apply to strings,
// items to lists, fields and extra to mappings.
type shape struct {
	kinds syntax.Type
	// enum, when set, lists the strings allowed.
	enum []string
	// semver requires a string to be a semantic version X.Y.Z.
	semver bool
	// items is the shape of a list's items; nil admits anything.
	items *shape
	// fields are the keys a mapping knows, in the order documented.
	fields []*field
	// extra is the shape of a mapping's other keys; nil means that other
	// keys are unknown.
	extra *shape
	// hint is added to the message when a value has the wrong type.
	hint string
}

// field is one key of a mapping shape.
type field struct {
	name  string
	doc   string
	shape *shape
	// nullable admits null (an empty value) as "not set".
	nullable bool
	// required keys must be present.
	required bool
	// rootOnly keys are required in a profile that extends no other; a
	// profile that extends one is checked once merged with its parents.
	rootOnly bool
	// unless names a sibling key whose presence lifts the requirement.
	unless string
	// code and message, when set, replace the schema diagnostic for a
	// missing or mistyped value.
	code, message string
}

// field returns the field of s called name, or nil.
func (s *shape) field(name string) *field {
	for _, f := range s.fields {
		if f.name == name {
			return f
		}
	}
	return nil
}

// fieldNames lists the keys s knows.
func (s *shape) fieldNames() []string {
	names := make([]string, len(s.fields))
	for i, f := range s.fields {
		names[i] = f.name
	}
	return names
}

// schemaFor returns the top-level shape of a document kind.
func schemaFor(kind DocKind) (*shape, bool) {
	switch kind {
	case DocProfile:
		return profileSchema, true
	case DocAgent:
		return agentSchema, true
	case DocBundleAgent:
		return bundleAgentSchema, true
	case DocBundle:
		return bundleSchema, true
	}
	return nil, false
}

// validator checks a document's front matter against a schema.
type validator struct {
	doc      *Document
	root     *shape
	severity diag.Severity // of unknown keys
	// extends is set when a profile names a parent, so that keys required
	// only of a root profile are not required of it.
	extends bool
	// stack is the path from the top to the value being checked.
	stack []pathElem
}

// validate appends to d.Diagnostics what is wrong with d.Front under the
// schema of d.Kind.
func validate(d *Document, opts Options) {
	s, ok := schemaFor(d.Kind)
	if !ok || d.Front == nil {
		return
	}
	v := &validator{doc: d, root: s, severity: opts.UnknownKeySeverity}
	if v.severity == "" {
		v.severity = diag.SeverityError
	}
	if d.Kind == DocProfile {
		if n := d.Lookup("profile", "extends"); n != nil && n.Kind == yaml.ScalarNode && !syntax.IsNull(n) {
			v.extends = true
		}
	}
	v.mapping(d.Front, s, nil)
}

func (v *validator) report(code string, sev diag.Severity, r diag.Range, format string, args ...any) {
	v.doc.report(code, sev, r, format, args...)
}

// value checks n against s. f is the field n is the value of (nil for list
// items and extra keys); at is where a missing key inside n is reported:
// n's key, or n itself for a list item (nil for the opening line).
func (v *validator) value(n *yaml.Node, s *shape, f *field, at *yaml.Node) {
	r := syntax.Unalias(n)
	if r == nil || r.Kind == yaml.AliasNode {
		return // an unresolvable alias; the limits check reported it
	}
	t := syntax.NodeType(r)
	if t == syntax.TypeNull && f != nil && f.nullable {
		return
	}
	if s.kinds&t == 0 {
		if f != nil && f.code != "" {
			v.report(f.code, diag.SeverityError, v.doc.NodeRange(n), "%s", f.message)
			return
		}
		msg := fmt.Sprintf("wrong type for %s: %s; want %s", quotePath(v.path()), describeValue(r), describeKinds(s))
		if s.hint != "" {
			msg += " (" + s.hint + ")"
		}
		where := v.doc.NodeRange(n)
		if t == syntax.TypeNull && r.Value == "" {
			where = v.doc.NodeRange(at) // an empty value has no text of its own: point at its key
		}
		v.report(diag.CodeWrongType, diag.SeverityError, where, "%s", msg)
		return
	}
	switch t {
	case syntax.TypeString:
		if len(s.enum) > 0 && !slices.Contains(s.enum, r.Value) {
			v.report(diag.CodeInvalidValue, diag.SeverityError, v.doc.NodeRange(n), "invalid value for %s: %s; want %s",
				quotePath(v.path()), QuoteValue(r.Value), describeKinds(s))
		}
		if s.semver {
			if _, err := syntax.ParseVersion(r.Value); err != nil {
				msg := fmt.Sprintf("invalid version format for %s: %s; want MAJOR.MINOR.PATCH", quotePath(v.path()), QuoteValue(r.Value))
				if fix := SuggestCollectionVersion(r.Value); fix != "" {
					msg += fmt.Sprintf(", such as %q", fix)
				}
				v.report(diag.CodeInvalidValue, diag.SeverityError, v.doc.NodeRange(n), "%s", msg)
			}
		}
	case syntax.TypeList:
		if s.items == nil {
			return
		}
		for i, item := range r.Content {
			v.stack = append(v.stack, pathElem{index: i, item: true})
			v.value(item, s.items, nil, item)
			v.stack = v.stack[:len(v.stack)-1]
		}
	case syntax.TypeMap:
		if len(s.fields) == 0 && s.extra != nil && s.extra.kinds == syntax.TypeAny {
			return // an open mapping: nothing to check
		}
		v.mapping(r, s, at)
	}
}

// pathElem is one step of the path to a value: a key of a mapping, or
// item index of a list.
type pathElem struct {
	key   string
	index int
	item  bool
}

// path returns where the value being checked sits, as messages write it:
// keys joined with dots, list items as [i]; "" for the top. It is made
// only for a message.
func (v *validator) path() string {
	p := ""
	for _, e := range v.stack {
		if e.item {
			p = fmt.Sprintf("%s[%d]", p, e.index)
		} else {
			p = joinPath(p, e.key)
		}
	}
	return p
}

// valueAt checks the value n of key name of the mapping being checked.
func (v *validator) valueAt(name string, n *yaml.Node, s *shape, f *field, at *yaml.Node) {
	v.stack = append(v.stack, pathElem{key: name})
	v.value(n, s, f, at)
	v.stack = v.stack[:len(v.stack)-1]
}

// mapping checks the keys of mapping m against s.
func (v *validator) mapping(m *yaml.Node, s *shape, at *yaml.Node) {
	// A mapping without merge keys is its own list of pairs: it is looked
	// through without gathering them.
	var (
		ps  []syntax.Pair
		bad []*yaml.Node
	)
	direct := m.Kind == yaml.MappingNode && !syntax.HasMergeKey(m)
	if !direct {
		ps, bad = syntax.Pairs(m)
	}
	count := len(ps)
	if direct {
		count = len(m.Content) / 2
	}
	for _, b := range bad {
		v.report(diag.CodeWrongType, diag.SeverityError, v.doc.NodeRange(b),
			"wrong type for a merge (<<) in %s: %s; want a mapping", quotePathOrTop(v.path()), describeValue(syntax.Unalias(b)))
	}
	// claimed holds the required keys that are missing because an unknown
	// key misspells them: that key is their one diagnostic.
	var (
		claimed map[string]bool
		names   map[string]bool // every key of m, built when first needed
	)
	has := func(name string) bool {
		if names == nil {
			names = make(map[string]bool, count)
			for i := range count {
				var k *yaml.Node
				if direct {
					k = m.Content[2*i]
				} else {
					k = ps[i].Key
				}
				if k = syntax.Unalias(k); k.Kind == yaml.ScalarNode {
					names[k.Value] = true
				}
			}
		}
		return names[name]
	}
	// misspells reports whether a key that Suggest says misspells hint
	// stands for hint, a key the mapping needs and lacks.
	misspells := func(hint string) bool {
		f := s.field(hint)
		if f == nil || claimed[hint] || has(hint) || !v.needed(f, has) {
			return false
		}
		if claimed == nil {
			claimed = map[string]bool{}
		}
		claimed[hint] = true
		return true
	}
	var present keysSeen
	if count > maxListedKeys {
		present.m = make(map[string]*yaml.Node, count)
	} else {
		present.list = make([]seenKey, 0, count)
	}
	for i := range count {
		var p syntax.Pair
		if direct {
			p = syntax.Pair{Key: m.Content[2*i], Value: m.Content[2*i+1]}
		} else {
			p = ps[i]
		}
		k := syntax.Unalias(p.Key)
		if k.Kind != yaml.ScalarNode {
			if s.extra == nil {
				v.report(diag.CodeWrongType, diag.SeverityError, v.doc.NodeRange(p.Key),
					"wrong type for a key of %s: %s; want a string", quotePathOrTop(v.path()), describeValue(k))
			}
			continue
		}
		name := k.Value
		if first := present.get(name); first != nil {
			v.report(diag.CodeDuplicateKey, diag.SeverityError, v.doc.NodeRange(p.Key),
				"key %s is repeated (first at line %d); the last one wins", quoteKey(name), v.doc.NodeRange(first).Start.Line+1)
		}
		present.set(name, p.Key)
		f := s.field(name)
		switch {
		case f != nil:
			v.valueAt(name, p.Value, f.shape, f, p.Key)
		case s.extra != nil:
			v.valueAt(name, p.Value, s.extra, nil, p.Key)
		default:
			v.unknownKey(p.Key, name, s, misspells)
		}
	}
	for _, f := range s.fields {
		if present.get(f.name) != nil || claimed[f.name] {
			continue
		}
		switch {
		case !v.needed(f, func(name string) bool { return present.get(name) != nil }):
		case f.code != "":
			v.report(f.code, diag.SeverityError, v.doc.NodeRange(at), "%s", f.message)
		case v.path() == "":
			v.report(diag.CodeRequiredKey, diag.SeverityError, v.doc.NodeRange(at), "missing required key %s", quoteKey(f.name))
		default:
			v.report(diag.CodeRequiredKey, diag.SeverityError, v.doc.NodeRange(at), "missing required key %s in %s", quoteKey(f.name), quotePath(v.path()))
		}
	}
}

// keysSeen holds the key nodes of a mapping by name, the last one of each
// name winning: in a list, looked through, for the few keys of a front
// matter mapping; in m, when it is set, for many.
type keysSeen struct {
	list []seenKey
	m    map[string]*yaml.Node
}

// maxListedKeys is the most keys a keysSeen looks through.
const maxListedKeys = 16

type seenKey struct {
	name string
	key  *yaml.Node
}

func (ks *keysSeen) get(name string) *yaml.Node {
	if ks.m != nil {
		return ks.m[name]
	}
	for i := len(ks.list) - 1; i >= 0; i-- {
		if ks.list[i].name == name {
			return ks.list[i].key
		}
	}
	return nil
}

func (ks *keysSeen) set(name string, key *yaml.Node) {
	if ks.m != nil {
		ks.m[name] = key
		return
	}
	ks.list = append(ks.list, seenKey{name, key})
}

// needed reports whether the mapping being checked must have the key of
// f, has saying which keys it has.
func (v *validator) needed(f *field, has func(string) bool) bool {
	return f.required || f.rootOnly && !v.extends || f.unless != "" && !has(f.unless)
}

// unknownKey reports a key s does not know, with the known key it most
// likely misspells. When misspells says that key is one the mapping needs
// and lacks, the unknown key is the one diagnostic of both mistakes: an
// error, whatever the severity of unknown keys, since the missing key
// would be.
func (v *validator) unknownKey(key *yaml.Node, name string, s *shape, misspells func(hint string) bool) {
	path := v.path()
	msg := "unknown key " + quoteKey(name)
	if path != "" {
		msg += " in " + quotePath(path)
	}
	sev := v.severity
	if hint := diag.Suggest(name, s.fieldNames()); hint != "" {
		msg += "; did you mean " + quoteKey(hint) + "?"
		if misspells(hint) {
			msg += " " + quoteKey(hint) + " is required"
			sev = diag.SeverityError
		}
	} else if path != "" && v.root.field(name) != nil {
		msg += "; " + quoteKey(name) + " is a top-level key"
	}
	v.report(diag.CodeUnknownKey, sev, v.doc.NodeRange(key), "%s", msg)
}

// maxQuoted bounds how much of a key or value a message repeats.
const maxQuoted = 60

func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	cut := maxQuoted
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func quoteKey(k string) string   { return "`" + clip(k) + "`" }
func quotePath(p string) string  { return "`" + clip(p) + "`" }
func QuoteValue(s string) string { return fmt.Sprintf("%q", clip(s)) }
func joinPath(p, k string) string {
	if p == "" {
		return k
	}
	return p + "." + k
}

func quotePathOrTop(p string) string {
	if p == "" {
		return "the front matter"
	}
	return quotePath(p)
}

// describeKinds says in words what s admits: `"all", "none", a list or a
// mapping`.
func describeKinds(s *shape) string {
	var parts []string
	if s.kinds&syntax.TypeString != 0 {
		if len(s.enum) > 0 {
			for _, e := range s.enum {
				parts = append(parts, fmt.Sprintf("%q", e))
			}
		} else {
			parts = append(parts, "a string")
		}
	}
	if s.kinds&syntax.TypeBool != 0 {
		parts = append(parts, "a boolean")
	}
	switch s.kinds & syntax.TypeNumber {
	case syntax.TypeNumber, syntax.TypeFloat:
		parts = append(parts, "a number")
	case syntax.TypeInt:
		parts = append(parts, "an integer")
	}
	if s.kinds&syntax.TypeList != 0 {
		parts = append(parts, "a list")
	}
	if s.kinds&syntax.TypeMap != 0 {
		parts = append(parts, "a mapping")
	}
	switch len(parts) {
	case 0:
		return "nothing"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// describeValue says in words what n is, with its text when it is a
// scalar: `a number (1.0)`, `a string ("x")`.
func describeValue(n *yaml.Node) string {
	what := describeNode(n)
	switch t := syntax.NodeType(n); {
	case t == syntax.TypeString:
		what += " (" + QuoteValue(n.Value) + ")"
	case t&(syntax.TypeBool|syntax.TypeNumber) != 0 || t == syntax.TypeNull && n.Value != "":
		what += " (" + clip(n.Value) + ")"
	}
	return what
}

// describeNode says in words what n is.
func describeNode(n *yaml.Node) string {
	switch syntax.NodeType(n) {
	case syntax.TypeString:
		return "a string"
	case syntax.TypeBool:
		return "a boolean"
	case syntax.TypeInt, syntax.TypeFloat:
		return "a number"
	case syntax.TypeList:
		return "a list"
	case syntax.TypeMap:
		return "a mapping"
	case syntax.TypeNull:
		if n.Value == "" {
			return "an empty value"
		}
		return "null"
	}
	return "an alias"
}

// JSON returns a draft-07 JSON Schema of the front matter of a
// document kind, built from the same tables the validator uses. Keys
// required only of a profile that extends no other are expressed with
// if/else.
func JSON(kind DocKind) ([]byte, error) {
	s, ok := schemaFor(kind)
	if !ok {
		return nil, fmt.Errorf("json schema %q: %w", kind, ErrUnknownDocKind)
	}
	root := jsonShape(s)
	root["$schema"] = "http://json-schema.org/draft-07/schema#"
	root["title"] = "amplidex " + string(kind) + " front matter"
	if overlay := rootOnlyOverlay(s); overlay != nil {
		root["if"] = map[string]any{
			"required": []string{"profile"},
			"properties": map[string]any{
				"profile": map[string]any{"required": []string{"extends"}},
			},
		}
		root["else"] = overlay
	}
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("json schema %q: %w", kind, err)
	}
	return append(out, '\n'), nil
}

// jsonShape renders s as a JSON Schema object.
func jsonShape(s *shape) map[string]any {
	if s == nil || s.kinds == syntax.TypeAny {
		return map[string]any{}
	}
	var alts []map[string]any
	if s.kinds&syntax.TypeString != 0 {
		a := map[string]any{"type": "string"}
		if len(s.enum) > 0 {
			a["enum"] = s.enum
		}
		if s.semver {
			a["pattern"] = semverPattern
		}
		alts = append(alts, a)
	}
	if s.kinds&syntax.TypeBool != 0 {
		alts = append(alts, map[string]any{"type": "boolean"})
	}
	switch s.kinds & syntax.TypeNumber {
	case syntax.TypeNumber, syntax.TypeFloat:
		alts = append(alts, map[string]any{"type": "number"})
	case syntax.TypeInt:
		alts = append(alts, map[string]any{"type": "integer"})
	}
	if s.kinds&syntax.TypeList != 0 {
		alts = append(alts, map[string]any{"type": "array", "items": jsonShape(s.items)})
	}
	if s.kinds&syntax.TypeMap != 0 {
		alts = append(alts, jsonMapping(s))
	}
	if s.kinds&syntax.TypeNull != 0 {
		alts = append(alts, map[string]any{"type": "null"})
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return map[string]any{"anyOf": alts}
}

func jsonMapping(s *shape) map[string]any {
	obj := map[string]any{"type": "object"}
	props := map[string]any{}
	var required []string
	unless := map[string][]string{}
	for _, f := range s.fields {
		p := jsonShape(f.shape)
		if f.nullable && f.shape.kinds&syntax.TypeNull == 0 {
			if alts, ok := p["anyOf"].([]map[string]any); ok {
				p["anyOf"] = append(alts, map[string]any{"type": "null"})
			} else if len(p) > 0 {
				p = map[string]any{"anyOf": []map[string]any{p, {"type": "null"}}}
			}
		}
		if f.doc != "" {
			p["description"] = f.doc
		}
		props[f.name] = p
		switch {
		case f.required:
			required = append(required, f.name)
		case f.unless != "":
			unless[f.unless] = append(unless[f.unless], f.name)
		}
	}
	if len(props) > 0 {
		obj["properties"] = props
	}
	if len(required) > 0 {
		obj["required"] = required
	}
	var anyOf []map[string]any
	for _, alt := range slices.Sorted(maps.Keys(unless)) {
		anyOf = append(anyOf, map[string]any{"required": []string{alt}}, map[string]any{"required": unless[alt]})
	}
	if len(anyOf) > 0 {
		obj["anyOf"] = anyOf
	}
	if s.extra == nil {
		obj["additionalProperties"] = false
	} else if s.extra.kinds != syntax.TypeAny {
		obj["additionalProperties"] = jsonShape(s.extra)
	}
	return obj
}

// rootOnlyOverlay returns the schema that adds the keys required only of
// a root profile, or nil when s has none.
func rootOnlyOverlay(s *shape) map[string]any {
	if s == nil || s.kinds&syntax.TypeMap == 0 {
		return nil
	}
	var required []string
	props := map[string]any{}
	for _, f := range s.fields {
		if f.rootOnly {
			required = append(required, f.name)
		}
		if o := rootOnlyOverlay(f.shape); o != nil {
			props[f.name] = o
		}
	}
	if len(required) == 0 && len(props) == 0 {
		return nil
	}
	o := map[string]any{}
	if len(required) > 0 {
		o["required"] = required
	}
	if len(props) > 0 {
		o["properties"] = props
	}
	return o
}

// semverPattern is the JSON Schema pattern of a semantic version.
const semverPattern = `^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`
