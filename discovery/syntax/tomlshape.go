package syntax

import (
	"errors"
	"fmt"

	"github.com/BurntSushi/toml"

	"github.com/amplidex/amplidex/discovery/diag"
)

// A TOMLShapeError says where a TOML text exceeds a bound of its shape,
// and which: arrays and inline tables nested more than MaxTOMLScanDepth
// deep, or a key or table name of more than MaxTOMLKeyParts dotted parts.
// Such a text is not decoded.
type TOMLShapeError struct {
	// Range is where the bound is exceeded: the bracket or brace one
	// level too deep, or the start of the key of too many parts.
	Range diag.Range
	// Why says which bound, in the user's terms.
	Why string
}

func (e *TOMLShapeError) Error() string {
	return fmt.Sprintf("%d:%d: TOML not read: %s", e.Range.Start.Line+1, e.Range.Start.Character+1, e.Why)
}

// CheckTOMLShape returns a *TOMLShapeError when the TOML text src nests
// arrays and inline tables more than MaxTOMLScanDepth (32) deep or has a
// key or table name of more than MaxTOMLKeyParts (32) dotted parts, and
// nil otherwise. Real files stay far below both (a handful of levels and
// parts); the TOML decoder's time and memory grow with the square of
// either, so a text beyond them must not reach it: every TOML file
// amplidex reads (pyproject.toml, the user's configuration, a project's
// amplidex.toml, .amplidex.toml and [tool.amplidex]) is checked first.
//
// It reads src once, in time linear in its size and constant memory (but
// for the line index it builds to say where a bound is exceeded). It
// looks at no more of the grammar than strings, comments, brackets and
// dots, so that no text can hide its nesting from it: on a valid text it
// counts exactly what the decoder nests; on any other it counts at least
// that much up to the point where the decoder stops with an error.
func CheckTOMLShape(src []byte) error {
	off, why := tomlShape(src)
	if why == "" {
		return nil
	}
	return &TOMLShapeError{Range: NewLineIndex(src).Range(off, min(off+1, len(src))), Why: why}
}

// DecodeTOML decodes the TOML text src into v as toml.Decode does, once
// CheckTOMLShape accepts it (its error is then a *TOMLShapeError). A
// panic of the decoder is an error too, so that no input can crash the
// caller. It is how every TOML file amplidex reads is decoded.
func DecodeTOML(src []byte, v any) (toml.MetaData, error) {
	if err := CheckTOMLShape(src); err != nil {
		return toml.MetaData{}, err
	}
	return decodeTOMLInto(src, v)
}

// decodeTOMLInto decodes src into v, turning a panic of the decoder into
// an error. The caller has checked the text's shape.
func decodeTOMLInto(src []byte, v any) (md toml.MetaData, err error) {
	defer func() {
		if r := recover(); r != nil {
			// The panic's own text is the decoder's, not the user's.
			err = errors.New("the TOML decoder failed on this file")
		}
	}()
	return toml.Decode(string(src), v)
}

// tomlShape returns the byte offset at which src exceeds a bound of its
// shape and why, or "" when it does not (see CheckTOMLShape).
//
// Outside strings and comments, every '[' and '{' opens a level and
// every ']' and '}' closes one; a table header's brackets count too, at
// the top, where no value is open. A run of simple keys (bare or quoted)
// joined by dots, with blanks around them, is one key; anything else
// ends the run. Values hold at most one dot in such a run (1.5), so only
// a key can reach the bound.
func tomlShape(src []byte) (int, string) {
	depth := 0
	parts, runStart := 0, -1 // the parts of the dotted run being read, and where it starts
	// inPart is set while a simple key of the run is being read, or just
	// after one: a dot then starts the next part.
	inPart := false
	part := func(at int) bool {
		if runStart < 0 {
			runStart, parts = at, 1
		} else if !inPart {
			parts++
		}
		inPart = true
		return parts > MaxTOMLKeyParts
	}
	endRun := func() { runStart, parts, inPart = -1, 0, false }
	keyParts := fmt.Sprintf("a key or table name has more than %d dotted parts", MaxTOMLKeyParts)
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			endRun()
			continue
		case c == '"' || c == '\'':
			if part(i) {
				return runStart, keyParts
			}
			i = skipTOMLString(src, i)
			continue
		case isTOMLBareKeyByte(c):
			if !inPart && part(i) {
				return runStart, keyParts
			}
		case c == '.':
			if runStart >= 0 {
				inPart = false
			}
		case c == ' ' || c == '\t':
			// Blanks may stand around the dots of a key; they end no run.
		case c == '[' || c == '{':
			endRun()
			if depth++; depth > MaxTOMLScanDepth {
				return i, fmt.Sprintf("arrays and inline tables nest more than %d deep", MaxTOMLScanDepth)
			}
		case c == ']' || c == '}':
			endRun()
			depth = max(depth-1, 0)
		default:
			endRun()
		}
		i++
	}
	return 0, ""
}

// skipTOMLString returns the offset just past the string that starts at
// src[i] (a quote): basic or literal, on one line or on several. A
// one-line string that a line end cuts short ends before it.
func skipTOMLString(src []byte, i int) int {
	q := src[i]
	escapes := q == '"'
	if i+2 < len(src) && src[i+1] == q && src[i+2] == q {
		for i += 3; i < len(src); i++ {
			switch {
			case escapes && src[i] == '\\':
				i++
			case src[i] == q && i+2 < len(src) && src[i+1] == q && src[i+2] == q:
				i += 3
				// Up to two more quotes belong to the content.
				for n := 0; n < 2 && i < len(src) && src[i] == q; n++ {
					i++
				}
				return i
			}
		}
		return len(src)
	}
	for i++; i < len(src); i++ {
		switch {
		case src[i] == '\n':
			return i
		case escapes && src[i] == '\\' && i+1 < len(src) && src[i+1] != '\n':
			i++
		case src[i] == q:
			return i + 1
		}
	}
	return len(src)
}
