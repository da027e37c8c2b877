package syntax

import (
	"bytes"
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
)

// Ref is a reference written in a file (an extends value, an agent name, an
// @mention) and where it is written.
type Ref struct {
	Value string     `json:"value"`
	Range diag.Range `json:"range"`
}

// Mention is an `@collection:path` reference found in Markdown text.
type Mention struct {
	Collection string     `json:"collection"`
	Path       string     `json:"path"`
	Range      diag.Range `json:"range"`
}

// Text returns the mention as written, without the "@".
func (m Mention) Text() string { return m.Collection + ":" + m.Path }

// FindMentions returns the `@collection:path` mentions in src[from:],
// skipping fenced code blocks, inline code spans and double-quoted text.
// Ranges are positions in src through lines.
func FindMentions(src []byte, from int, lines *LineIndex) []Mention {
	if bytes.IndexByte(src[from:], '@') < 0 {
		return nil // most files mention nothing
	}
	var out []Mention
	var cur lineCursor // mentions come in order: each range decodes only the bytes since the last
	inFence := false
	var fence []byte
	off := from
	for off < len(src) {
		end := bytes.IndexByte(src[off:], '\n')
		next := len(src)
		if end >= 0 {
			next = off + end + 1
			end = off + end
		} else {
			end = len(src)
		}
		line := src[off:end]
		trimmed := bytes.TrimLeft(line, " \t")
		if f := fenceMarker(trimmed); f != nil {
			switch {
			case !inFence:
				inFence, fence = true, f
			case bytes.HasPrefix(trimmed, fence) && len(bytes.TrimSpace(trimmed[len(f):])) == 0:
				inFence = false
			}
			off = next
			continue
		}
		// A mention starts with "@": a line without one has none.
		if !inFence && bytes.IndexByte(line, '@') >= 0 {
			out = appendLineMentions(out, src, off, end, lines, &cur)
		}
		off = next
	}
	return out
}

// fenceMarker returns the run of ``` or ~~~ (three or more) that opens line,
// or nil.
func fenceMarker(line []byte) []byte {
	if len(line) < 3 || (line[0] != '`' && line[0] != '~') {
		return nil
	}
	c := line[0]
	n := 0
	for n < len(line) && line[n] == c {
		n++
	}
	if n < 3 {
		return nil
	}
	return line[:n]
}

// appendLineMentions scans src[start:end], one line, for mentions outside
// code spans and double quotes, converting their spans with cur.
func appendLineMentions(out []Mention, src []byte, start, end int, lines *LineIndex, cur *lineCursor) []Mention {
	inQuote := false
	codeRun := 0 // length of the backtick run that opened the current code span
	for i := start; i < end; i++ {
		c := src[i]
		switch {
		case c == '`':
			n := 1
			for i+n < end && src[i+n] == '`' {
				n++
			}
			switch {
			case codeRun == 0:
				codeRun = n
			case codeRun == n:
				codeRun = 0
			}
			i += n - 1
		case codeRun > 0:
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '@' && (i == start || !isMentionByte(src[i-1])):
			m, n := scanMention(src[i+1 : end])
			if n == 0 {
				continue
			}
			m.Range = lines.rangeAt(cur, i, i+1+n)
			out = append(out, m)
			i += n
		}
	}
	return out
}

// scanMention reads `collection:path` at the start of b and returns it and
// how many bytes it spans; 0 when b does not start with a mention.
func scanMention(b []byte) (Mention, int) {
	i := 0
	for i < len(b) && (isLower(b[i]) || isDigit(b[i]) || b[i] == '-' || b[i] == '_') {
		i++
	}
	if i == 0 || i >= len(b) || b[i] != ':' {
		return Mention{}, 0
	}
	coll := string(b[:i])
	j := i + 1
	for j < len(b) && !isMentionEnd(b[j]) {
		j++
	}
	// Trailing punctuation belongs to the sentence, not the path.
	for j > i+1 && strings.ContainsRune(".,;:!?", rune(b[j-1])) {
		j--
	}
	if j == i+1 {
		return Mention{}, 0
	}
	return Mention{Collection: coll, Path: string(b[i+1 : j])}, j
}

func isMentionEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '`', '"', '\'', ')', '(', ']', '[', '<', '>', '{', '}', ',', '|', '*':
		return true
	}
	return false
}

// isMentionByte reports bytes that, before an "@", make it part of a word
// (an e-mail address, a decorator) rather than a mention.
func isMentionByte(c byte) bool {
	return isLower(c) || isDigit(c) || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '-' || c == '/' || c == '@'
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
