package syntax

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
)

// TOMLKeyRange returns where the key at path is written in the TOML text
// src: the key of `name = …` in a table, a dotted key, or a table header
// (`[roots]`), or the first key under a table written only as the prefix
// of longer keys. It reports false when the key is not written there. It
// reads src once and decodes nothing, so it also serves for text the
// decoder rejected for another reason (an unknown key, a wrong type).
func TOMLKeyRange(src []byte, path ...string) (diag.Range, bool) {
	if len(path) == 0 {
		return diag.Range{}, false
	}
	spans, _ := ScanTOMLSpans(src)
	s, ok := spans[TOMLPath(path)]
	if !ok {
		return diag.Range{}, false
	}
	return NewLineIndex(src).Range(s.KeyStart, s.KeyEnd), true
}

// A TOML position scanner. The TOML decoder does not say where keys and
// values are, so this scanner walks the text once more and records, for
// each key path, the byte spans of the key and of its value. It understands
// table headers, dotted and quoted keys, strings of all four kinds, arrays
// (element spans are recorded under TOMLIndex(i)) and inline tables. It is
// meant for text the decoder accepted; on anything else it gives up on the
// current line and goes on, and it never fails.

// TOMLSpan is where a key and its value sit, as byte offsets. For a table
// header, the key span is the whole header ("[a.b]") and so is the value
// span.
type TOMLSpan struct {
	KeyStart, KeyEnd int
	ValStart, ValEnd int
	// implicit is set on a span recorded for a table that is only the
	// prefix of a longer key or header; a real definition replaces it.
	implicit bool
}

// TOMLSpans maps a key path (see TOMLPath) to its span; the first
// definition of a path wins.
type TOMLSpans map[string]TOMLSpan

// TOMLPath joins key parts into a TOMLSpans key.
func TOMLPath(parts []string) string { return strings.Join(parts, "\x00") }

// TOMLIndex names element i of an array in a key path.
func TOMLIndex(i int) string { return "\x01" + strconv.Itoa(i) }

// Bounds on the shape of a pyproject.toml, far beyond what real ones use
// (a handful of parts, a few levels). A file that exceeds one is not
// decoded.
const (
	// MaxTOMLScanDepth bounds the nesting of arrays and inline tables.
	MaxTOMLScanDepth = 32
	// MaxTOMLKeyParts bounds the parts of a dotted key or table header.
	MaxTOMLKeyParts = 32
)

// TOMLTooDeep says where a TOML text exceeds a bound of its shape, and
// which.
type TOMLTooDeep struct {
	Off int
	Why string
}

type tomlScanner struct {
	src   []byte
	pos   int
	depth int
	spans TOMLSpans
	deep  *TOMLTooDeep // set when the text exceeds a bound; the scan stops
}

// tooDeep records that the text exceeds a bound at off, and ends the scan.
func (s *tomlScanner) tooDeep(off int, why string) {
	if s.deep == nil {
		s.deep = &TOMLTooDeep{Off: off, Why: why}
	}
	s.pos = len(s.src)
}

// ScanTOMLSpans records the spans of every key and table in src, in time
// linear in its size. It stops, and says where, at a key of more than
// MaxTOMLKeyParts parts or at arrays and inline tables nested deeper than
// MaxTOMLScanDepth.
func ScanTOMLSpans(src []byte) (TOMLSpans, *TOMLTooDeep) {
	s := &tomlScanner{src: src, spans: TOMLSpans{}}
	if bytes.HasPrefix(src, []byte("\uFEFF")) {
		s.pos = 3
	}
	var table []string
	for {
		s.skipBlank(true)
		if s.pos >= len(s.src) {
			break
		}
		start := s.pos
		if s.src[s.pos] == '[' {
			double := s.pos+1 < len(s.src) && s.src[s.pos+1] == '['
			s.pos++
			if double {
				s.pos++
			}
			s.skipBlank(false)
			key, ok := s.key()
			s.skipBlank(false)
			if ok && s.peek() == ']' && (!double || s.peekAt(1) == ']') {
				s.pos++
				if double {
					s.pos++
				}
				table = key
				s.record(key, TOMLSpan{KeyStart: start, KeyEnd: s.pos, ValStart: start, ValEnd: s.pos}, true)
			}
			s.skipLine()
			continue
		}
		key, ok := s.key()
		keyEnd := s.pos
		s.skipBlank(false)
		if !ok || s.peek() != '=' {
			s.skipLine()
			continue
		}
		s.pos++
		s.skipBlank(false)
		full := append(table[:len(table):len(table)], key...)
		valStart := s.pos
		s.value(full)
		if s.deep != nil {
			break
		}
		s.record(full, TOMLSpan{KeyStart: start, KeyEnd: keyEnd, ValStart: valStart, ValEnd: s.trimmedEnd(valStart)}, true)
		s.skipLine()
	}
	return s.spans, s.deep
}

// record stores span under path and, when prefixes is set, under each
// enclosing path that has no span yet (pointing at the same key).
func (s *tomlScanner) record(path []string, span TOMLSpan, prefixes bool) {
	if len(path) == 0 {
		return
	}
	full := TOMLPath(path)
	if old, ok := s.spans[full]; !ok || old.implicit {
		s.spans[full] = span
	}
	if !prefixes {
		return
	}
	// The path of each enclosing table is a prefix of full, up to the
	// separator after its last part.
	end := len(full)
	for n := len(path) - 1; n > 0; n-- {
		end -= len(path[n]) + 1
		p := full[:end]
		if _, ok := s.spans[p]; ok {
			break
		}
		s.spans[p] = TOMLSpan{KeyStart: span.KeyStart, KeyEnd: span.KeyEnd, ValStart: span.KeyStart, ValEnd: span.KeyEnd, implicit: true}
	}
}

func (s *tomlScanner) peek() byte { return s.peekAt(0) }

func (s *tomlScanner) peekAt(n int) byte {
	if s.pos+n < len(s.src) {
		return s.src[s.pos+n]
	}
	return 0
}

func (s *tomlScanner) hasPrefix(p string) bool {
	return strings.HasPrefix(string(s.src[s.pos:min(s.pos+len(p), len(s.src))]), p)
}

// skipBlank skips spaces and tabs, and with newlines set also line ends
// and comments.
func (s *tomlScanner) skipBlank(newlines bool) {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case ' ', '\t':
			s.pos++
		case '\r', '\n':
			if !newlines {
				return
			}
			s.pos++
		case '#':
			if !newlines {
				return
			}
			s.skipLine()
		default:
			return
		}
	}
}

// skipLine moves past the next line end.
func (s *tomlScanner) skipLine() {
	for s.pos < len(s.src) && s.src[s.pos] != '\n' {
		s.pos++
	}
	if s.pos < len(s.src) {
		s.pos++
	}
}

// trimmedEnd returns the current position with trailing blanks before it
// removed, but not before start.
func (s *tomlScanner) trimmedEnd(start int) int {
	end := s.pos
	for end > start && (s.src[end-1] == ' ' || s.src[end-1] == '\t' || s.src[end-1] == '\r' || s.src[end-1] == '\n') {
		end--
	}
	return end
}

func isTOMLBareKeyByte(b byte) bool {
	return b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}

// key reads a dotted key. It reports false when there is none, or when it
// has too many parts.
func (s *tomlScanner) key() ([]string, bool) {
	start := s.pos
	var parts []string
	for {
		part, ok := s.simpleKey()
		if !ok {
			return nil, false
		}
		if len(parts) == MaxTOMLKeyParts {
			s.tooDeep(start, fmt.Sprintf("a key or table name has more than %d dotted parts", MaxTOMLKeyParts))
			return nil, false
		}
		parts = append(parts, part)
		save := s.pos
		s.skipBlank(false)
		if s.peek() != '.' {
			s.pos = save
			return parts, true
		}
		s.pos++
		s.skipBlank(false)
	}
}

// simpleKey reads one bare or quoted key.
func (s *tomlScanner) simpleKey() (string, bool) {
	start := s.pos
	switch s.peek() {
	case '"':
		if s.hasPrefix(`"""`) {
			return "", false
		}
		if !s.basicString() {
			return "", false
		}
		raw := string(s.src[start:s.pos])
		if k, err := strconv.Unquote(raw); err == nil {
			return k, true
		}
		return raw[1 : len(raw)-1], true
	case '\'':
		if s.hasPrefix(`'''`) {
			return "", false
		}
		if !s.literalString() {
			return "", false
		}
		return string(s.src[start+1 : s.pos-1]), true
	}
	for s.pos < len(s.src) && isTOMLBareKeyByte(s.src[s.pos]) {
		s.pos++
	}
	return string(s.src[start:s.pos]), s.pos > start
}

// basicString reads a one-line "…" string with escapes.
func (s *tomlScanner) basicString() bool {
	s.pos++
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case '\\':
			s.pos += 2
		case '"':
			s.pos++
			return true
		case '\n':
			return false
		default:
			s.pos++
		}
	}
	s.pos = len(s.src)
	return false
}

// literalString reads a one-line '…' string.
func (s *tomlScanner) literalString() bool {
	s.pos++
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case '\'':
			s.pos++
			return true
		case '\n':
			return false
		}
		s.pos++
	}
	return false
}

// multiline reads a """…""" or ”'…”' string; quote is its delimiter.
func (s *tomlScanner) multiline(quote byte, escapes bool) {
	delim := strings.Repeat(string(quote), 3)
	s.pos += 3
	for s.pos < len(s.src) {
		switch {
		case escapes && s.src[s.pos] == '\\':
			s.pos += 2
		case s.hasPrefix(delim):
			s.pos += 3
			// Up to two more quotes belong to the content.
			for n := 0; n < 2 && s.peek() == quote; n++ {
				s.pos++
			}
			return
		default:
			s.pos++
		}
	}
	s.pos = min(s.pos, len(s.src))
}

// value reads one value and records the spans of what it contains under
// path.
func (s *tomlScanner) value(path []string) {
	switch s.peek() {
	case '"':
		if s.hasPrefix(`"""`) {
			s.multiline('"', true)
		} else {
			s.basicString()
		}
	case '\'':
		if s.hasPrefix(`'''`) {
			s.multiline('\'', false)
		} else {
			s.literalString()
		}
	case '[':
		s.nested(path, s.array)
	case '{':
		s.nested(path, s.inlineTable)
	default:
		for s.pos < len(s.src) && strings.IndexByte(",]}#\r\n", s.src[s.pos]) < 0 {
			s.pos++
		}
	}
	s.pos = min(s.pos, len(s.src))
}

// nested runs read for an array or inline table unless nesting is too
// deep, in which case the scan ends.
func (s *tomlScanner) nested(path []string, read func([]string)) {
	if s.depth >= MaxTOMLScanDepth {
		s.tooDeep(s.pos, fmt.Sprintf("arrays and inline tables nest more than %d deep", MaxTOMLScanDepth))
		return
	}
	s.depth++
	read(path)
	s.depth--
}

func (s *tomlScanner) array(path []string) {
	s.pos++ // [
	for i := 0; ; i++ {
		s.skipBlank(true)
		if s.pos >= len(s.src) {
			return
		}
		if s.peek() == ']' {
			s.pos++
			return
		}
		start := s.pos
		elem := append(path[:len(path):len(path)], TOMLIndex(i))
		s.value(elem)
		s.record(elem, TOMLSpan{KeyStart: start, KeyEnd: start, ValStart: start, ValEnd: s.trimmedEnd(start)}, false)
		s.skipBlank(true)
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return
		default:
			return
		}
	}
}

func (s *tomlScanner) inlineTable(path []string) {
	s.pos++ // {
	for {
		s.skipBlank(true)
		if s.pos >= len(s.src) {
			return
		}
		if s.peek() == '}' {
			s.pos++
			return
		}
		start := s.pos
		key, ok := s.key()
		keyEnd := s.pos
		s.skipBlank(false)
		if !ok || s.peek() != '=' {
			return
		}
		s.pos++
		s.skipBlank(false)
		full := append(path[:len(path):len(path)], key...)
		valStart := s.pos
		s.value(full)
		s.record(full, TOMLSpan{KeyStart: start, KeyEnd: keyEnd, ValStart: valStart, ValEnd: s.trimmedEnd(valStart)}, true)
		s.skipBlank(true)
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return
		default:
			return
		}
	}
}

// TOMLKey writes a key as TOML would: bare when it can be, quoted
// otherwise.
func TOMLKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isTOMLBareKeyByte(k[i]) {
			return strconv.Quote(k)
		}
	}
	return k
}
