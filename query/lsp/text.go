package lsp

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// offsetOf converts a Position in the given encoding (UTF-16 code units,
// or bytes when utf8Enc is set) into a byte offset in the text lines
// indexes. A line past the end is the end of the text; a character past the
// end of its line is the end of the line, and one inside a character is
// where that character starts.
func offsetOf(lines *syntax.LineIndex, p diag.Position, utf8Enc bool) int {
	switch {
	case p.Line < 0:
		return 0
	case p.Line >= lines.Lines():
		return lines.LineStart(p.Line)
	case !utf8Enc:
		return lines.PositionOffset(p)
	}
	return lines.LineStart(p.Line) + byteColumn(lines.Line(p.Line), p.Character)
}

// byteColumn clamps a column counted in bytes to line, and moves one that
// cuts a character back to where the character starts. Like decoding the
// line from its start, it takes an invalid byte for a character of its own.
func byteColumn(line []byte, char int) int {
	if char <= 0 {
		return 0
	}
	if char >= len(line) {
		return len(line)
	}
	// The nearest byte at or before char that may start a character: every
	// such byte is a character boundary, since the bytes a valid sequence
	// continues with cannot start one.
	for b := char; b >= 0 && char-b < utf8.UTFMax; b-- {
		if utf8.RuneStart(line[b]) {
			if _, size := utf8.DecodeRune(line[b:]); b+size > char {
				return b
			}
			return char
		}
	}
	return char
}

// convertPosition re-counts the character of p, given in UTF-16 code units,
// in bytes (toUTF8) or the other way round, on the line of the text lines
// indexes. A position on no line is returned as it is.
func convertPosition(lines *syntax.LineIndex, p diag.Position, toUTF8 bool) diag.Position {
	if p.Line < 0 || p.Line >= lines.Lines() {
		return p
	}
	start := lines.LineStart(p.Line)
	if toUTF8 {
		return diag.Position{Line: p.Line, Character: lines.PositionOffset(p) - start}
	}
	off := start + byteColumn(lines.Line(p.Line), p.Character)
	return diag.Position{Line: p.Line, Character: lines.Position(off).Character}
}

// convertRange converts both ends of r; see convertPosition.
func convertRange(lines *syntax.LineIndex, r diag.Range, toUTF8 bool) diag.Range {
	return diag.Range{Start: convertPosition(lines, r.Start, toUTF8), End: convertPosition(lines, r.End, toUTF8)}
}

// applyChanges applies content changes in order and returns the new text; it
// never modifies text. A range whose end comes before its start is an error
// and nothing is applied.
//
// The work is linear in the text and the changes: a didChange of many
// edits is applied to a rope (see rope), one of a few edits straight to
// the bytes. Text that is not valid UTF-8 (never the case of a text that
// came as a JSON string) takes the straight way, whose positions count
// the invalid bytes one by one, edit after edit.
func applyChanges(text []byte, changes []contentChange, utf8Enc bool) ([]byte, error) {
	if len(changes) <= fewChanges || !validUTF8(text, changes) {
		return applyEach(text, changes, utf8Enc)
	}
	return applyRope(text, changes, utf8Enc, ropeChunk)
}

// applyRope applies changes to valid UTF-8 through a rope of chunks of at
// most chunk bytes.
func applyRope(text []byte, changes []contentChange, utf8Enc bool, chunk int) ([]byte, error) {
	r := newRope(text, chunk)
	for i, c := range changes {
		if c.Range == nil {
			r = newRope([]byte(c.Text), chunk)
			continue
		}
		start := r.offset(c.Range.Start, utf8Enc)
		end := r.offset(c.Range.End, utf8Enc)
		if end < start {
			return text, badRange(i, c.Range)
		}
		r.replace(start, end, []byte(c.Text))
	}
	return r.bytes(), nil
}

// fewChanges is the most changes applied straight to the bytes: each
// costs a pass over the text.
const fewChanges = 4

func validUTF8(text []byte, changes []contentChange) bool {
	if !utf8.Valid(text) {
		return false
	}
	for _, c := range changes {
		if !utf8.ValidString(c.Text) {
			return false
		}
	}
	return true
}

// applyEach applies changes one after the other to a new copy of the
// text, indexing each copy's lines.
func applyEach(text []byte, changes []contentChange, utf8Enc bool) ([]byte, error) {
	out := text
	for i, c := range changes {
		if c.Range == nil {
			out = []byte(c.Text)
			continue
		}
		lines := syntax.NewLineIndex(out)
		start := offsetOf(lines, c.Range.Start, utf8Enc)
		end := offsetOf(lines, c.Range.End, utf8Enc)
		if end < start {
			return text, badRange(i, c.Range)
		}
		next := make([]byte, 0, len(out)-(end-start)+len(c.Text))
		next = append(next, out[:start]...)
		next = append(next, c.Text...)
		next = append(next, out[end:]...)
		out = next
	}
	return out, nil
}

func badRange(i int, r *diag.Range) error {
	return fmt.Errorf("change %d: range end %d:%d is before its start %d:%d", i,
		r.End.Line, r.End.Character, r.Start.Line, r.Start.Character)
}

// uriToPath returns the absolute path of a file URI.
func uriToPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("parse uri %q: %w", uri, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("uri %q: not a file uri", uri)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("uri %q: remote host %q", uri, u.Host)
	}
	if u.Path == "" || !filepath.IsAbs(filepath.FromSlash(u.Path)) {
		return "", fmt.Errorf("uri %q: not an absolute path", uri)
	}
	return filepath.Clean(filepath.FromSlash(u.Path)), nil
}

// pathToURI returns the file URI of an absolute path.
func pathToURI(path string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return u.String()
}

// readFileLimited reads at most max bytes of path; a longer file is an
// error.
func readFileLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("read %s: larger than %d bytes", path, max)
	}
	return b, nil
}
