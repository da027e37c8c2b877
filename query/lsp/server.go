package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"

	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lsp/jsonrpc"
)

// ErrNoShutdown is returned by Serve when the client sends exit, or the
// input ends, before a shutdown request.
var ErrNoShutdown = errors.New("lsp: exit without shutdown")

// Analyzer is the knowledge behind the server: the analysis engine
// (analysis.Workspace), in process (InProcess) or in the daemon
// (DaemonAnalyzer). Positions are UTF-16
// (diag.Position), whatever the client negotiated. Every method gets
// the buffer asked about (path and text) and overlay, every open buffer
// (path → text), so that cross-references see unsaved edits. Methods are
// called from several goroutines at once and must honour ctx.
type Analyzer interface {
	// Diagnose checks one file given its unsaved text. Diagnostics for
	// other paths than path are not published.
	Diagnose(ctx context.Context, path string, text []byte, overlay map[string][]byte) []diag.Diagnostic
	// Complete lists what may be typed at pos.
	Complete(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) []query.CompletionItem
	// Definition returns where the reference at pos points.
	Definition(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) []query.Location
	// Hover describes what is at pos in Markdown; ok is false when there is
	// nothing to say.
	Hover(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position) (markdown string, ok bool)
	// CodeActions lists the fixes of the diagnostics in rng and the
	// rewrites of what is at its start. Their edits are of path alone, in
	// the text given.
	CodeActions(ctx context.Context, path string, text []byte, overlay map[string][]byte, rng diag.Range) []query.CodeAction
	// References returns where what is at pos (or the file) is referred
	// to from; with includeDeclaration, the file referred to too.
	References(ctx context.Context, path string, text []byte, overlay map[string][]byte, pos diag.Position, includeDeclaration bool) []query.Location
}

// Invalidator is implemented by Analyzers that cache what they read from
// disk: the server calls Invalidate with the path of every file the client
// saves.
type Invalidator interface {
	Invalidate(path string)
}

// Options configure a Server. The zero value is usable.
type Options struct {
	// Debounce is how long diagnostics wait after the last change to a
	// document; 50ms when zero.
	Debounce time.Duration
	// MaxMessage bounds the body of one message in bytes; 64 MiB when zero.
	MaxMessage int64
	// Log receives protocol errors and analyzer failures; nil discards.
	Log *slog.Logger
	// Version is reported to the client in serverInfo.
	Version string
	// Filter, when set, decides what is reported of a file's
	// diagnostics (and how severe) before they are published; the code
	// actions of the diagnostics it drops are not offered. The command
	// line passes the policy check and watch apply, so that every surface
	// reports alike. It is called from several goroutines at once.
	Filter func(path string, ds []diag.Diagnostic) []diag.Diagnostic
	// ProgressDelay is how long a call of an Analyzer that is a Tasker
	// waits before the server asks what it waits for (see Tasker); 300ms
	// when zero. ProgressEvery is how often it asks again; 250ms when
	// zero.
	ProgressDelay time.Duration
	ProgressEvery time.Duration
	// StatusEvery is how often the server asks an Analyzer that is a
	// StatusReporter for its Status, for a client that asked for
	// MethodStatus; 1s when zero.
	StatusEvery time.Duration
}

// Server is a language server over one Analyzer. Serve may be called more
// than once, one stream at a time or several at once; each call is its own
// session.
type Server struct {
	analyzer Analyzer
	opts     Options
}

// NewServer returns a server that asks a.
func NewServer(a Analyzer, opts Options) *Server {
	if opts.Debounce <= 0 {
		opts.Debounce = 50 * time.Millisecond
	}
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = 64 << 20
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.ProgressDelay <= 0 {
		opts.ProgressDelay = defaultProgressDelay
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = defaultProgressEvery
	}
	if opts.StatusEvery <= 0 {
		opts.StatusEvery = defaultStatusEvery
	}
	return &Server{analyzer: a, opts: opts}
}

// Serve reads requests from r and writes responses and notifications to w
// until the client exits, the input ends or ctx is done. It returns nil
// after shutdown and exit (or the end of input after shutdown),
// ErrNoShutdown when either comes without shutdown, ctx's error when ctx is
// done, and any other read error wrapped.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	base, cancel := context.WithCancel(ctx)
	ss := &session{
		srv:      s,
		log:      s.opts.Log,
		out:      jsonrpc.NewWriter(w),
		base:     base,
		stop:     make(chan struct{}),
		docs:     make(map[string]*document),
		inflight: make(map[string]context.CancelFunc),
		results:  make(chan runResult),
		finished: make(chan string),
		timer:    time.NewTimer(time.Hour),
		busy:     &waiting{wake: make(chan struct{}, 1)},
		calls:    &calls{},
	}
	ss.timer.Stop()
	defer func() {
		cancel()
		ss.timer.Stop()
		close(ss.stop)
		ss.wg.Wait()
	}()

	msgs := make(chan frame)
	rd := jsonrpc.NewReader(r, s.opts.MaxMessage)
	// The reader goroutine ends with the stream or, once Serve has
	// returned, at its next message; it is the one goroutine Serve does not
	// wait for, since a blocked Read cannot be interrupted.
	go func() {
		for {
			body, err := rd.Read()
			select {
			case msgs <- frame{body, err}:
			case <-ss.stop:
				return
			}
			var fe *jsonrpc.FrameError
			if err != nil && !errors.As(err, &fe) {
				return
			}
		}
	}()
	return ss.loop(ctx, msgs)
}

// frame is one read from the input: a body or an error.
type frame struct {
	body []byte
	err  error
}

// sessionState is where a session is in the protocol's lifecycle.
type sessionState int

const (
	stateNew sessionState = iota
	stateRunning
	stateShutdown
)

// session is one Serve call. Fields below wg are owned by the loop
// goroutine and touched by no other.
type session struct {
	srv  *Server
	log  *slog.Logger
	out  *jsonrpc.Writer
	base context.Context // parent of every run and request; cancelled when Serve returns
	stop chan struct{}   // closed when Serve returns
	wg   sync.WaitGroup  // diagnostics runs, request handlers and the progress reporter
	// busy counts the calls of the Analyzer in progress, for the
	// progress reporter; calls are the server's own requests to the
	// client (window/workDoneProgress/create).
	busy  *waiting
	calls *calls
	// down is set once the client asked for shutdown: the status
	// reporter sends nothing after it.
	down atomic.Bool

	state sessionState
	utf8  bool
	// watchDynamic says the client registers watched files dynamically
	// (see watched.go).
	watchDynamic bool
	docs         map[string]*document          // open documents by URI
	inflight     map[string]context.CancelFunc // running requests by id
	results      chan runResult
	finished     chan string // ids of requests that have responded
	timer        *time.Timer // fires at the earliest due diagnostics run

	// wantStatus: the client asked for MethodStatus; statusOn: the
	// status reporter runs.
	wantStatus, statusOn bool
}

// document is one open buffer and the state of its diagnostics.
type document struct {
	uri     string
	path    string // "" when the URI is not a file
	checked bool   // the engine checks it (analysis.Checked)
	version int32
	text    []byte // never modified in place; an edit makes a new slice

	gen     uint64             // bumped by every change that calls for new diagnostics
	due     time.Time          // when the next run starts; zero when none is scheduled
	cancel  context.CancelFunc // the running run, nil when none
	pubDone bool               // diagnostics were published at least once
	pubVer  int32              // version of the last published result
	pubDiag []lspDiagnostic    // the last published result
}

// runResult is the outcome of one diagnostics run.
type runResult struct {
	doc   *document
	gen   uint64
	ver   int32
	diags []lspDiagnostic
}

func (ss *session) loop(ctx context.Context, msgs <-chan frame) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case f := <-msgs:
			if f.err != nil {
				var fe *jsonrpc.FrameError
				switch {
				case errors.As(f.err, &fe):
					ss.log.Error("lsp: skipped a message", "err", fe.Error())
					continue
				case errors.Is(f.err, io.EOF) || errors.Is(f.err, io.ErrUnexpectedEOF):
					if ss.state == stateShutdown {
						return nil
					}
					return ErrNoShutdown
				default:
					return fmt.Errorf("read message: %w", f.err)
				}
			}
			if done, err := ss.handle(f.body); done {
				return err
			}
		case res := <-ss.results:
			ss.publishResult(res)
		case id := <-ss.finished:
			delete(ss.inflight, id)
		case <-ss.timer.C:
			ss.startDue()
		}
	}
}

// handle processes one message body. done reports that the session is over
// (an exit notification), with what Serve returns.
func (ss *session) handle(body []byte) (done bool, err error) {
	m, rerr := jsonrpc.Decode(body)
	if rerr != nil {
		ss.log.Error("lsp: bad message", "err", rerr.Message)
		// Errors go back to requests; a body that is not even JSON may
		// have been one, so it gets an answer with a null id.
		if m == nil || m.ID != nil {
			var id json.RawMessage
			if m != nil {
				id = m.ID
			}
			ss.reply(id, nil, rerr)
		}
		return false, nil
	}
	if m.Method == "" {
		ss.calls.deliver(m) // the answer to a request of the server's
		return false, nil
	}
	if m.Method == "exit" {
		if ss.state == stateShutdown {
			return true, nil
		}
		return true, ErrNoShutdown
	}
	if !m.IsRequest() {
		ss.notification(m)
		return false, nil
	}
	ss.request(m)
	return false, nil
}

func (ss *session) reply(id json.RawMessage, result any, rerr *jsonrpc.Error) {
	if err := ss.out.Respond(id, result, rerr); err != nil {
		ss.log.Error("lsp: cannot respond", "err", err)
	}
}

func (ss *session) request(m *jsonrpc.Message) {
	switch {
	case ss.state == stateShutdown:
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: m.Method + ": the server is shut down"})
		return
	case ss.state == stateNew && m.Method != "initialize":
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeServerNotInitialized, Message: m.Method + ": initialize first"})
		return
	}
	switch m.Method {
	case "initialize":
		ss.initialize(m)
	case "shutdown":
		ss.state = stateShutdown
		ss.down.Store(true)
		for _, d := range ss.docs {
			ss.cancelRun(d)
		}
		ss.reply(m.ID, nil, nil)
	case "textDocument/completion", "textDocument/definition", "textDocument/hover",
		"textDocument/references", "textDocument/codeAction":
		ss.positionRequest(m)
	case MethodMergedProfile:
		ss.mergedProfile(m)
	case MethodComposedBundle:
		ss.composedBundle(m)
	default:
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + m.Method})
	}
}

func (ss *session) initialize(m *jsonrpc.Message) {
	if ss.state != stateNew {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "initialize: already initialized"})
		return
	}
	var p initializeParams
	if err := unmarshalParams(m.Params, &p); err != nil {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "initialize: " + err.Error()})
		return
	}
	enc := encodingUTF16
	for _, e := range p.Capabilities.General.PositionEncodings {
		if e == encodingUTF8 {
			enc, ss.utf8 = encodingUTF8, true
		}
	}
	ss.state = stateRunning
	ss.wantStatus = wantsStatus(p.Capabilities.Experimental)
	ss.watchDynamic = p.Capabilities.Workspace.DidChangeWatchedFiles.DynamicRegistration
	defer func() {
		// Progress goes out once the client has the answer.
		if t, ok := ss.srv.analyzer.(Tasker); ok && p.Capabilities.Window.WorkDoneProgress {
			ss.wg.Add(1)
			go ss.reportProgress(t)
		}
	}()
	ss.reply(m.ID, initializeResult{
		Capabilities: serverCapabilities{
			PositionEncoding:   enc,
			TextDocumentSync:   textDocumentSync{OpenClose: true, Change: syncIncremental, Save: saveOptions{}},
			CompletionProvider: completionOptions{TriggerCharacters: []string{":", "@", " "}},
			DefinitionProvider: true,
			HoverProvider:      true,
			ReferencesProvider: true,
			CodeActionProvider: codeActionOptions{CodeActionKinds: []string{query.ActionQuickFix, query.ActionRewrite, query.ActionFixAll}},
		},
		ServerInfo: serverInfo{Name: "amplidex", Version: ss.srv.opts.Version},
	}, nil)
}

func unmarshalParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return errors.New("missing params")
	}
	return json.Unmarshal(raw, v)
}

func (ss *session) notification(m *jsonrpc.Message) {
	if ss.state != stateRunning {
		return // dropped before initialize and after shutdown, as the protocol says
	}
	var err error
	switch m.Method {
	case "textDocument/didOpen":
		err = ss.didOpen(m.Params)
	case "textDocument/didChange":
		err = ss.didChange(m.Params)
	case "textDocument/didSave":
		err = ss.didSave(m.Params)
	case "textDocument/didClose":
		err = ss.didClose(m.Params)
	case "workspace/didChangeWatchedFiles":
		err = ss.didChangeWatchedFiles(m.Params)
	case "$/cancelRequest":
		var p cancelParams
		if err = unmarshalParams(m.Params, &p); err == nil {
			if cancel, ok := ss.inflight[string(p.ID)]; ok {
				cancel()
			}
		}
	case "initialized":
		if ss.watchDynamic {
			ss.wg.Add(1)
			go ss.registerWatchers()
		}
		// The status goes out once the client is initialized.
		if r, ok := ss.srv.analyzer.(StatusReporter); ok && ss.wantStatus && !ss.statusOn {
			ss.statusOn = true
			ss.wg.Add(1)
			go ss.reportStatus(r)
		}
	default:
		// $/setTrace and everything unknown: nothing to do.
	}
	if err != nil {
		ss.log.Error("lsp: "+m.Method, "err", err)
	}
}

func (ss *session) didOpen(raw json.RawMessage) error {
	var p didOpenParams
	if err := unmarshalParams(raw, &p); err != nil {
		return err
	}
	if old, ok := ss.docs[p.TextDocument.URI]; ok {
		ss.cancelRun(old)
	}
	d := &document{uri: p.TextDocument.URI, version: p.TextDocument.Version, text: []byte(p.TextDocument.Text)}
	if path, err := uriToPath(d.uri); err == nil {
		d.path, d.checked = path, analysis.Checked(path)
	}
	ss.docs[d.uri] = d
	ss.changed(d)
	return nil
}

func (ss *session) didChange(raw json.RawMessage) error {
	var p didChangeParams
	if err := unmarshalParams(raw, &p); err != nil {
		return err
	}
	d, ok := ss.docs[p.TextDocument.URI]
	if !ok {
		return fmt.Errorf("%s: not open", p.TextDocument.URI)
	}
	text, err := applyChanges(d.text, p.ContentChanges, ss.utf8)
	if err != nil {
		return fmt.Errorf("%s: %w", d.uri, err)
	}
	d.text, d.version = text, p.TextDocument.Version
	ss.changed(d)
	return nil
}

func (ss *session) didSave(raw json.RawMessage) error {
	var p didSaveParams
	if err := unmarshalParams(raw, &p); err != nil {
		return err
	}
	d, ok := ss.docs[p.TextDocument.URI]
	if !ok {
		return nil
	}
	if p.Text != nil {
		d.text = []byte(*p.Text)
	}
	if inv, ok := ss.srv.analyzer.(Invalidator); ok && d.path != "" {
		inv.Invalidate(d.path)
	}
	ss.changed(d)
	return nil
}

func (ss *session) didClose(raw json.RawMessage) error {
	var p didCloseParams
	if err := unmarshalParams(raw, &p); err != nil {
		return err
	}
	d, ok := ss.docs[p.TextDocument.URI]
	if !ok {
		return nil
	}
	delete(ss.docs, d.uri)
	ss.cancelRun(d)
	if d.pubDone || d.checked {
		ss.publish(d.uri, nil, []lspDiagnostic{})
	}
	// What other buffers say about this one is the file on disk again.
	for _, o := range ss.docs {
		if o.checked {
			ss.schedule(o, ss.srv.opts.Debounce)
		}
	}
	return nil
}

// changed schedules diagnostics for d and, since cross-references see every
// open buffer, for the other checked documents too, a little later so that
// d's result comes first.
func (ss *session) changed(d *document) {
	if d.checked {
		ss.schedule(d, ss.srv.opts.Debounce)
	}
	for _, o := range ss.docs {
		if o != d && o.checked {
			ss.schedule(o, 3*ss.srv.opts.Debounce)
		}
	}
}

// schedule (re)starts d's debounce: a run in progress is cancelled and its
// result will be dropped.
func (ss *session) schedule(d *document, delay time.Duration) {
	ss.cancelRun(d)
	d.gen++
	d.due = time.Now().Add(delay)
	ss.resetTimer()
}

func (ss *session) cancelRun(d *document) {
	if d.cancel != nil {
		d.cancel()
		d.cancel = nil
	}
	d.due = time.Time{}
}

// resetTimer arms the timer for the earliest due run.
func (ss *session) resetTimer() {
	var next time.Time
	for _, d := range ss.docs {
		if !d.due.IsZero() && (next.IsZero() || d.due.Before(next)) {
			next = d.due
		}
	}
	if next.IsZero() {
		ss.timer.Stop()
		return
	}
	ss.timer.Reset(time.Until(next))
}

// startDue starts every run whose debounce has passed.
func (ss *session) startDue() {
	now := time.Now()
	var overlay map[string][]byte
	for _, d := range ss.docs {
		if d.due.IsZero() || d.due.After(now) {
			continue
		}
		if overlay == nil {
			overlay = ss.overlay()
		}
		d.due = time.Time{}
		ctx, cancel := context.WithCancel(ss.base)
		d.cancel = cancel
		ss.wg.Add(1)
		go ss.run(ctx, d, d.gen, d.version, d.text, overlay)
	}
	ss.resetTimer()
}

// run computes diagnostics for one snapshot of d and hands them to the loop.
func (ss *session) run(ctx context.Context, d *document, gen uint64, ver int32, text []byte, overlay map[string][]byte) {
	defer ss.wg.Done()
	defer func() {
		if p := recover(); p != nil {
			ss.log.Error("lsp: diagnostics failed", "path", d.path, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	diags := func() []diag.Diagnostic {
		defer ss.busy.begin()()
		return ss.srv.analyzer.Diagnose(ctx, d.path, text, overlay)
	}()
	if ctx.Err() != nil {
		return
	}
	if f := ss.srv.opts.Filter; f != nil {
		diags = f(d.path, diags)
	}
	res := runResult{doc: d, gen: gen, ver: ver, diags: toLSP(d.path, text, diags, ss.utf8)}
	select {
	case ss.results <- res:
	case <-ss.stop:
	}
}

// toLSP converts diagnostics about path into the wire form, with
// characters counted in bytes when utf8 is set (the text is indexed once,
// however many diagnostics there are), else in UTF-16 code units.
func toLSP(path string, text []byte, diags []diag.Diagnostic, utf8 bool) []lspDiagnostic {
	var lines *syntax.LineIndex
	if utf8 && len(diags) > 0 {
		lines = syntax.NewLineIndex(text)
	}
	out := make([]lspDiagnostic, 0, len(diags))
	for _, d := range diags {
		if d.Path != "" && d.Path != path {
			continue
		}
		r := d.Range
		if lines != nil {
			r = convertRange(lines, r, true)
		}
		sev := severityError
		switch d.Severity {
		case diag.SeverityWarning:
			sev = severityWarning
		case diag.SeverityInfo:
			sev = severityInformation
		}
		out = append(out, lspDiagnostic{Range: r, Severity: sev, Code: d.Code, Source: "amplidex", Message: d.Message})
	}
	return out
}

// publishResult publishes a run's result unless it is stale: the document
// closed or reopened, or changed since the run started.
func (ss *session) publishResult(res runResult) {
	d := res.doc
	if ss.docs[d.uri] != d || res.gen != d.gen || ss.state != stateRunning {
		return
	}
	d.cancel = nil
	if d.pubDone && d.pubVer == res.ver && equalDiagnostics(d.pubDiag, res.diags) {
		return // a dependent's re-check that changed nothing
	}
	d.pubDone, d.pubVer, d.pubDiag = true, res.ver, res.diags
	v := res.ver
	ss.publish(d.uri, &v, res.diags)
}

func (ss *session) publish(uri string, version *int32, diags []lspDiagnostic) {
	err := ss.out.Notify("textDocument/publishDiagnostics",
		publishDiagnosticsParams{URI: uri, Version: version, Diagnostics: diags})
	if err != nil {
		ss.log.Error("lsp: cannot publish diagnostics", "uri", uri, "err", err)
	}
}

func equalDiagnostics(a, b []lspDiagnostic) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// positionRequest answers completion, definition and hover on their own
// goroutine, cancellable by $/cancelRequest.
func (ss *session) positionRequest(m *jsonrpc.Message) {
	var p requestParams
	if err := unmarshalParams(m.Params, &p); err != nil {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: m.Method + ": " + err.Error()})
		return
	}
	if m.Method == "textDocument/codeAction" {
		p.Position = p.Range.Start
	}
	d, ok := ss.docs[p.TextDocument.URI]
	if !ok || d.path == "" {
		ss.reply(m.ID, emptyResult(m.Method), nil)
		return
	}
	key := string(m.ID)
	if _, dup := ss.inflight[key]; dup {
		ss.reply(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: m.Method + ": id already in use"})
		return
	}
	ctx, cancel := context.WithCancel(ss.base)
	ss.inflight[key] = cancel
	pos, rng := p.Position, p.Range
	if ss.utf8 {
		lines := syntax.NewLineIndex(d.text)
		pos = convertPosition(lines, pos, false)
		rng = convertRange(lines, rng, false)
	}
	snap := snapshot{path: d.path, text: d.text, overlay: ss.overlay(), uri: d.uri}
	ss.wg.Add(1)
	go func() {
		defer ss.wg.Done()
		defer cancel()
		end := ss.busy.begin()
		result, rerr := ss.answer(ctx, m.Method, snap, pos, rng, p)
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

// snapshot is what a request handler sees of the buffers.
type snapshot struct {
	path    string
	uri     string
	text    []byte
	overlay map[string][]byte
}

func (ss *session) overlay() map[string][]byte {
	m := make(map[string][]byte, len(ss.docs))
	for _, d := range ss.docs {
		if d.path != "" {
			m[d.path] = d.text
		}
	}
	return m
}

func emptyResult(method string) any {
	switch method {
	case "textDocument/completion":
		return completionList{Items: []lspCompletionItem{}}
	case "textDocument/references":
		return []location{}
	case "textDocument/codeAction":
		return []lspCodeAction{}
	}
	return nil
}

// answer runs one position request against the analyzer. A panic in the
// analyzer becomes an internal error.
func (ss *session) answer(ctx context.Context, method string, snap snapshot, pos diag.Position, rng diag.Range, p requestParams) (result any, rerr *jsonrpc.Error) {
	defer func() {
		if p := recover(); p != nil {
			ss.log.Error("lsp: "+method+" failed", "path", snap.path, "panic", p, "stack", string(debug.Stack()))
			result, rerr = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: internal error: %v", method, p)}
		}
	}()
	a := ss.srv.analyzer
	switch method {
	case "textDocument/completion":
		items := a.Complete(ctx, snap.path, snap.text, snap.overlay, pos)
		list := completionList{Items: make([]lspCompletionItem, 0, len(items))}
		var lines *syntax.LineIndex
		if ss.utf8 && len(items) > 0 {
			lines = syntax.NewLineIndex(snap.text)
		}
		for _, it := range items {
			list.Items = append(list.Items, completionItem(lines, it))
		}
		return list, nil
	case "textDocument/definition":
		return ss.locations(a.Definition(ctx, snap.path, snap.text, snap.overlay, pos), snap), nil
	case "textDocument/references":
		return ss.locations(a.References(ctx, snap.path, snap.text, snap.overlay, pos, p.Context.IncludeDeclaration), snap), nil
	case "textDocument/codeAction":
		return ss.askedActions(ctx, snap, rng, p.Context.Only), nil
	default: // textDocument/hover
		md, ok := a.Hover(ctx, snap.path, snap.text, snap.overlay, pos)
		if !ok {
			return nil, nil
		}
		return hover{Contents: markupContent{Kind: "markdown", Value: md}}, nil
	}
}

// locations converts locations into the wire form, counting characters
// in bytes when the session does (each file indexed once).
func (ss *session) locations(locs []query.Location, snap snapshot) []location {
	out := make([]location, 0, len(locs))
	indexes := map[string]*syntax.LineIndex{}
	for _, l := range locs {
		r := l.Range
		if ss.utf8 {
			lines := indexes[l.Path]
			if lines == nil {
				lines = syntax.NewLineIndex(ss.textOf(l.Path, snap))
				indexes[l.Path] = lines
			}
			r = convertRange(lines, r, true)
		}
		out = append(out, location{URI: pathToURI(l.Path), Range: r})
	}
	return out
}

// codeActions converts actions into the wire form, keeping those of the
// kinds only asks for (all when it is empty). Their edits are of the
// buffer asked about.
func (ss *session) codeActions(actions []query.CodeAction, snap snapshot, only []string) []lspCodeAction {
	out := make([]lspCodeAction, 0, len(actions))
	var lines *syntax.LineIndex
	if ss.utf8 && len(actions) > 0 {
		lines = syntax.NewLineIndex(snap.text)
	}
	reported := ss.reported(snap.path, actions)
	for _, a := range actions {
		if !kindAsked(a.Kind, only) {
			continue
		}
		if a.Diagnostic != nil && reported != nil {
			d, ok := reported[unrated(*a.Diagnostic)]
			if !ok {
				continue // a fix of what the Filter does not report
			}
			a.Diagnostic = &d
		}
		ca := lspCodeAction{Title: a.Title, Kind: a.Kind, IsPreferred: a.Preferred, Edit: workspaceEdit{Changes: map[string][]textEdit{}}}
		if a.Diagnostic != nil {
			ca.Diagnostics = toLSP(snap.path, snap.text, []diag.Diagnostic{*a.Diagnostic}, ss.utf8)
		}
		for _, e := range a.Edits {
			if e.Path != snap.path {
				continue // an Analyzer edits the buffer asked about only
			}
			r := e.Range
			if lines != nil {
				r = convertRange(lines, r, true)
			}
			ca.Edit.Changes[snap.uri] = append(ca.Edit.Changes[snap.uri], textEdit{Range: r, NewText: e.NewText})
		}
		if len(ca.Edit.Changes) > 0 {
			out = append(out, ca)
		}
	}
	return out
}

// reported runs the Filter over the diagnostics of actions and returns
// what it keeps, as it reports them, by the diagnostic without its
// severity; nil when there is no Filter.
func (ss *session) reported(path string, actions []query.CodeAction) map[diag.Diagnostic]diag.Diagnostic {
	f := ss.srv.opts.Filter
	if f == nil {
		return nil
	}
	var ds []diag.Diagnostic
	for _, a := range actions {
		if a.Diagnostic != nil {
			ds = append(ds, *a.Diagnostic)
		}
	}
	out := map[diag.Diagnostic]diag.Diagnostic{}
	for _, d := range f(path, ds) {
		out[unrated(d)] = d
	}
	return out
}

// unrated is d without its severity, which the Filter may change.
func unrated(d diag.Diagnostic) diag.Diagnostic {
	d.Severity = ""
	return d
}

// kindAsked reports whether a code action of kind is among only, a kind
// standing for those below it too ("refactor" asks for
// "refactor.rewrite").
func kindAsked(kind string, only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if kind == o || strings.HasPrefix(kind, o+".") {
			return true
		}
	}
	return false
}

// completionItem converts an item into the wire form; lines, when not nil,
// indexes the buffer to count its characters in bytes.
func completionItem(lines *syntax.LineIndex, it query.CompletionItem) lspCompletionItem {
	out := lspCompletionItem{Label: it.Label, Kind: it.Kind, Detail: it.Detail}
	if it.Documentation != "" {
		out.Documentation = &markupContent{Kind: "markdown", Value: it.Documentation}
	}
	if it.Replace != nil {
		insert := it.InsertText
		if insert == "" {
			insert = it.Label
		}
		r := *it.Replace
		if lines != nil {
			r = convertRange(lines, r, true)
		}
		out.TextEdit = &textEdit{Range: r, NewText: insert}
		out.FilterText = insert
	} else {
		out.InsertText = it.InsertText
	}
	return out
}

// textOf returns the text of path for position conversion: the open buffer,
// else the file on disk (nil when unreadable).
func (ss *session) textOf(path string, snap snapshot) []byte {
	if t, ok := snap.overlay[path]; ok {
		return t
	}
	b, _ := readFileLimited(path, 16<<20)
	return b
}
