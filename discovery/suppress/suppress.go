package suppress

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Comment is one suppression comment of a file:
//
//	# amplidex: ignore[code, …]       on the line it ends
//	# amplidex: ignore-file[code, …]  anywhere in the file
//
// written as a YAML comment in the front matter of a Markdown document
// (profiles, agents, bundles) or in a YAML file (a bundle's behaviors,
// recipes), or as a TOML comment in pyproject.toml;
// in the Markdown body of a document (a context file's, or below the
// front matter), where `#` opens a heading, as an HTML comment on one
// line:
//
//	<!-- amplidex: ignore[code, …] -->
//
// A code may be an area ("schema/"); `ignore` without brackets covers
// every code on its line.
type Comment struct {
	// Range is the comment, from its '#' (or its "<!--" to its "-->").
	Range diag.Range
	// File is set for ignore-file.
	File bool
	// Codes are the codes or areas named, with where each is written;
	// empty for a bare ignore.
	Codes []Code
	// Problem, when set, says why the comment is malformed; it then
	// suppresses nothing and is reported.
	Problem string
}

// Code is one code named by a suppression comment.
type Code struct {
	Code  string
	Range diag.Range
}

// suppressMarker opens a suppression comment, after its '#'.
const suppressMarker = "amplidex:"

// Parse returns the suppression comments of the file at path,
// whose bytes are src: those in the front matter of a Markdown file (YAML
// comments) and in its body (HTML comments), and those of a TOML or YAML
// file. Other files have none. It reads src once.
func Parse(path string, src []byte) []Comment {
	if !hasSuppressMarker(src) {
		return nil
	}
	from, to, body := 0, len(src), len(src)
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md":
		if fm, err := syntax.SplitFrontMatter(src); err == nil {
			from, to, body = fm.Start, fm.End, fm.BodyStart
		} else {
			// No front matter (a context file), or one that does not
			// end: the whole file is Markdown.
			from, to, body = 0, 0, 0
		}
	case ".toml", ".yaml", ".yml":
		// TOML, and the YAML files of bundle repositories: comments
		// throughout.
	default:
		return nil
	}
	var (
		out   []Comment
		lines *syntax.LineIndex
	)
	scan := func(from, to int, parse func(line []byte, off int, lines *syntax.LineIndex) (Comment, bool)) {
		for i := from; i < to; {
			line, next := syntax.NextLine(src[:to], i)
			if j := bytes.Index(line, []byte(suppressMarker)); j >= 0 {
				if lines == nil {
					lines = syntax.NewLineIndex(src)
				}
				if s, ok := parse(line, i, lines); ok {
					out = append(out, s)
				}
			}
			i = next
		}
	}
	scan(from, to, parseSuppression)
	scan(body, len(src), parseHTMLSuppression)
	return out
}

// hasSuppressMarker reports whether src holds suppressMarker, as
// bytes.Contains would, looking for its "x", rare in prose and YAML,
// rather than its first byte, which is not.
func hasSuppressMarker(src []byte) bool {
	const at = len(suppressMarker) - 2 // where its "x" is
	for from := at; from < len(src); {
		i := bytes.IndexByte(src[from:], suppressMarker[at])
		if i < 0 {
			return false
		}
		i += from
		if start := i - at; start+len(suppressMarker) <= len(src) && string(src[start:start+len(suppressMarker)]) == suppressMarker {
			return true
		}
		from = i + 1
	}
	return false
}

// parseSuppression reads the suppression comment of one line, which
// starts at byte off of the file.
func parseSuppression(line []byte, off int, lines *syntax.LineIndex) (Comment, bool) {
	const usage = "a suppression comment is `# amplidex: ignore[code, …]` or `# amplidex: ignore-file[code, …]`"
	for from := 0; ; {
		h := bytes.IndexByte(line[from:], '#')
		if h < 0 {
			return Comment{}, false
		}
		h += from
		from = h + 1
		// A comment starts a line or follows a blank.
		if h > 0 && line[h-1] != ' ' && line[h-1] != '\t' {
			continue
		}
		pos := skipBlanks(line, h+1)
		if !bytes.HasPrefix(line[pos:], []byte(suppressMarker)) {
			continue
		}
		end := len(bytes.TrimRight(line, " \t\r\n"))
		s := Comment{Range: lines.Range(off+h, off+end)}
		return parseDirective(s, line, skipBlanks(line, pos+len(suppressMarker)), end, off, lines, usage), true
	}
}

// parseHTMLSuppression reads the suppression comment of one line of a
// Markdown body, an HTML comment, which starts at byte off of the file.
func parseHTMLSuppression(line []byte, off int, lines *syntax.LineIndex) (Comment, bool) {
	const usage = "a suppression comment in Markdown is `<!-- amplidex: ignore[code, …] -->` or `<!-- amplidex: ignore-file[code, …] -->`"
	for from := 0; ; {
		h := bytes.Index(line[from:], []byte("<!--"))
		if h < 0 {
			return Comment{}, false
		}
		h += from
		from = h + len("<!--")
		pos := skipBlanks(line, from)
		if !bytes.HasPrefix(line[pos:], []byte(suppressMarker)) {
			continue
		}
		closing := bytes.Index(line[pos:], []byte("-->"))
		if closing < 0 {
			end := len(bytes.TrimRight(line, " \t\r\n"))
			return Comment{Range: lines.Range(off+h, off+end), Problem: "the comment does not end with `-->` on its line"}, true
		}
		closing += pos
		s := Comment{Range: lines.Range(off+h, off+closing+len("-->"))}
		end := len(bytes.TrimRight(line[:closing], " \t"))
		return parseDirective(s, line, skipBlanks(line, pos+len(suppressMarker)), end, off, lines, usage), true
	}
}

// skipBlanks returns the index of the first byte of line at or after pos
// that is not a space or a tab.
func skipBlanks(line []byte, pos int) int {
	for pos < len(line) && (line[pos] == ' ' || line[pos] == '\t') {
		pos++
	}
	return pos
}

// parseDirective reads what follows the marker of a suppression comment,
// from pos to end (where the comment's text ends) of line, which starts
// at byte off of the file, into s; usage says how one is written.
func parseDirective(s Comment, line []byte, pos, end, off int, lines *syntax.LineIndex, usage string) Comment {
	switch {
	case bytes.HasPrefix(line[pos:], []byte("ignore-file")):
		s.File = true
		pos += len("ignore-file")
	case bytes.HasPrefix(line[pos:], []byte("ignore")):
		pos += len("ignore")
	default:
		s.Problem = usage
		return s
	}
	switch {
	case pos < end && line[pos] == '[':
	case pos < end && line[pos] != ' ' && line[pos] != '\t':
		s.Problem = usage
		return s
	case s.File:
		s.Problem = "ignore-file needs the codes it ignores: `amplidex: ignore-file[code, …]`"
		return s
	default:
		return s // a bare ignore: every code on the line
	}
	closing := bytes.IndexByte(line[pos:end], ']')
	if closing < 0 {
		s.Problem = "the list of codes has no closing `]`"
		return s
	}
	closing += pos
	for i := pos + 1; i < closing; {
		j := bytes.IndexByte(line[i:closing], ',')
		if j < 0 {
			j = closing
		} else {
			j += i
		}
		a, b := i, j
		for a < b && (line[a] == ' ' || line[a] == '\t') {
			a++
		}
		for b > a && (line[b-1] == ' ' || line[b-1] == '\t') {
			b--
		}
		if a < b {
			s.Codes = append(s.Codes, Code{Code: string(line[a:b]), Range: lines.Range(off+a, off+b)})
		}
		i = j + 1
	}
	if len(s.Codes) == 0 {
		s.Problem = "the list of codes is empty"
	}
	return s
}

// Files are the suppression comments of files, by path.
type Files map[string][]Comment

// Add reads the suppression comments of the file at path, whose bytes are
// src, into s.
func (s Files) Add(path string, src []byte) {
	if cs := Parse(path, src); len(cs) > 0 {
		s[path] = cs
	}
}

// Apply drops the diagnostics that a suppression comment of their file
// covers, and adds a suppress/unused diagnostic (info) for each code of a
// comment that covers none, for each malformed comment, and for each code
// that is not a diagnostic code. Diagnostics of files without comments
// are kept as they are. ds is not modified; the result is sorted.
func (s Files) Apply(ds []diag.Diagnostic) []diag.Diagnostic {
	type key struct {
		path      string
		sup, code int // code -1: a bare ignore
	}
	used := map[key]bool{}
	out := make([]diag.Diagnostic, 0, len(ds))
	for _, d := range ds {
		covered := false
		for i, sup := range s[d.Path] {
			if sup.Problem != "" || d.Code == diag.CodeSuppressUnused {
				continue
			}
			if !sup.File && sup.Range.Start.Line != d.Range.Start.Line {
				continue
			}
			if len(sup.Codes) == 0 {
				used[key{d.Path, i, -1}], covered = true, true
				continue
			}
			for j, c := range sup.Codes {
				if diag.MatchCode(c.Code, d.Code) {
					used[key{d.Path, i, j}], covered = true, true
				}
			}
		}
		if !covered {
			out = append(out, d)
		}
	}
	for path, sups := range s {
		var limit diag.Limit
		for i, sup := range sups {
			report := func(r diag.Range, format string, args ...any) {
				if !limit.Allow(diag.CodeSuppressUnused, diag.SeverityInfo, r) {
					return
				}
				out = append(out, diag.Diagnostic{Code: diag.CodeSuppressUnused, Severity: diag.SeverityInfo, Path: path, Range: r,
					Message: fmt.Sprintf(format, args...)})
			}
			where := "on this line"
			if sup.File {
				where = "in this file"
			}
			switch {
			case sup.Problem != "":
				report(sup.Range, "suppression comment not understood: %s", sup.Problem)
			case len(sup.Codes) == 0:
				if !used[key{path, i, -1}] {
					report(sup.Range, "this suppression suppresses nothing %s", where)
				}
			default:
				for j, c := range sup.Codes {
					if err := diag.CheckCodePattern(c.Code); err != nil {
						report(c.Range, "suppression of %v", err)
					} else if !used[key{path, i, j}] {
						report(c.Range, "suppression of %s suppresses nothing %s", c.Code, where)
					}
				}
			}
		}
		out = append(out, limit.Summaries(path, "")...)
	}
	diag.Sort(out)
	return out
}

// File applies the suppression comments of one file, whose
// bytes are src, to ds, every diagnostic of that file (see
// Files.Apply): what a language server does for an unsaved buffer,
// and a check for a file no collection holds.
func File(path string, src []byte, ds []diag.Diagnostic) []diag.Diagnostic {
	sups := Parse(path, src)
	if len(sups) == 0 {
		return ds
	}
	return Files{path: sups}.Apply(ds)
}
