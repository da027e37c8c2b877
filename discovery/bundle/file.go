package bundle

import (
	pathpkg "path"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Kind is what a file of a bundle repository is.
type Kind uint8

// The kinds of files. KindOther files are not checked.
const (
	KindOther   Kind = iota
	KindBundle       // bundle.md, bundle.yaml, behaviors/*, providers/*, bundles/*, anything with bundle: or includes:
	KindAgent        // agents/*.md
	KindMode         // modes/*.md
	KindSkill        // skills/<name>/SKILL.md
	KindRecipe       // a YAML file with steps: or stages:, or under recipes/
	KindContext      // context/**: text the runtime reads whole
)

var kindNames = [...]string{"other", "bundle", "agent", "mode", "skill", "recipe", "context"}

// String names k as the JSON forms write it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "other"
}

// MarshalText writes k's name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// File is one parsed file. It is never modified after Parse returns, so a
// cache may keep it and share it between goroutines.
type File struct {
	Path     string // absolute, cleaned
	Kind     Kind
	Markdown bool // a .md file: front matter and a body
	Size     int  // bytes

	// Body is where the Markdown body starts and ends (byte offsets); for
	// a bundle or an agent it is the instruction, stripped as the runtime
	// strips it. Empty for YAML files.
	Body Span

	// Exactly one of these is set for a file of that kind that parsed
	// far enough to have one.
	Bundle *Bundle
	Agent  *Agent
	Mode   *Mode
	Skill  *Skill
	Recipe *Recipe

	// Diagnostics are the file's own: syntax and schema. References to
	// other files are checked by composition.
	Diagnostics []diag.Diagnostic
	// Fixes are the fixes of some of Diagnostics that need no choice.
	Fixes []Fix

	// Refused says why the runtime's loader would raise on this file
	// (its YAML, or a section it cannot read); empty when it loads it.
	Refused string

	src []byte

	linesOnce sync.Once
	lines     *syntax.LineIndex

	charsOnce sync.Once
	chars     int

	mentionsOnce sync.Once
	mentions     []Mention
	noMentions   bool // a file whose body the runtime never reads for mentions
}

// Chars returns the number of characters of the file (what the runtime's
// token estimate counts), counted the first time it is asked for.
func (f *File) Chars() int {
	f.charsOnce.Do(func() { f.chars = utf8.RuneCount(f.src) })
	return f.chars
}

// Mentions returns the @mentions of the body, as the runtime finds them
// (code blocks and inline code left out), in order, repeats included. They
// are found the first time they are asked for.
func (f *File) Mentions() []Mention {
	f.mentionsOnce.Do(func() {
		if !f.noMentions && f.Markdown {
			f.mentions = findMentions(f.src, f.Body, f.Lines)
		}
	})
	return f.mentions
}

// Text returns the file's bytes. They are shared: do not modify them.
func (f *File) Text() []byte { return f.src }

// Lines returns the line index of the file's text, for positions, made
// the first time it is asked for.
func (f *File) Lines() *syntax.LineIndex {
	f.linesOnce.Do(func() { f.lines = syntax.NewLineIndex(f.src) })
	return f.lines
}

// Span is a byte range of a file's text.
type Span struct {
	Start, End int
}

// Len returns the length of s in bytes.
func (s Span) Len() int { return s.End - s.Start }

// Mention is an @mention in a Markdown body.
type Mention struct {
	Text  string // as the runtime reads it, with the @
	Range diag.Range
}

// Namespace returns the part of an @ns:path mention before the colon, and
// its path after it; ok is false for a mention without a colon.
func (m Mention) Namespace() (ns, path string, ok bool) {
	body := strings.TrimPrefix(m.Text, "@")
	ns, path, ok = strings.Cut(body, ":")
	return ns, path, ok
}

// Options adjust Parse.
type Options struct {
	// Kind forces the kind of the file; 0 classifies it by its path and
	// content (see Classify).
	Kind Kind
	// Manifest marks an amplifier-agent manifest (the prepared cache's
	// bundle.md), which must name a default_provider.
	Manifest bool
	// Rel is the file's path relative to its repository's root (slash
	// separated), which Classify reads; empty means the file's own name
	// and directory only.
	Rel string

	whole bool // parse a recipe whole, its long texts too (tests)
}

// Classify returns the kind a file has by its path relative to its
// repository's root (slash separated), or KindOther when its content must
// decide (a YAML or Markdown file elsewhere is a bundle when it has
// bundle: or includes:, a recipe when it has steps: or stages:).
func Classify(rel string) Kind {
	path := filepath.ToSlash(rel)
	base := pathpkg.Base(path)
	dir := pathpkg.Base(pathpkg.Dir(path))
	ext := strings.ToLower(filepath.Ext(base))
	isMD := ext == ".md"
	isYAML := ext == ".yaml" || ext == ".yml"
	switch {
	case base == "bundle.md" || base == "bundle.yaml" || base == "bundle.yml":
		return KindBundle
	case base == "SKILL.md" && pathpkg.Base(pathpkg.Dir(pathpkg.Dir(path))) == "skills":
		return KindSkill
	case isMD && strings.EqualFold(base, "README.md") && dir != "context":
		return KindOther
	case isMD && inDir(path, "context"):
		return KindContext
	case isMD && dir == "agents":
		return KindAgent
	case isMD && dir == "modes":
		return KindMode
	case isYAML && (dir == "behaviors" || dir == "providers" || dir == "bundles"):
		return KindBundle
	case isYAML && inDir(path, "recipes"):
		return KindRecipe
	}
	return KindOther
}

// inDir reports whether a directory of the relative path is named name.
func inDir(path, name string) bool {
	dirs := strings.Split(pathpkg.Dir(path), "/")
	for _, d := range dirs {
		if d == name {
			return true
		}
	}
	return false
}
