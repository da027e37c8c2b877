package lsp

import (
	"context"
	"fmt"
	"runtime/debug"

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

// composedParams are the params of MethodComposedBundle.
type composedParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// composedBundle answers MethodComposedBundle on its own goroutine,
// cancellable by $/cancelRequest. A document that is not open is read
// from disk.
func (ss *session) composedBundle(m *jsonrpc.Message) {
	var p composedParams
	if err := unmarshalParams(m.Params, &p); err != nil {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: m.Method + ": " + err.Error()})
		return
	}
	composer, ok := ss.srv.analyzer.(Composer)
	if !ok {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + m.Method})
		return
	}
	path, err := uriToPath(p.TextDocument.URI)
	if err != nil {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: m.Method + ": " + err.Error()})
		return
	}
	key := string(m.ID)
	if _, dup := ss.inflight[key]; dup {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: m.Method + ": id already in use"})
		return
	}
	var text []byte
	if d, ok := ss.docs[p.TextDocument.URI]; ok {
		text = d.text
	}
	overlay := ss.overlay()
	ctx, cancel := context.WithCancel(ss.base)
	ss.inflight[key] = cancel
	ss.wg.Add(1)
	go func() {
		defer ss.wg.Done()
		defer cancel()
		end := ss.busy.begin()
		result, rerr := ss.composed(ctx, composer, p.TextDocument.URI, path, text, overlay)
		end()
		if ctx.Err() != nil && rerr == nil {
			result, rerr = nil, &jsonrpc.Error{Code: jsonrpc.CodeRequestCancelled, Message: m.Method + ": cancelled"}
		}
		ss.reply(m.ID, result, rerr)
		select {
		case ss.finished <- key:
		case <-ss.stop:
		}
	}()
}

// composed asks the Composer; a panic becomes an internal error.
func (ss *session) composed(ctx context.Context, composer Composer, uri, path string, text []byte, overlay map[string][]byte) (result *ComposedBundle, rerr *jsonrpc.Error) {
	defer func() {
		if p := recover(); p != nil {
			ss.log.Error("lsp: "+MethodComposedBundle+" failed", "path", path, "panic", p, "stack", string(debug.Stack()))
			result, rerr = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: internal error: %v", MethodComposedBundle, p)}
		}
	}()
	if text == nil {
		b, err := readFileLimited(path, 16<<20)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: MethodComposedBundle + ": " + err.Error()}
		}
		text = b
	}
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
}

// ComposedBundle implements Composer: bundle repositories are composed
// in process, as their diagnostics are.
func (d *DaemonAnalyzer) ComposedBundle(ctx context.Context, path string, text []byte, overlay map[string][]byte) (*analysis.ComposedView, error) {
	return d.local.ComposedBundle(ctx, path, text, overlay)
}
