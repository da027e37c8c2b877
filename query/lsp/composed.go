package lsp

import (
	"context"

	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lsp/jsonrpc"
)

// MethodComposedBundle is amplidex's own request: what the runtime mounts
// for the bundle a document is, or for the bundle of its repository that
// includes it (a behavior, an agent, a context file), composed over the
// unsaved buffers. Its params are {textDocument: {uri}}; its result is
// ComposedBundle. A document of no bundle repository gets an
// InvalidParams error.
const MethodComposedBundle = "amplidex/composedBundle"

// Composer is implemented by Analyzers that compose bundles; the server
// answers MethodComposedBundle with it.
type Composer interface {
	// ComposedBundle returns the composed view for the document at path,
	// given its unsaved text and the other open buffers; an error when
	// path is no document of a bundle repository. It is nil, nil only
	// when ctx is done.
	ComposedBundle(ctx context.Context, path string, text []byte, overlay map[string][]byte) (*analysis.ComposedView, error)
}

var (
	_ Composer = (*analysis.Workspace)(nil)
	_ Composer = (*DaemonAnalyzer)(nil)
)

// ComposedBundle is the result of MethodComposedBundle.
type ComposedBundle struct {
	// URI is the document asked about.
	URI string `json:"uri"`
	// Bundle is the bundle file composed: the document itself, or the
	// bundle of its repository that includes it.
	Bundle string `json:"bundle"`
	// Text is the view, in Markdown: the session, providers, tools,
	// hooks, agents and context of the mount plan, each with its origin
	// as a link, and the size estimates.
	Text string `json:"text"`
	// Links are the Markdown links of Text, where they are, for an
	// editor that shows Text as plain text.
	Links []ComposedLink `json:"links"`
	// Refused says why the runtime's load of the bundle raises, where
	// amplidex composes what it can.
	Refused string `json:"refused,omitempty"`
	// Incomplete says an include is not in the runtime's cache: what it
	// brings is missing from the view.
	Incomplete bool `json:"incomplete,omitempty"`
}

// ComposedLink is one link of a ComposedBundle's Text: the whole
// [label](target) on one line, in UTF-16 columns.
type ComposedLink struct {
	Line  int `json:"line"` // 0-based
	Start int `json:"start"`
	End   int `json:"end"`
	// Target is the file's URI, TargetLine the line in it (1-based; 0
	// for the file as a whole).
	Target     string `json:"target"`
	TargetLine int    `json:"targetLine,omitempty"`
}

// composedBundle answers MethodComposedBundle (see documentRequest).
func (ss *session) composedBundle(m *jsonrpc.Message) {
	composer, ok := ss.srv.analyzer.(Composer)
	if !ok {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + m.Method})
		return
	}
	ss.documentRequest(m, nil, func(ctx context.Context, uri, path string, text []byte, overlay map[string][]byte) (any, *jsonrpc.Error) {
		v, err := composer.ComposedBundle(ctx, path, text, overlay)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: MethodComposedBundle + ": " + err.Error()}
		}
		if v == nil {
			return nil, nil
		}
		res := &ComposedBundle{URI: uri, Bundle: pathToURI(v.Bundle), Text: v.Text, Links: make([]ComposedLink, 0, len(v.Links)),
			Refused: v.Refused, Incomplete: v.Incomplete}
		for _, l := range v.Links {
			res.Links = append(res.Links, ComposedLink{Line: l.Line, Start: l.Start, End: l.End, Target: pathToURI(l.Path), TargetLine: l.TargetLine})
		}
		return res, nil
	})
}

// ComposedBundle implements Composer: bundle repositories are composed
// in process, as their diagnostics are.
func (d *DaemonAnalyzer) ComposedBundle(ctx context.Context, path string, text []byte, overlay map[string][]byte) (*analysis.ComposedView, error) {
	return d.local.ComposedBundle(ctx, path, text, overlay)
}
