package lsp

import (
	"context"
	"fmt"

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

// mergedProfile answers MethodMergedProfile (see documentRequest).
func (ss *session) mergedProfile(m *jsonrpc.Message) {
	merger, ok := ss.srv.analyzer.(Merger)
	if !ok {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + m.Method})
		return
	}
	profile := func(path string) error {
		if !analysis.IsProfile(path) {
			return fmt.Errorf("%s is not a profile (profiles/*.md of a collection)", path)
		}
		return nil
	}
	ss.documentRequest(m, profile, func(ctx context.Context, uri, path string, text []byte, overlay map[string][]byte) (any, *jsonrpc.Error) {
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
	})
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
