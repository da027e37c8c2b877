package query

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
)

// The analyze method: the language server's one question per editor
// request. The daemon answers it with the language server's own analysis
// (package query/lsp) over its catalog's View of the project, so that an
// editor connected to a daemon sees what `check` and `query` see, extends
// chains through files that are not open included.

// AnalyzeOp is what an analyze question asks about the buffer.
type AnalyzeOp string

// The questions.
const (
	// OpDiagnose asks for the buffer's diagnostics.
	OpDiagnose AnalyzeOp = "diagnose"
	// OpComplete asks what may be typed at Position.
	OpComplete AnalyzeOp = "complete"
	// OpDefinition asks where the reference at Position points.
	OpDefinition AnalyzeOp = "definition"
	// OpHover asks for a description of what is at Position.
	OpHover AnalyzeOp = "hover"
	// OpCodeActions asks for the fixes of the diagnostics in Range (or at
	// Position when Range is nil), and the rewrites of what is there.
	OpCodeActions AnalyzeOp = "code_actions"
	// OpReferences asks where the file at Path, or what the reference at
	// Position names, is referred to from: extends values, agents lists,
	// @mentions and requires entries.
	OpReferences AnalyzeOp = "references"
	// OpMergedProfile asks for the effective profile of the profile at
	// Path (see MergedProfile).
	OpMergedProfile AnalyzeOp = "merged_profile"
	// OpFixes asks for the edits that fix Diagnostics (of the buffer)
	// without asking, as `check --fix` makes them: the safe fixes that
	// need no choice, answered in Edits (the language server's
	// source.fixAll).
	OpFixes AnalyzeOp = "fixes"
)

// AnalyzeParams ask about one editor buffer, with the other open buffers
// laid over the files on disk.
type AnalyzeParams struct {
	Common
	Op AnalyzeOp `json:"op"`
	// Path is the absolute path of the buffer's file, Text what the
	// buffer holds (unsaved edits included).
	Path string `json:"path"`
	Text string `json:"text"`
	// Overlay holds the other open buffers by absolute path: what
	// cross-references see instead of those files on disk.
	Overlay map[string]string `json:"overlay,omitempty"`
	// Position is the cursor (complete, definition, hover, references,
	// code_actions): UTF-16 characters, as every position of the protocol.
	Position diag.Position `json:"position"`
	// Range is the selection code_actions asks about; nil for Position.
	Range *diag.Range `json:"range,omitempty"`
	// IncludeDeclaration adds, to the references, the file referred to.
	IncludeDeclaration bool `json:"include_declaration,omitempty"`
	// UnknownKey is the severity of schema/unknown-key the buffers are
	// checked with (the client's configuration); "" for error.
	UnknownKey diag.Severity `json:"unknown_key,omitempty"`
	// Diagnostics are the buffer's diagnostics to fix (fixes): those the
	// client reports, after its configuration.
	Diagnostics []diag.Diagnostic `json:"diagnostics,omitempty"`
}

// Check reports params an analyzer cannot answer: an unknown question, a
// path that is not absolute, or an unknown severity. The error is an
// *Error with CodeInvalidParams.
func (p AnalyzeParams) Check() error {
	switch p.Op {
	case OpDiagnose, OpComplete, OpDefinition, OpHover, OpCodeActions, OpReferences, OpMergedProfile, OpFixes:
	default:
		return Errorf(CodeInvalidParams, "analyze: unknown op %q", p.Op)
	}
	if !filepath.IsAbs(p.Path) {
		return Errorf(CodeInvalidParams, "analyze: path %q is not absolute", p.Path)
	}
	for path := range p.Overlay {
		if !filepath.IsAbs(path) {
			return Errorf(CodeInvalidParams, "analyze: overlay path %q is not absolute", path)
		}
	}
	switch p.UnknownKey {
	case "", diag.SeverityError, diag.SeverityWarning, diag.SeverityInfo:
	default:
		return Errorf(CodeInvalidParams, "analyze: unknown severity %q", p.UnknownKey)
	}
	return nil
}

// Schema returns the schema options the buffers are checked with.
func (p AnalyzeParams) Schema() schema.Options {
	sev := p.UnknownKey
	if sev == "" {
		sev = diag.SeverityError
	}
	return schema.Options{UnknownKeySeverity: sev}
}

// AnalyzeResult is the answer to an analyze question; only the field of
// the question asked is set.
type AnalyzeResult struct {
	Diagnostics []diag.Diagnostic `json:"diagnostics,omitempty"`
	Items       []CompletionItem  `json:"items,omitempty"`
	Locations   []Location        `json:"locations,omitempty"`
	// Hover is Markdown; "" when there is nothing to say.
	Hover   string       `json:"hover,omitempty"`
	Actions []CodeAction `json:"actions,omitempty"`
	// Merged answers OpMergedProfile.
	Merged *MergedProfile `json:"merged,omitempty"`
	// Edits answer OpFixes: edits of the buffer, sorted, none
	// overlapping another.
	Edits []TextEdit `json:"edits,omitempty"`
}

// The kinds of code action, as the Language Server Protocol names them.
const (
	// ActionQuickFix fixes a diagnostic.
	ActionQuickFix = "quickfix"
	// ActionRewrite rewrites what is there without changing its meaning.
	ActionRewrite = "refactor.rewrite"
	// ActionFixAll makes every fix of a file that needs no choice, as
	// `check --fix` does (an editor's fix on save).
	ActionFixAll = "source.fixAll.amplidex"
)

// CodeAction is a change an editor offers to make: a fix of a diagnostic
// or a rewrite, as edits of files.
type CodeAction struct {
	Title string `json:"title"`
	// Kind is ActionQuickFix, ActionRewrite or ActionFixAll.
	Kind string `json:"kind"`
	// Diagnostic is the one the action fixes; nil for a rewrite.
	Diagnostic *diag.Diagnostic `json:"diagnostic,omitempty"`
	// Preferred marks the fix an editor may apply without asking which.
	Preferred bool       `json:"preferred,omitempty"`
	Edits     []TextEdit `json:"edits"`
}

// TextEdit replaces Range of the file at Path with NewText. Ranges count
// UTF-16 characters of the text the question was asked about (the
// buffer, for Path), and the edits of one action do not overlap.
type TextEdit struct {
	Path    string     `json:"path"`
	Range   diag.Range `json:"range"`
	NewText string     `json:"new_text"`
}

// CompletionKind is the Language Server Protocol's CompletionItemKind: the
// icon an editor shows beside an item.
type CompletionKind int

// The completion kinds the analysis uses.
const (
	CompletionModule     CompletionKind = 9
	CompletionProperty   CompletionKind = 10
	CompletionValue      CompletionKind = 12
	CompletionFile       CompletionKind = 17
	CompletionReference  CompletionKind = 18
	CompletionEnumMember CompletionKind = 20
)

// CompletionItem is one completion offered.
type CompletionItem struct {
	// Label is shown and, unless InsertText is set, inserted.
	Label      string         `json:"label"`
	InsertText string         `json:"insert_text,omitempty"`
	Kind       CompletionKind `json:"kind"`
	// Detail is a one-line note beside the label (such as the path the
	// reference resolves to); Documentation is Markdown.
	Detail        string `json:"detail,omitempty"`
	Documentation string `json:"documentation,omitempty"`
	// Replace is the span (UTF-16) the item replaces; nil lets the editor
	// replace the word before the cursor.
	Replace *diag.Range `json:"replace,omitempty"`
}

// Location is a span in a file, as definitions are reported.
type Location struct {
	// Path is absolute.
	Path  string     `json:"path"`
	Range diag.Range `json:"range"`
}

// AnalyzeFunc answers an analyze question from v, the View of the
// question's project.
type AnalyzeFunc func(ctx context.Context, v *catalog.View, p AnalyzeParams) (*AnalyzeResult, error)

// ServeAnalyze registers MethodAnalyze on mux: the params are decoded
// strictly and checked, and analyze answers from the one View that view
// returns for their scope; the answer carries that View's clock.
func ServeAnalyze(mux *Mux, view ViewFunc, analyze AnalyzeFunc) {
	m := MethodAnalyze
	mux.Handle(m.name, func(ctx context.Context, raw json.RawMessage) (any, error) {
		p, err := m.Decode(raw)
		if err != nil {
			return nil, err
		}
		if err := p.Check(); err != nil {
			return nil, err
		}
		v, clock, err := view(ctx, p.Common)
		if err != nil {
			return nil, err
		}
		r, err := analyze(ctx, v, p)
		if err != nil {
			return &Answer{Clock: clock}, err
		}
		return &Answer{Result: r, Clock: clock}, nil
	})
}

// printAnalyze prints whatever the answer holds: diagnostics, completion
// items (label and detail), locations, code actions (kind, title and
// edits), the edits of fixes, the hover text and a merged profile's text.
func printAnalyze(w io.Writer, r *AnalyzeResult, o PrintOptions) error {
	if r == nil {
		return nil
	}
	o.Diagnostics.Print(w, r.Diagnostics)
	for _, it := range r.Items {
		if _, err := fmt.Fprintf(w, "%s\t%s\n", Clean(it.Label), Clean(it.Detail)); err != nil {
			return err
		}
	}
	for _, l := range r.Locations {
		if _, err := fmt.Fprintf(w, "%s:%d:%d\n", Clean(l.Path), l.Range.Start.Line+1, l.Range.Start.Character+1); err != nil {
			return err
		}
	}
	for _, a := range r.Actions {
		if _, err := fmt.Fprintf(w, "%s\t%s\n", a.Kind, Clean(a.Title)); err != nil {
			return err
		}
		for _, e := range a.Edits {
			if err := printEdit(w, e); err != nil {
				return err
			}
		}
	}
	for _, e := range r.Edits {
		if err := printEdit(w, e); err != nil {
			return err
		}
	}
	hover := r.Hover
	if r.Merged != nil {
		hover += r.Merged.Text
	}
	if hover != "" {
		for line := range strings.SplitSeq(strings.TrimRight(hover, "\n"), "\n") {
			if _, err := fmt.Fprintln(w, Clean(line)); err != nil {
				return err
			}
		}
	}
	return nil
}

// printEdit prints an edit as a line: a tab, the path and range, a tab
// and the new text quoted.
func printEdit(w io.Writer, e TextEdit) error {
	_, err := fmt.Fprintf(w, "\t%s:%d:%d-%d:%d\t%q\n", Clean(e.Path), e.Range.Start.Line+1, e.Range.Start.Character+1,
		e.Range.End.Line+1, e.Range.End.Character+1, e.NewText)
	return err
}
