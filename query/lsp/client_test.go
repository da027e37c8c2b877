package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lsp"
)

// waitFor bounds every wait in these tests; a correct server answers in
// milliseconds, so reaching it means a hang.
const waitFor = 10 * time.Second

// wire is any message the server sends.
type wire struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// published is the params of textDocument/publishDiagnostics.
type published struct {
	URI         string `json:"uri"`
	Version     *int32 `json:"version"`
	Diagnostics []struct {
		Range    diag.Range `json:"range"`
		Severity int        `json:"severity"`
		Code     string     `json:"code"`
		Source   string     `json:"source"`
		Message  string     `json:"message"`
	} `json:"diagnostics"`
}

// client drives a Server through two pipes with Content-Length framing, as
// an editor does.
type client struct {
	t      testing.TB
	in     *io.PipeWriter // the server's input
	msgs   chan wire      // everything the server wrote, in order
	served chan error     // what Serve returned
	nextID int
	queue  []wire // notifications read while waiting for a response
}

// startServer runs a server over a in the background and returns a client
// talking to it. Cleanup closes the input and waits for Serve to return.
func startServer(t testing.TB, a lsp.Analyzer, opts lsp.Options) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, msgs: make(chan wire, 256), served: make(chan error, 1)}
	srv := lsp.NewServer(a, opts)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		err := srv.Serve(ctx, inR, outW)
		outW.Close()
		inR.Close()
		c.served <- err
	}()
	go func() {
		defer wg.Done()
		defer close(c.msgs)
		br := bufio.NewReader(outR)
		for {
			body, err := readFrame(br)
			if err != nil {
				if err != io.EOF {
					t.Errorf("reading server output: %v", err)
				}
				return
			}
			var m wire
			if err := json.Unmarshal(body, &m); err != nil {
				t.Errorf("server wrote invalid JSON %q: %v", body, err)
				return
			}
			c.msgs <- m
		}
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		// Drain so the server never blocks writing.
		go func() {
			for range c.msgs {
			}
		}()
		wg.Wait()
	})
	return c
}

// readFrame reads one framed message as a client would.
func readFrame(br *bufio.Reader) ([]byte, error) {
	tp := textproto.NewReader(br)
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("header: %w", err)
	}
	n, err := strconv.Atoi(h.Get("Content-Length"))
	if err != nil {
		return nil, fmt.Errorf("Content-Length %q: %w", h.Get("Content-Length"), err)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	return body, nil
}

// raw writes bytes to the server as they are.
func (c *client) raw(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, s); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// send frames and writes one message.
func (c *client) send(v any) {
	c.t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.raw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// start sends a request and returns its id without waiting.
func (c *client) start(method string, params any) int {
	c.t.Helper()
	c.nextID++
	msg := map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.send(msg)
	return c.nextID
}

// call sends a request and waits for its response.
func (c *client) call(method string, params any) wire {
	c.t.Helper()
	return c.response(c.start(method, params))
}

// response waits for the response to id, queueing notifications met on the
// way.
func (c *client) response(id int) wire {
	c.t.Helper()
	want := strconv.Itoa(id)
	for i, m := range c.queue {
		if m.Method == "" && string(m.ID) == want {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			return m
		}
	}
	for {
		m := c.next()
		if m.Method == "" && string(m.ID) == want {
			return m
		}
		c.queue = append(c.queue, m)
	}
}

// read returns the next message from the server, queued ones first.
func (c *client) read() wire {
	c.t.Helper()
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m
	}
	return c.next()
}

// next returns the next message the server writes.
func (c *client) next() wire {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatal("server output ended")
		}
		return m
	case <-time.After(waitFor):
		c.t.Fatal("no message from the server")
	}
	panic("unreachable")
}

// diagnostics waits for the next publishDiagnostics for uri, skipping other
// notifications.
func (c *client) diagnostics(uri string) published {
	c.t.Helper()
	for {
		m := c.read()
		if m.Method != "textDocument/publishDiagnostics" {
			continue
		}
		var p published
		if err := json.Unmarshal(m.Params, &p); err != nil {
			c.t.Fatal(err)
		}
		if p.URI == uri {
			return p
		}
	}
}

// serveResult waits for Serve to return.
func (c *client) serveResult() error {
	c.t.Helper()
	select {
	case err := <-c.served:
		return err
	case <-time.After(waitFor):
		c.t.Fatal("Serve did not return")
	}
	return nil
}

// initialize performs the handshake, offering encodings when given.
func (c *client) initialize(encodings ...string) map[string]any {
	c.t.Helper()
	params := map[string]any{"processId": nil, "capabilities": map[string]any{}}
	if len(encodings) > 0 {
		params["capabilities"] = map[string]any{"general": map[string]any{"positionEncodings": encodings}}
	}
	r := c.call("initialize", params)
	if r.Error != nil {
		c.t.Fatalf("initialize: %v", r.Error.Message)
	}
	var res map[string]any
	if err := json.Unmarshal(r.Result, &res); err != nil {
		c.t.Fatal(err)
	}
	c.notify("initialized", map[string]any{})
	return res
}

func (c *client) open(uri, text string) {
	c.t.Helper()
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": text}})
}

func (c *client) changeAll(uri string, version int, text string) {
	c.t.Helper()
	c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []map[string]any{{"text": text}},
	})
}

func (c *client) changeRange(uri string, version int, r diag.Range, text string) {
	c.t.Helper()
	c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []map[string]any{{"range": r, "text": text}},
	})
}

// fake is an Analyzer for protocol tests: every "BAD" in a text is an
// error spanning those three bytes; block, when set, is called first.
type fake struct {
	mu    sync.Mutex // guards fields below
	texts []string   // every text Diagnose saw, in order

	block    func(ctx context.Context, text string)
	complete func(ctx context.Context, text []byte, pos diag.Position) []query.CompletionItem
	define   func(pos diag.Position) []query.Location
	hover    func(text []byte, pos diag.Position) (string, bool)
	actions  func(rng diag.Range) []query.CodeAction
	refs     func(pos diag.Position, decl bool) []query.Location
}

func (f *fake) Diagnose(ctx context.Context, path string, text []byte, overlay map[string][]byte) []diag.Diagnostic {
	f.mu.Lock()
	f.texts = append(f.texts, string(text))
	block := f.block
	f.mu.Unlock()
	if block != nil {
		block(ctx, string(text))
	}
	li := syntax.NewLineIndex(text)
	var out []diag.Diagnostic
	s := string(text)
	for off := 0; ; {
		i := strings.Index(s[off:], "BAD")
		if i < 0 {
			break
		}
		off += i
		out = append(out, diag.Diagnostic{Code: diag.CodeUnknownKey, Severity: diag.SeverityError,
			Path: path, Range: li.Range(off, off+3), Message: "bad thing"})
		off += 3
	}
	return out
}

func (f *fake) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.texts...)
}

func (f *fake) Complete(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) []query.CompletionItem {
	if f.complete != nil {
		return f.complete(ctx, text, pos)
	}
	return nil
}

func (f *fake) Definition(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) []query.Location {
	if f.define != nil {
		return f.define(pos)
	}
	return nil
}

func (f *fake) Hover(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) (string, bool) {
	if f.hover != nil {
		return f.hover(text, pos)
	}
	return "", false
}

func (f *fake) CodeActions(ctx context.Context, path string, text []byte, overlay map[string][]byte, rng diag.Range) []query.CodeAction {
	if f.actions != nil {
		return f.actions(rng)
	}
	return nil
}

func (f *fake) References(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position, decl bool) []query.Location {
	if f.refs != nil {
		return f.refs(pos, decl)
	}
	return nil
}
