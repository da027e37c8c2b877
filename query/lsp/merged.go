package lsp

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/amplidex/amplidex/query"

	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lsp/jsonrpc"
)

// MethodMergedProfile is amplidex's own request: the effective profile of
// the profile in a document, its whole extends chain merged over the
// unsaved buffers. Its params are {textDocument: {uri}}; its result is
// MergedProfileResult. A document that is not a profile (by its path:
// profiles/*.md) gets an InvalidParams error.
const MethodMergedProfile = "amplidex/mergedProfile"

// Merger is implemented by Analyzers that compute merged profiles; the
// server answers MethodMergedProfile with it.
type Merger interface {
	// MergedProfile returns the effective profile of the profile at path,
	// given its unsaved text and the other open buffers. It is nil only
	// when ctx is done.
	MergedProfile(ctx context.Context, path string, text []byte, overlay map[string][]byte) *query.MergedProfile
}

var (
	_ Merger = (*analysis.Workspace)(nil)
	_ Merger = (*DaemonAnalyzer)(nil)
)

// MergedProfileResult is the result of MethodMergedProfile: a
// query.MergedProfile with the chain's files as URIs.
type MergedProfileResult struct {
	// URI is the document asked about.
	URI string `json:"uri"`
	// Text is the merged front matter as YAML, a comment on each key
	// naming the profiles that set it.
	Text     string `json:"text"`
	Complete bool   `json:"complete"`
	Problem  string `json:"problem,omitempty"`
	// Chain is the extends chain, the document's profile first.
	Chain []MergedLink `json:"chain"`
	// Sources say which profiles set each key of Text.
	Sources []query.KeySource `json:"sources"`
}

// MergedLink is one profile of the chain.
type MergedLink struct {
	ID  string `json:"id"`
	URI string `json:"uri"`
}

// mergedParams are the params of MethodMergedProfile.
type mergedParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// mergedProfile answers MethodMergedProfile on its own goroutine,
// cancellable by $/cancelRequest. A document that is not open is read
// from disk.
func (ss *session) mergedProfile(m *jsonrpc.Message) {
	var p mergedParams
	if err := unmarshalParams(m.Params, &p); err != nil {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: m.Method + ": " + err.Error()})
		return
	}
	merger, ok := ss.srv.analyzer.(Merger)
	if !ok {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + m.Method})
		return
	}
	path, err := uriToPath(p.TextDocument.URI)
	if err == nil && !analysis.IsProfile(path) {
		err = fmt.Errorf("%s is not a profile (profiles/*.md of a collection)", path)
	}
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
		result, rerr := ss.merged(ctx, merger, p.TextDocument.URI, path, text, overlay)
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

// merged asks the Merger; a panic becomes an internal error.
func (ss *session) merged(ctx context.Context, merger Merger, uri, path string, text []byte, overlay map[string][]byte) (result *MergedProfileResult, rerr *jsonrpc.Error) {
	defer func() {
		if p := recover(); p != nil {
			ss.log.Error("lsp: "+MethodMergedProfile+" failed", "path", path, "panic", p, "stack", string(debug.Stack()))
			result, rerr = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: internal error: %v", MethodMergedProfile, p)}
		}
	}()
	if text == nil {
		b, err := readFileLimited(path, 16<<20)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: MethodMergedProfile + ": " + err.Error()}
		}
		text = b
	}
	mp := merger.MergedProfile(ctx, path, text, overlay)
	if mp == nil {
		return nil, nil
	}
	res := &MergedProfileResult{URI: uri, Text: mp.Text, Complete: mp.Complete, Problem: mp.Problem,
		Chain: make([]MergedLink, 0, len(mp.Chain)), Sources: mp.Sources}
	if res.Sources == nil {
		res.Sources = []query.KeySource{}
	}
	for i, l := range mp.Chain {
		u := pathToURI(l.Path)
		if i == 0 {
			u = uri // the document as the client names it
		}
		res.Chain = append(res.Chain, MergedLink{ID: l.ID, URI: u})
	}
	return res, nil
}

// MergedProfile implements Merger: the daemon answers, else the
// in-process Workspace.
func (d *DaemonAnalyzer) MergedProfile(ctx context.Context, path string, text []byte, overlay map[string][]byte) *query.MergedProfile {
	if res, ok := d.ask(ctx, query.AnalyzeParams{Op: query.OpMergedProfile}, path, text, overlay); ok {
		if res.Merged == nil && ctx.Err() == nil {
			return &query.MergedProfile{Text: "# the daemon gave no merged profile\n", Chain: []query.ChainLink{}}
		}
		return res.Merged
	}
	return d.local.MergedProfile(ctx, path, text, overlay)
}
