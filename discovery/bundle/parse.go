package bundle

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
)

// Parse reads one file of a bundle repository: its front matter or YAML,
// its kind's schema, and the @mentions of its Markdown body. It never
// panics and never reads another file; bad input becomes diagnostics.
// src is kept by the File (for positions): do not modify it afterwards.
func Parse(path string, src []byte, opts Options) *File {
	f := &File{Path: path, Size: len(src), src: src}
	s := &sink{path: path}
	d := &doc{path: path, src: src, diags: s}
	defer func() { f.Diagnostics, f.Fixes = s.list(), d.fixes }()

	ext := strings.ToLower(filepath.Ext(path))
	f.Markdown = ext == ".md"
	rel := opts.Rel
	if rel == "" {
		rel = filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
	}
	f.Kind = opts.Kind
	if f.Kind == KindOther {
		f.Kind = Classify(rel)
	}
	if !validUTF8(src, f.Lines, s) {
		f.Refused = "the file is not valid UTF-8"
		return f
	}
	if f.Kind == KindOther && !mayClassify(src, f.Markdown) {
		f.Body = Span{len(src), len(src)}
		return f
	}
	if f.Kind == KindContext || (!f.Markdown && ext != ".yaml" && ext != ".yml") {
		b := bomLen(src)
		f.Body = Span{b, len(src)}
		return f
	}
	d.lines = f.Lines()

	var root *yaml.Node
	var perr error
	if f.Markdown {
		sp := splitFrontMatter(src)
		f.Body = stripSpan(src, sp.bodyStart, len(src))
		switch {
		case sp.found:
			root, perr = d.parseYAML(src[sp.fmStart:sp.fmEnd], d.lines.Position(sp.fmStart).Line)
			var multi errMultiDoc
			if errors.As(perr, &multi) {
				d.diags.add(CodeYAMLSyntax, diag.SeverityError, d.lines.LineRange(multi.line-1+d.base),
					"a --- line inside the front matter starts a second YAML document, which the runtime's loader refuses")
			}
		case sp.unfinished:
			d.noFrontMatter = true
			s.add(CodeUnterminated, diag.SeverityError, d.lines.LineRange(0),
				"the front matter opened here has no closing --- line; the runtime reads no front matter and takes the whole file as the body")
		case f.Kind == KindAgent || f.Kind == KindMode || f.Kind == KindSkill:
			d.noFrontMatter = true
			s.add(CodeFrontMatterMissing, diag.SeverityError, d.lines.LineRange(0),
				"this %s has no front matter, so the runtime reads none of its settings: open the file with ---, its YAML, and a closing ---", f.Kind)
		}
	} else {
		b := bomLen(src)
		if b > 0 {
			d.bomCol = 1
		}
		parsed := false
		if f.Kind == KindRecipe && !opts.whole {
			// A recipe's long prompts are skipped by line, not scanned by
			// the YAML parser: the structure and positions are the same.
			// Should the skipping change anything, the file is parsed whole.
			if masked := maskBlockScalars(src[b:]); masked != nil {
				quiet := &doc{path: path, src: src, lines: d.lines, diags: &sink{path: path}, bomCol: d.bomCol}
				if r, err := quiet.parseYAML(masked, 0); err == nil {
					root, parsed, d.masked = r, true, true
				}
			}
		}
		if !parsed {
			root, perr = d.parseYAML(src[b:], 0)
		}
		var multi errMultiDoc
		if errors.As(perr, &multi) {
			if sp := splitFrontMatter(src); sp.found {
				s.add(CodeMarkdownInYAML, diag.SeverityError, d.lines.LineRange(d.lines.Position(sp.fmEnd).Line+1),
					"this .yaml file holds Markdown front matter and a body; the runtime's YAML loader refuses it (expected a single document): rename it to .md, or remove the --- lines and the body")
			} else {
				s.add(CodeYAMLSyntax, diag.SeverityError, d.lines.LineRange(max(multi.line-1, 0)),
					"a --- line starts a second YAML document, which the runtime's loader refuses (expected a single document in the stream)")
			}
		}
	}
	defer func() { f.noMentions = f.Kind == KindOther }()
	if perr != nil {
		f.Refused = "its YAML does not load"
		return f
	}
	var data any
	if root != nil {
		v, err := d.decode(root)
		if err != nil {
			f.Refused = "its YAML does not load"
			return f
		}
		data = v
	}
	m, isMap := data.(*Map)
	if data != nil && !isMap {
		what := "front matter"
		if !f.Markdown {
			what = "YAML"
		}
		if Truthy(data) {
			s.add(CodeNotMapping, diag.SeverityError, d.rangeOf(root),
				"the %s is %s, not a mapping of keys; the runtime cannot read it", what, TypeName(data))
			f.Refused = "its " + what + " is not a mapping"
			return f
		}
		data, m = nil, nil // the runtime reads a falsy document as {}
	}
	if f.Kind == KindOther && m != nil {
		f.Kind = classifyContent(m, f.Markdown)
	}
	switch f.Kind {
	case KindBundle:
		f.Bundle = d.bundle(root, m, f, opts)
		if f.Bundle.LoadError != "" {
			f.Refused = f.Bundle.LoadError
		}
	case KindAgent:
		f.Agent = d.agent(root, m, f)
	case KindMode:
		f.Mode = d.mode(root, m)
	case KindSkill:
		f.Skill = d.skill(root, m, f)
	case KindRecipe:
		f.Recipe = d.recipe(root, m)
	}
	return f
}

// classifyContent decides the kind of a file its path does not: a bundle
// when it has bundle: or includes:, a recipe when it has steps: or stages:.
func classifyContent(m *Map, markdown bool) Kind {
	if _, ok := m.Get("bundle"); ok {
		return KindBundle
	}
	if _, ok := m.Get("includes"); ok {
		return KindBundle
	}
	if !markdown {
		if _, ok := m.Get("steps"); ok {
			return KindRecipe
		}
		if _, ok := m.Get("stages"); ok {
			return KindRecipe
		}
	}
	return KindOther
}

// stripSpan returns the span of src[start:end] without the spaces Python's
// strip removes.
func stripSpan(src []byte, start, end int) Span {
	body := src[start:end]
	t := pyStrip(body)
	if len(t) == 0 {
		return Span{end, end}
	}
	lead := len(body) - len(trimLeftPy(body))
	return Span{start + lead, start + lead + len(t)}
}

func trimLeftPy(b []byte) []byte {
	for i, r := range string(b) {
		if !isPySpace(r) {
			return b[i:]
		}
	}
	return nil
}

// mayClassify reports whether a file its path does not classify may still
// be a bundle or a recipe: a line starts with bundle:, includes:, steps:
// or stages: (in the front matter, for Markdown).
func mayClassify(src []byte, markdown bool) bool {
	text := src[bomLen(src):]
	if markdown {
		if !bytes.HasPrefix(text, []byte("---")) {
			return false
		}
		if m := matchFrontMatter(text); m != nil {
			text = text[:m[3]]
		}
	}
	for _, key := range [][]byte{[]byte("bundle:"), []byte("includes:"), []byte("steps:"), []byte("stages:")} {
		if bytes.HasPrefix(text, key) || bytes.Contains(text, append([]byte("\n"), key...)) {
			return true
		}
	}
	return false
}
