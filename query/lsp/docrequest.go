package lsp

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/amplidex/amplidex/query/lsp/jsonrpc"
)

// docParams are the params of amplidex's own requests about one
// document: {textDocument: {uri}}.
type docParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// docAnswer computes the result of a request about the document at path
// (uri as the client names it), given its text and the other open
// buffers. A nil result and error answer null: ctx is done.
type docAnswer func(ctx context.Context, uri, path string, text []byte, overlay map[string][]byte) (any, *jsonrpc.Error)

// documentRequest answers m, a request about one document, on its own
// goroutine, cancellable by $/cancelRequest. accept refuses a path the
// request is not about (InvalidParams); answer is asked with the open
// buffer's text, else the file's, read from disk; a panic in it is an
// internal error, logged with its stack.
func (ss *session) documentRequest(m *jsonrpc.Message, accept func(path string) error, answer docAnswer) {
	var p docParams
	if err := unmarshalParams(m.Params, &p); err != nil {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: m.Method + ": " + err.Error()})
		return
	}
	path, err := uriToPath(p.TextDocument.URI)
	if err == nil && accept != nil {
		err = accept(path)
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
		result, rerr := ss.answerDocument(ctx, m.Method, p.TextDocument.URI, path, text, overlay, answer)
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

// answerDocument reads the document when it is not open and asks answer;
// a panic becomes an internal error.
func (ss *session) answerDocument(ctx context.Context, method, uri, path string, text []byte, overlay map[string][]byte, answer docAnswer) (result any, rerr *jsonrpc.Error) {
	defer func() {
		if p := recover(); p != nil {
			ss.log.Error("lsp: "+method+" failed", "path", path, "panic", p, "stack", string(debug.Stack()))
			result, rerr = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: internal error: %v", method, p)}
		}
	}()
	if text == nil {
		b, err := readFileLimited(path, 16<<20)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ": " + err.Error()}
		}
		text = b
	}
	return answer(ctx, uri, path, text, overlay)
}
