package lsp

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/amplidex/amplidex/discovery"
)

// lineBounds returns the byte offsets of the start of line n and of the end
// of its content (before "\n" or "\r\n"); a line past the end is the empty
// line at the end of the text. ok is false when the text has fewer lines.
func lineBounds(text []byte, n int) (start, end int, ok bool) {
	start = 0
	for i := 0; i < n; i++ {
		j := bytes.IndexByte(text[start:], '\n')
		if j < 0 {
			return len(text), len(text), false
		}
		start += j + 1
	}
	end = len(text)
	if j := bytes.IndexByte(text[start:], '\n'); j >= 0 {
		end = start + j
		if end > start && text[end-1] == '\r' {
			end--
		}
	}
	return start, end, true
}

// columnToByte converts a character offset in line (counted in UTF-16 code
// units, or in bytes when utf8 is set) into a byte offset within line. An
// offset past the end is the end; one inside a character is its start.
func columnToByte(line []byte, char int, utf8Enc bool) int {
	if char <= 0 {
		return 0
	}
	units, off := 0, 0
	for off < len(line) {
		r, size := utf8.DecodeRune(line[off:])
		w := size
		if !utf8Enc {
			w = 1
			if r >= 0x10000 && r != utf8.RuneError {
				w = 2
			}
		}
		if units+w > char {
			return off
		}
		units += w
		off += size
	}
	return off
}

// byteToColumn converts a byte offset within line into a character offset
// counted in UTF-16 code units, or bytes when utf8 is set.
func byteToColumn(line []byte, off int, utf8Enc bool) int {
	if off > len(line) {
		off = len(line)
	}
	if utf8Enc {
		return off
	}
	return discovery.UTF16Len(line[:off])
}

// offsetOf converts a Position in the given encoding into a byte offset in
// text. A line past the end is the end of the text; a character past the end
// of its line is the end of the line.
func offsetOf(text []byte, p discovery.Position, utf8Enc bool) int {
	if p.Line < 0 {
		return 0
	}
	start, end, ok := lineBounds(text, p.Line)
	if !ok {
		return len(text)
	}
	return start + columnToByte(text[start:end], p.Character, utf8Enc)
}

// convertPosition re-counts the character of p, given in UTF-16 code units,
// in bytes (toUTF8) or the other way round, using the text's line.
func convertPosition(text []byte, p discovery.Position, toUTF8 bool) discovery.Position {
	start, end, ok := lineBounds(text, p.Line)
	if !ok {
		return p
	}
	line := text[start:end]
	off := columnToByte(line, p.Character, !toUTF8)
	return discovery.Position{Line: p.Line, Character: byteToColumn(line, off, toUTF8)}
}

// convertRange converts both ends of r; see convertPosition.
func convertRange(text []byte, r discovery.Range, toUTF8 bool) discovery.Range {
	return discovery.Range{Start: convertPosition(text, r.Start, toUTF8), End: convertPosition(text, r.End, toUTF8)}
}

// applyChanges applies content changes in order and returns the new text; it
// never modifies text. A range whose end comes before its start is an error
// and nothing is applied.
func applyChanges(text []byte, changes []contentChange, utf8Enc bool) ([]byte, error) {
	out := text
	for i, c := range changes {
		if c.Range == nil {
			out = []byte(c.Text)
			continue
		}
		start := offsetOf(out, c.Range.Start, utf8Enc)
		end := offsetOf(out, c.Range.End, utf8Enc)
		if end < start {
			return text, fmt.Errorf("change %d: range end %d:%d is before its start %d:%d", i,
				c.Range.End.Line, c.Range.End.Character, c.Range.Start.Line, c.Range.Start.Character)
		}
		next := make([]byte, 0, len(out)-(end-start)+len(c.Text))
		next = append(next, out[:start]...)
		next = append(next, c.Text...)
		next = append(next, out[end:]...)
		out = next
	}
	return out, nil
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

// fileKind is what a document is, decided by its path.
type fileKind int

const (
	fileOther fileKind = iota
	fileProfile
	fileAgent
	fileBundle
	filePyproject
	fileLock
)

// kindOf classifies path: profiles/*.md, agents/*.md (README.md excepted),
// bundle.md, pyproject.toml and collections.lock are checked; anything else
// is not.
func kindOf(path string) fileKind {
	base := filepath.Base(path)
	dir := filepath.Base(filepath.Dir(path))
	switch {
	case base == "bundle.md":
		return fileBundle
	case base == "pyproject.toml":
		return filePyproject
	case base == "collections.lock":
		return fileLock
	case !strings.HasSuffix(base, ".md") || strings.EqualFold(base, "README.md") || discovery.IsEditorDropping(base):
		return fileOther
	case dir == "profiles":
		return fileProfile
	case dir == "agents":
		return fileAgent
	}
	return fileOther
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
