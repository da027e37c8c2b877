package discovery

import (
	"bytes"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/suppress"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Facts is what one file contributes to the index: the fields other files
// refer to, the references it makes, and its own diagnostics. Facts are
// computed from a file's bytes alone, so they can be cached by content and
// reused across runs; cross-references are checked later, over a Set.
type Facts struct {
	Kind        Kind   `json:"kind"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// Extends is a profile's parent reference.
	Extends *syntax.Ref `json:"extends,omitempty"`
	// AgentsMode is "all", "none", "list" or "inline" for a profile's agents
	// key; "" when absent. Agents holds the names of a list.
	AgentsMode string       `json:"agents_mode,omitempty"`
	Agents     []syntax.Ref `json:"agents,omitempty"`
	// Mentions are the @collection:path references of the body.
	Mentions []syntax.Mention `json:"mentions,omitempty"`
	// Front is a profile's decoded front matter, for merging, in the
	// author's key order.
	Front *syntax.Map `json:"front,omitzero"`
	// Metadata is set for pyproject.toml files.
	Metadata *Metadata `json:"metadata,omitempty"`
	// Diagnostics are the file's own problems.
	Diagnostics []diag.Diagnostic `json:"diagnostics,omitempty"`
	// Suppressions are the file's suppression comments (see
	// suppress.Parse); brief Facts keep them, for every View applies
	// them (see Collection.Suppress).
	Suppressions []suppress.Comment `json:"suppressions,omitempty"`

	// The fields below are sized and ordered for the tens of thousands of
	// brief Facts a daemon keeps.

	// blocks is, for a brief profile, the binary form of its front
	// matter's session and exclude blocks (see ProfileBlocks); "" when it
	// has neither or no front matter.
	blocks string
	// counts and mentions stand, in brief Facts, for the dropped
	// Diagnostics and Mentions: mentions is set when the file makes any.
	counts   briefCounts
	mentions bool
	// brief is set on Facts that hold only what answers need at once (see
	// Brief).
	brief bool
	front bool // a brief profile had usable front matter
	// transient is set on the Facts of a file that could not be read for
	// a reason that says nothing of the file (see IsTransient).
	transient bool
}

// briefCounts is DiagnosticCounts as brief Facts keep them.
type briefCounts struct{ errors, warnings, infos int32 }

func countsOf(c DiagnosticCounts) briefCounts {
	return briefCounts{int32(c.Errors), int32(c.Warnings), int32(c.Infos)}
}

func (c briefCounts) wide() DiagnosticCounts {
	return DiagnosticCounts{Errors: int(c.errors), Warnings: int(c.warnings), Infos: int(c.infos)}
}

// DiagnosticCounts counts diagnostics by severity.
type DiagnosticCounts struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
}

// Add counts one more diagnostic of severity s.
func (c *DiagnosticCounts) Add(s diag.Severity) {
	switch s {
	case diag.SeverityError:
		c.Errors++
	case diag.SeverityWarning:
		c.Warnings++
	default:
		c.Infos++
	}
}

// Total is how many diagnostics were counted.
func (c DiagnosticCounts) Total() int { return c.Errors + c.Warnings + c.Infos }

// IsBrief reports Facts that hold only what Brief keeps.
func (f *Facts) IsBrief() bool { return f.brief }

// Counts counts the file's own diagnostics by severity (also for brief
// Facts, which do not hold them).
func (f *Facts) Counts() DiagnosticCounts {
	if f.brief {
		return f.counts.wide()
	}
	var c DiagnosticCounts
	for _, d := range f.Diagnostics {
		c.Add(d.Severity)
	}
	return c
}

// HasMentions reports whether the file makes @mentions (also for brief
// Facts, which do not hold them).
func (f *Facts) HasMentions() bool {
	if f.brief {
		return f.mentions
	}
	return len(f.Mentions) > 0
}

// Brief returns Facts that hold what answers need at once: the kind,
// name, description, extends, agents and metadata, with the counts of the
// diagnostics and mentions instead of them and without the front matter.
// A collection whose Loader has Details keeps brief Facts and asks
// Details for the rest when a check or a query needs it. Brief of brief
// Facts is the Facts themselves.
func (f *Facts) Brief() *Facts {
	if f.brief {
		return f
	}
	// Strings are copied: those a parser returns may be parts of the
	// file's whole text, which a kept brief must not hold on to.
	b := &Facts{Kind: f.Kind, Name: strings.Clone(f.Name), Description: strings.Clone(f.Description),
		AgentsMode: strings.Clone(f.AgentsMode), Metadata: f.Metadata.clone(),
		brief: true, counts: countsOf(f.Counts()), mentions: len(f.Mentions) > 0,
		blocks: profileBlocks(f.Front), front: f.Front != nil, transient: f.transient,
		Suppressions: f.Suppressions}
	if f.Extends != nil {
		b.Extends = &syntax.Ref{Value: strings.Clone(f.Extends.Value), Range: f.Extends.Range}
	}
	if f.Agents != nil {
		b.Agents = make([]syntax.Ref, len(f.Agents))
		for i, a := range f.Agents {
			b.Agents[i] = syntax.Ref{Value: strings.Clone(a.Value), Range: a.Range}
		}
	}
	return b
}

// docKind maps a resource kind to the document schema it is checked with.
func docKind(k Kind) (schema.DocKind, bool) {
	switch k {
	case KindProfile:
		return schema.DocProfile, true
	case KindAgent:
		return schema.DocAgent, true
	}
	return "", false
}

// AnalyzeFile computes the Facts of one file of kind k from its bytes.
// Pyproject files are analyzed with kind "" and name pyproject.toml.
func AnalyzeFile(path string, src []byte, k Kind, opts schema.Options) *Facts {
	return analyzeFile(path, src, k, opts, nil)
}

// analyzeFile is AnalyzeFile parsing front matter into the nodes of slab
// (nil for new ones) where it can. The Facts hold no node: slab may be
// reset once it returns.
func analyzeFile(path string, src []byte, k Kind, opts schema.Options, slab *syntax.Nodes) *Facts {
	f := &Facts{Kind: k, Suppressions: suppress.Parse(path, src)}
	if k == "" && filepath.Base(path) == "pyproject.toml" {
		f.Metadata, f.Diagnostics = ParsePyproject(path, src)
		return f
	}
	dk, ok := docKind(k)
	if !ok {
		// Context files: only their mentions matter, and a file without an
		// "@" has none.
		if bytes.IndexByte(src, '@') >= 0 {
			f.Mentions = syntax.FindMentions(src, 0, syntax.NewLineIndex(src))
		}
		return f
	}
	doc := schema.ParseDocumentWith(path, src, dk, opts, slab)
	f.Diagnostics = doc.Diagnostics
	f.Name = doc.Name()
	f.Description = doc.Description()
	f.Mentions = syntax.FindMentions(doc.Src, doc.BodyStart, doc.Lines)
	if k != KindProfile || doc.Front == nil {
		return f
	}
	if n := doc.Lookup("profile", "extends"); n != nil && n.Kind == yaml.ScalarNode && n.Value != "" {
		f.Extends = &syntax.Ref{Value: n.Value, Range: doc.NodeRange(n)}
	}
	if n := doc.Lookup("agents"); n != nil {
		switch n.Kind {
		case yaml.ScalarNode:
			f.AgentsMode = n.Value
		case yaml.SequenceNode:
			f.AgentsMode = "list"
			for _, item := range n.Content {
				if item.Kind == yaml.ScalarNode && item.Value != "" {
					f.Agents = append(f.Agents, syntax.Ref{Value: item.Value, Range: doc.NodeRange(item)})
				}
			}
		case yaml.MappingNode:
			// {include: [names], inline: {...}, dirs: [...]}: the included
			// names are references like a list's.
			f.AgentsMode = "inline"
			if inc := doc.Lookup("agents", "include"); inc != nil && inc.Kind == yaml.SequenceNode {
				for _, item := range inc.Content {
					if item.Kind == yaml.ScalarNode && item.Value != "" {
						f.Agents = append(f.Agents, syntax.Ref{Value: item.Value, Range: doc.NodeRange(item)})
					}
				}
			}
		}
	}
	if m, err := doc.Decode(); err == nil {
		f.Front = m
	}
	return f
}

// profileBlocks returns the binary form of the session and exclude blocks
// of front matter: what checking a child profile's inherited session
// needs of each profile of its chain. It returns "" when there is
// neither.
func profileBlocks(front *syntax.Map) string {
	blocks := &syntax.Map{}
	for _, k := range []string{"session", "exclude"} {
		if v, ok := front.Get(k); ok {
			blocks.Set(k, v)
		}
	}
	if blocks.Len() == 0 {
		return ""
	}
	var e encoder
	e.value(blocks)
	return string(e.b)
}

// HasFront reports whether the file has usable front matter decoded
// (also for brief Facts, which do not hold it).
func (f *Facts) HasFront() bool {
	if f.brief {
		return f.front
	}
	return f.Front != nil
}

// ProfileBlocks returns the session and exclude blocks of a profile's
// front matter, as Front holds them (also for brief Facts, which keep
// them), and false when the file has no usable front matter.
func (f *Facts) ProfileBlocks() (session any, exclude *syntax.Map, ok bool) {
	if !f.brief {
		if f.Front == nil {
			return nil, nil, false
		}
		ex, _ := f.Front.Value("exclude").(*syntax.Map)
		return f.Front.Value("session"), ex, true
	}
	if !f.front {
		return nil, nil, false
	}
	if f.blocks == "" {
		return nil, nil, true
	}
	v, err := decodeValue([]byte(f.blocks))
	if err != nil {
		return nil, nil, false
	}
	m, _ := v.(*syntax.Map)
	ex, _ := m.Value("exclude").(*syntax.Map)
	return m.Value("session"), ex, true
}
