package syntax

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// A fast path for pyproject.toml. Most of these files are tables of keys
// whose values are strings, integers, booleans, arrays and inline tables
// of the same. DecodeTOMLFast reads that subset into the document and the
// key order the TOML decoder gives for it, with far fewer allocations; on
// anything else (dotted keys, arrays of tables, floats, dates, multi-line
// strings, escapes beyond the common ones, a table defined twice or
// implicitly first, a repeated key, carriage returns, a byte order mark,
// errors of any kind) it gives up, and the decoder reads the text. A fuzz
// test holds the two to the same results.
//
// It also gives up on a text beyond the bounds ScanTOMLSpans sets (a
// header of more than MaxTOMLKeyParts parts, arrays and inline tables
// nested more than MaxTOMLScanDepth deep), so that a text it reads is one
// the scanner reads whole: ParsePyproject need not scan a text it reads
// unless it reports a position in it.

// tomlFast is the state of one DecodeTOMLFast call.
type tomlFast struct {
	src   string
	pos   int
	depth int // arrays and inline tables open
	keys  []toml.Key
	// tables are the paths of the tables headers made (parts joined with
	// "\x00"): the few of a pyproject.toml, looked through.
	tables []string
}

// DecodeTOMLFast decodes src when it is in the subset the fast path reads.
func DecodeTOMLFast(src []byte) (map[string]any, []toml.Key, bool) {
	if !utf8.Valid(src) {
		return nil, nil, false
	}
	for _, c := range src {
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7F {
			return nil, nil, false
		}
	}
	t := tomlFast{src: string(src)}
	if strings.HasPrefix(t.src, "\uFEFF") {
		return nil, nil, false
	}
	doc := map[string]any{}
	cur, path := doc, []string(nil)
	for {
		t.skipSpace(true)
		if t.pos == len(t.src) {
			return doc, t.keys, true
		}
		if t.src[t.pos] == '[' {
			var ok bool
			if cur, path, ok = t.header(doc); !ok {
				return nil, nil, false
			}
		} else {
			k, ok := t.key()
			if !ok || !t.expect('=') {
				return nil, nil, false
			}
			if _, dup := cur[k]; dup {
				return nil, nil, false
			}
			full := append(path[:len(path):len(path)], k)
			t.keys = append(t.keys, full)
			v, ok := t.value(full)
			if !ok {
				return nil, nil, false
			}
			cur[k] = v
		}
		if !t.endOfLine() {
			return nil, nil, false
		}
	}
}

// skipSpace skips blanks and, with lines set, line breaks and comments.
func (t *tomlFast) skipSpace(lines bool) {
	for t.pos < len(t.src) {
		switch t.src[t.pos] {
		case ' ', '\t':
			t.pos++
		case '\n':
			if !lines {
				return
			}
			t.pos++
		case '#':
			if !lines {
				return
			}
			t.skipComment()
		default:
			return
		}
	}
}

// skipComment moves to the line break that ends a comment.
func (t *tomlFast) skipComment() {
	if i := strings.IndexByte(t.src[t.pos:], '\n'); i >= 0 {
		t.pos += i
	} else {
		t.pos = len(t.src)
	}
}

// endOfLine reads the blanks, the comment and the line break after a
// header or a key's value.
func (t *tomlFast) endOfLine() bool {
	t.skipSpace(false)
	if t.pos < len(t.src) && t.src[t.pos] == '#' {
		t.skipComment()
	}
	if t.pos == len(t.src) {
		return true
	}
	if t.src[t.pos] != '\n' {
		return false
	}
	t.pos++
	return true
}

// expect skips blanks, reads c and skips blanks after it.
func (t *tomlFast) expect(c byte) bool {
	t.skipSpace(false)
	if t.pos == len(t.src) || t.src[t.pos] != c {
		return false
	}
	t.pos++
	t.skipSpace(false)
	return true
}

// header reads a [table] header and returns the table it opens, made
// along with the tables above it that do not exist yet.
func (t *tomlFast) header(doc map[string]any) (map[string]any, []string, bool) {
	t.pos++ // [
	if t.pos < len(t.src) && t.src[t.pos] == '[' {
		return nil, nil, false // an array of tables
	}
	var parts []string
	for {
		t.skipSpace(false)
		k, ok := t.key()
		if !ok {
			return nil, nil, false
		}
		if parts = append(parts, k); len(parts) > MaxTOMLKeyParts {
			return nil, nil, false
		}
		t.skipSpace(false)
		if t.pos == len(t.src) {
			return nil, nil, false
		}
		if t.src[t.pos] == ']' {
			t.pos++
			break
		}
		if t.src[t.pos] != '.' {
			return nil, nil, false
		}
		t.pos++
	}
	cur := doc
	full, end := strings.Join(parts, "\x00"), 0
	for i, k := range parts {
		// The path of the table the first i+1 parts name, cut from full.
		if i > 0 {
			end++
		}
		end += len(k)
		id := full[:end]
		v, ok := cur[k]
		if !ok {
			m := map[string]any{}
			cur[k] = m
			cur = m
			t.tables = append(t.tables, id)
			continue
		}
		if i == len(parts)-1 || !slices.Contains(t.tables, id) {
			// A table defined again, or one a longer header made first, or
			// a key or inline table of that name: left to the decoder.
			return nil, nil, false
		}
		cur = v.(map[string]any)
	}
	t.keys = append(t.keys, parts)
	return cur, parts, true
}

// key reads a bare key, or a quoted one without escapes that is not
// empty: one part of a header, or a whole key (a dotted key, left to the
// decoder, then fails for want of its "=").
func (t *tomlFast) key() (string, bool) {
	start := t.pos
	if start == len(t.src) {
		return "", false
	}
	var k string
	switch q := t.src[start]; q {
	case '"', '\'':
		end := strings.IndexByte(t.src[start+1:], q)
		if end <= 0 {
			return "", false
		}
		k = t.src[start+1 : start+1+end]
		if strings.ContainsAny(k, "\\\n") {
			return "", false
		}
		t.pos = start + end + 2
	default:
		for t.pos < len(t.src) && isTOMLBareKeyByte(t.src[t.pos]) {
			t.pos++
		}
		if t.pos == start {
			return "", false
		}
		k = t.src[start:t.pos]
	}
	return k, true
}

// value reads a value: a one-line string, a decimal integer, a boolean,
// an array or an inline table. path is the key it is the value of; the
// keys of inline tables in it are recorded below it.
func (t *tomlFast) value(path []string) (any, bool) {
	if t.pos == len(t.src) {
		return nil, false
	}
	switch c := t.src[t.pos]; {
	case c == '"':
		return t.basicString()
	case c == '\'':
		if strings.HasPrefix(t.src[t.pos:], "'''") {
			return nil, false
		}
		end := strings.IndexAny(t.src[t.pos+1:], "'\n")
		if end < 0 || t.src[t.pos+1+end] != '\'' {
			return nil, false
		}
		s := t.src[t.pos+1 : t.pos+1+end]
		t.pos += end + 2
		return s, true
	case c == '[' || c == '{':
		if t.depth >= MaxTOMLScanDepth {
			return nil, false
		}
		t.depth++
		defer func() { t.depth-- }()
		if c == '[' {
			return t.array(path)
		}
		return t.inlineTable(path)
	case c == 't' && strings.HasPrefix(t.src[t.pos:], "true"):
		t.pos += 4
		return true, t.valueEnds()
	case c == 'f' && strings.HasPrefix(t.src[t.pos:], "false"):
		t.pos += 5
		return false, t.valueEnds()
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		return t.integer()
	}
	return nil, false
}

// valueEnds reports whether what follows a bare value ends it.
func (t *tomlFast) valueEnds() bool {
	if t.pos == len(t.src) {
		return true
	}
	switch t.src[t.pos] {
	case ' ', '\t', '\n', '#', ',', ']', '}':
		return true
	}
	return false
}

// integer reads a decimal integer: a sign, then 0 or digits not starting
// with 0, with single underscores between digits, within int64.
func (t *tomlFast) integer() (any, bool) {
	start := t.pos
	if c := t.src[t.pos]; c == '+' || c == '-' {
		t.pos++
	}
	digits := t.pos
	prevDigit := false
	for t.pos < len(t.src) {
		c := t.src[t.pos]
		switch {
		case c >= '0' && c <= '9':
			prevDigit = true
		case c == '_' && prevDigit && t.pos+1 < len(t.src) && t.src[t.pos+1] >= '0' && t.src[t.pos+1] <= '9':
			prevDigit = false
		default:
			goto end
		}
		t.pos++
	}
end:
	text := t.src[digits:t.pos]
	if text == "" || text[0] == '0' && len(text) > 1 || len(text) > 18 || !t.valueEnds() {
		return nil, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(t.src[start:t.pos], "_", ""), 10, 64)
	if err != nil {
		return nil, false
	}
	return n, true
}

// basicString reads a one-line "…" string whose escapes are among \", \\,
// \n, \t, \r, \b, \f and \uXXXX.
func (t *tomlFast) basicString() (any, bool) {
	if strings.HasPrefix(t.src[t.pos:], `"""`) {
		return nil, false
	}
	start := t.pos + 1
	var b []byte // the value, once an escape makes it differ from the text
	from := start
	for i := start; i < len(t.src); i++ {
		switch t.src[i] {
		case '\n':
			return nil, false
		case '"':
			t.pos = i + 1
			if b == nil {
				return t.src[start:i], true
			}
			return string(append(b, t.src[from:i]...)), true
		case '\\':
			if i+1 == len(t.src) {
				return nil, false
			}
			b = append(b, t.src[from:i]...)
			switch e := t.src[i+1]; e {
			case '"', '\\':
				b = append(b, e)
			case 'n':
				b = append(b, '\n')
			case 't':
				b = append(b, '\t')
			case 'r':
				b = append(b, '\r')
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'u':
				if i+6 > len(t.src) {
					return nil, false
				}
				v, err := strconv.ParseUint(t.src[i+2:i+6], 16, 32)
				if err != nil || v >= 0xD800 && v <= 0xDFFF || strings.ContainsAny(t.src[i+2:i+6], "+-_") {
					return nil, false
				}
				b = utf8.AppendRune(b, rune(v))
				i += 4
			default:
				return nil, false
			}
			i++
			from = i + 1
		}
	}
	return nil, false
}

// array reads an array of values over any number of lines, with comments
// and a trailing comma.
func (t *tomlFast) array(path []string) (any, bool) {
	t.pos++ // [
	out := []any{}
	for {
		t.skipSpace(true)
		if t.pos == len(t.src) {
			return nil, false
		}
		if t.src[t.pos] == ']' {
			t.pos++
			return out, true
		}
		v, ok := t.value(path)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		t.skipSpace(true)
		if t.pos == len(t.src) {
			return nil, false
		}
		switch t.src[t.pos] {
		case ',':
			t.pos++
		case ']':
			t.pos++
			return out, true
		default:
			return nil, false
		}
	}
}

// inlineTable reads a one-line inline table, without a trailing comma,
// and records its keys below path.
func (t *tomlFast) inlineTable(path []string) (any, bool) {
	t.pos++ // {
	m := map[string]any{}
	t.skipSpace(false)
	if t.pos < len(t.src) && t.src[t.pos] == '}' {
		t.pos++
		return m, true
	}
	for {
		t.skipSpace(false)
		k, ok := t.key()
		if !ok || !t.expect('=') {
			return nil, false
		}
		if _, dup := m[k]; dup {
			return nil, false
		}
		full := append(path[:len(path):len(path)], k)
		t.keys = append(t.keys, full)
		v, ok := t.value(full)
		if !ok {
			return nil, false
		}
		m[k] = v
		t.skipSpace(false)
		if t.pos == len(t.src) {
			return nil, false
		}
		switch t.src[t.pos] {
		case ',':
			t.pos++
		case '}':
			t.pos++
			return m, true
		default:
			return nil, false
		}
	}
}

// TOMLErrorMessage returns the short message of a TOML error.
func TOMLErrorMessage(err error) string {
	if pe, ok := err.(toml.ParseError); ok && pe.Message != "" {
		return pe.Message
	}
	return err.Error()
}
