package schema

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// The schemas as an editor asks about them: which keys a mapping of the
// front matter knows, what each one is for and what its value may be, and
// a placeholder for a key an author has to add. They read the same tables
// the validator reads.

// ItemStep is the step of a schema path that goes into the items of a
// list: ["tools", ItemStep, "config"] is the config of a tools entry.
const ItemStep = "-"

// KeyInfo describes one key a schema knows.
type KeyInfo struct {
	Name string
	// Doc says what the key is for.
	Doc string
	// Type says in words what the value may be, as diagnostics say it:
	// `a string`, `"all", "none", a list or a mapping`.
	Type string
	// Required keys must be present. RootOnly keys are required only of a
	// profile that extends no other; Unless names a sibling whose presence
	// lifts the requirement.
	Required bool
	RootOnly bool
	Unless   string
	// Values lists the strings the value may be, when it is one of a
	// fixed set; Bool is set when the value is a boolean.
	Values []string
	Bool   bool
	// Scalar, List and Mapping tell what the value may be: a string,
	// number or boolean; a list; a mapping. Nullable admits an empty value.
	Scalar, List, Mapping, Nullable bool
}

// Keys returns the keys the schema of kind knows in the mapping at
// path (keys from the top, ItemStep into a list's items), in the order
// the schema documents them. ok is false when the schema has no mapping
// with known keys there: an unknown path, a value that is no mapping, or a
// mapping open to any key (such as a module's config).
func Keys(kind DocKind, path []string) (keys []KeyInfo, ok bool) {
	s, ok := schemaAt(kind, path)
	if !ok || s.kinds&syntax.TypeMap == 0 || len(s.fields) == 0 {
		return nil, false
	}
	out := make([]KeyInfo, len(s.fields))
	for i, f := range s.fields {
		out[i] = keyInfo(f.name, f.doc, f.shape, f)
	}
	return out, true
}

// Key describes the key at path, its last element. A key a mapping
// admits without knowing it (a name in a profile's agents.inline) is
// described by the shape of its value and the description of the mapping. ok is false when the schema
// does not admit the key there.
func Key(kind DocKind, path []string) (KeyInfo, bool) {
	if len(path) == 0 || path[len(path)-1] == ItemStep {
		return KeyInfo{}, false
	}
	parent, ok := schemaAt(kind, path[:len(path)-1])
	if !ok || parent.kinds&syntax.TypeMap == 0 {
		return KeyInfo{}, false
	}
	name := path[len(path)-1]
	if f := parent.field(name); f != nil {
		return keyInfo(f.name, f.doc, f.shape, f), true
	}
	if parent.extra != nil {
		// Described by what the mapping is for.
		doc := ""
		if len(path) > 1 {
			if owner, ok := Key(kind, path[:len(path)-1]); ok {
				doc = owner.Doc
			}
		}
		return keyInfo(name, doc, parent.extra, nil), true
	}
	return KeyInfo{}, false
}

// Placeholder returns YAML that adds the key at path with a value to
// fill in, indented by indent spaces and ending in a newline: the first
// allowed string, 1.0.0 for a version, name for a key called name, "" for
// other strings, an empty list or mapping, 0 or false; a mapping with
// required keys gets them, nested the same way. ok is false when the
// schema does not know the key.
func Placeholder(kind DocKind, path []string, indent int, name string) (string, bool) {
	if len(path) == 0 {
		return "", false
	}
	parent, ok := schemaAt(kind, path[:len(path)-1])
	if !ok {
		return "", false
	}
	f := parent.field(path[len(path)-1])
	if f == nil {
		return "", false
	}
	var b strings.Builder
	writePlaceholder(&b, f, indent, name)
	return b.String(), true
}

func writePlaceholder(b *strings.Builder, f *field, indent int, name string) {
	pad := strings.Repeat(" ", indent)
	s := f.shape
	var required []*field
	for _, c := range s.fields {
		if c.required || c.rootOnly {
			required = append(required, c)
		}
	}
	var value string
	switch {
	case s.kinds&syntax.TypeMap != 0 && len(required) > 0:
		b.WriteString(pad + f.name + ":\n")
		for _, c := range required {
			writePlaceholder(b, c, indent+2, name)
		}
		return
	case s.kinds&syntax.TypeString != 0 && len(s.enum) > 0:
		value = s.enum[0]
	case s.kinds&syntax.TypeString != 0 && s.semver:
		value = "1.0.0"
	case s.kinds&syntax.TypeString != 0 && f.name == "name" && name != "" && plainScalar(name):
		value = name
	case s.kinds&syntax.TypeString != 0:
		value = `""`
	case s.kinds&syntax.TypeList != 0:
		value = "[]"
	case s.kinds&syntax.TypeMap != 0:
		value = "{}"
	case s.kinds&syntax.TypeNumber != 0:
		value = "0"
	case s.kinds&syntax.TypeBool != 0:
		value = "false"
	default:
		value = `""`
	}
	b.WriteString(pad + f.name + ": " + value + "\n")
}

// plainScalar reports whether s can be written as a plain YAML string.
func plainScalar(s string) bool {
	if s == "" || strings.ContainsAny(s, ":#{}[],&*!|>'\"%@`\n") || s != strings.TrimSpace(s) {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "~", "y", "n":
		return false
	}
	return !(s[0] >= '0' && s[0] <= '9') && s[0] != '-' && s[0] != '.'
}

// schemaAt walks the schema of kind along path.
func schemaAt(kind DocKind, path []string) (*shape, bool) {
	s, ok := schemaFor(kind)
	if !ok {
		return nil, false
	}
	for _, step := range path {
		switch {
		case step == ItemStep:
			if s.kinds&syntax.TypeList == 0 || s.items == nil {
				return nil, false
			}
			s = s.items
		case s.kinds&syntax.TypeMap == 0:
			return nil, false
		case s.field(step) != nil:
			s = s.field(step).shape
		case s.extra != nil:
			s = s.extra
		default:
			return nil, false
		}
	}
	return s, true
}

// keyInfo describes a key of shape s; f, when not nil, is its field.
func keyInfo(name, doc string, s *shape, f *field) KeyInfo {
	k := KeyInfo{Name: name, Doc: doc, Type: describeKinds(s), Values: s.enum,
		Bool:    s.kinds&syntax.TypeBool != 0,
		Scalar:  s.kinds&(syntax.TypeString|syntax.TypeBool|syntax.TypeNumber) != 0,
		List:    s.kinds&syntax.TypeList != 0,
		Mapping: s.kinds&syntax.TypeMap != 0,
	}
	if s.kinds == syntax.TypeAny {
		k.Type = "anything"
	}
	if f != nil {
		k.Required, k.RootOnly, k.Unless, k.Nullable = f.required, f.rootOnly, f.unless, f.nullable || s.kinds&syntax.TypeNull != 0
	}
	return k
}

// CollectionKeys describes the keys of [tool.amplifier.collection] in
// pyproject.toml: the documented ones, then those real collections use
// that are accepted without being checked.
func CollectionKeys() []KeyInfo {
	return []KeyInfo{
		{Name: "author", Type: "a string", Scalar: true,
			Doc: "Who wrote and maintains the collection."},
		{Name: "capabilities", Type: "a list of strings", List: true,
			Doc: "What the collection offers, in a few words each."},
		{Name: "requires", Type: "a table of version constraints", Mapping: true,
			Doc: "Collections this one needs, by name, each with a version constraint such as \"^1.0.0\" (< 2.0.0), \"~1.2.0\", \">=1.0,<2.0\" or \"==1.5.0\"; checked against the collection that resolves under that name."},
		{Name: "modules", Type: "anything", Doc: "Not part of the format: accepted, not checked (module registrations some collections carry)."},
		{Name: "agents", Type: "anything", Doc: "Not part of the format: accepted, not checked (agent registrations some collections carry)."},
		{Name: "dependencies", Type: "anything", Doc: "Not part of the format: accepted, not checked (a list of dependency names some collections carry); requires is what is checked."},
	}
}

// DocumentedCollectionKeys are the keys of [tool.amplifier.collection]
// the format documents, for "did you mean" hints and completion.
func DocumentedCollectionKeys() []string { return collectionKeys[:] }

// The rules of the collection format that pyproject.toml follows.

// IsCollectionVersion reports whether v has the version format of the
// collection format, ^[0-9]+\.[0-9]+\.[0-9]+$: X.Y.Z, ASCII digits only.
// Pre-release and build suffixes are not accepted.
func IsCollectionVersion(v string) bool {
	for part := 0; part < 3; part++ {
		n := 0
		for n < len(v) && isDigit(v[n]) {
			n++
		}
		if n == 0 {
			return false
		}
		v = v[n:]
		if part < 2 {
			if v == "" || v[0] != '.' {
				return false
			}
			v = v[1:]
		}
	}
	return v == ""
}

// IsExtraCollectionKey reports whether key is one of the keys of
// [tool.amplifier.collection] that the format does not document but that
// real collections use (module and agent registrations, a list of
// dependency names). They are accepted without a diagnostic and not
// checked.
func IsExtraCollectionKey(key string) bool {
	switch key {
	case "modules", "agents", "dependencies":
		return true
	}
	return false
}

// collectionKeys are the documented keys of [tool.amplifier.collection].
var collectionKeys = [...]string{"author", "capabilities", "requires"}

// CollectionNameProblem says what keeps name from matching
// ^[a-z0-9]+(-[a-z0-9]+)*$, or returns "".
func CollectionNameProblem(name string) string {
	switch {
	case strings.HasPrefix(name, "-"):
		return "starts with a hyphen"
	case strings.HasSuffix(name, "-"):
		return "ends with a hyphen"
	case strings.Contains(name, "--"):
		return "has consecutive hyphens"
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
		case r >= 'A' && r <= 'Z':
			return fmt.Sprintf("has an uppercase letter %q", r)
		case r == '_':
			return "has an underscore"
		case r == ' ' || r == '\t':
			return "has whitespace"
		default:
			return fmt.Sprintf("has the character %q", r)
		}
	}
	return ""
}

// SuggestCollectionName returns name lowercased, with underscores, dots
// and spaces turned into hyphens, when that makes a valid name; or "".
func SuggestCollectionName(name string) string {
	fix := strings.Map(func(r rune) rune {
		switch r {
		case '_', '.', ' ':
			return '-'
		}
		return unicode.ToLower(r)
	}, name)
	if fix == name || CollectionNameProblem(fix) != "" {
		return ""
	}
	return fix
}

// SuggestCollectionVersion returns the version X.Y.Z that v most likely
// means (a leading v dropped, missing parts zero, a suffix dropped), or ""
// when there is none.
func SuggestCollectionVersion(v string) string {
	core := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(v), "v"), "V")
	if i := strings.IndexAny(core, "-+"); i >= 0 {
		core = core[:i]
	}
	parts := strings.Split(core, ".")
	if len(parts) > 3 {
		return ""
	}
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	fix := strings.Join(parts, ".")
	if fix == v || !IsCollectionVersion(fix) {
		return ""
	}
	return fix
}

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
