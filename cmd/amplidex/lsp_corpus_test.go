package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// corpusEnv is an environment over the corpus, as corpus.txtar sets it
// up: the user root links to corpus/collections, corpus/bundled is
// bundled. amplidexHome names amplidex's own files (and so the socket).
func corpusEnv(t *testing.T, corpus, dir, amplidexHome string) map[string]string {
	home := filepath.Join(dir, "home")
	return map[string]string{
		"HOME":             home,
		"AMPLIDEX_HOME":    amplidexHome,
		"AMPLIDEX_BUNDLED": filepath.Join(corpus, "bundled"),
		"XDG_CONFIG_HOME":  filepath.Join(dir, "config"),
		"XDG_STATE_HOME":   filepath.Join(dir, "state"),
		"XDG_RUNTIME_DIR":  filepath.Join(dir, "run"),
		"NO_COLOR":         "1",
	}
}

// corpusDaemon is a daemon over the corpus, and the environments of a
// client of it and of one that answers in process.
type corpusDaemon struct {
	env, solo    map[string]string
	paths        query.Paths
	home, corpus string
}

// startCorpusDaemon starts a daemon over the corpus (the user root links
// to corpus/collections), stopped when the test ends; it skips the test
// when AMPLIDEX_CORPUS is unset.
func startCorpusDaemon(t *testing.T) corpusDaemon {
	t.Helper()
	corpus := os.Getenv("AMPLIDEX_CORPUS")
	if corpus == "" {
		t.Skip("AMPLIDEX_CORPUS is not set: no corpus to test against")
	}
	dir := t.TempDir()
	cd := corpusDaemon{corpus: corpus,
		env:  corpusEnv(t, corpus, dir, filepath.Join(dir, "amplidex")),
		solo: corpusEnv(t, corpus, dir, filepath.Join(dir, "amplidex-solo"))}
	cd.solo["AMPLIDEX_NO_SPAWN"] = "1"
	cd.home = cd.env["HOME"]
	if err := os.MkdirAll(filepath.Join(cd.home, ".amplifier"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(corpus, "collections"), filepath.Join(cd.home, ".amplifier", "collections")); err != nil {
		t.Fatal(err)
	}
	var err error
	if cd.paths, err = query.DefaultPaths(func(k string) string { return cd.env[k] }); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Start(context.Background(), daemon.Options{Paths: cd.paths, Home: cd.home,
		Bundled: []string{cd.env["AMPLIDEX_BUNDLED"]}, NoSync: true,
		Watch: watcher.Options{Debounce: 5 * time.Millisecond, PollInterval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return cd
}

// lspSession is `amplidex lsp` run in process, driven through pipes as an
// editor drives it.
type lspSession struct {
	t      *testing.T
	in     *io.PipeWriter
	msgs   chan map[string]json.RawMessage
	stderr *lockedBuffer
	done   chan int
	id     int
}

type lockedBuffer struct {
	mu sync.Mutex // guards b
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startLSP(t *testing.T, env map[string]string, encodings ...string) *lspSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &lspSession{t: t, in: inW, msgs: make(chan map[string]json.RawMessage, 64), stderr: &lockedBuffer{}, done: make(chan int, 1)}
	app := NewApp(inR, outW, s.stderr, func(k string) string { return env[k] })
	go func() {
		code := app.Run(context.Background(), []string{"lsp", "--debounce", "1ms"})
		outW.Close()
		s.done <- code
	}()
	go func() {
		defer close(s.msgs)
		br := bufio.NewReader(outR)
		for {
			h, err := textproto.NewReader(br).ReadMIMEHeader()
			if err != nil {
				return
			}
			n, _ := strconv.Atoi(h.Get("Content-Length"))
			body := make([]byte, n)
			if _, err := io.ReadFull(br, body); err != nil {
				return
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(body, &m); err != nil {
				t.Errorf("lsp wrote %q: %v", body, err)
				return
			}
			s.msgs <- m
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		go func() {
			for range s.msgs {
			}
		}()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Error("amplidex lsp did not end")
		}
	})
	caps := map[string]any{}
	if len(encodings) > 0 {
		caps["general"] = map[string]any{"positionEncodings": encodings}
	}
	s.call("initialize", map[string]any{"processId": nil, "capabilities": caps})
	s.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	return s
}

func (s *lspSession) send(v any) {
	s.t.Helper()
	body, _ := json.Marshal(v)
	if _, err := fmt.Fprintf(s.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		s.t.Fatal(err)
	}
}

// next returns the next message of the server that keep accepts.
func (s *lspSession) next(keep func(map[string]json.RawMessage) bool) map[string]json.RawMessage {
	s.t.Helper()
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				s.t.Fatalf("amplidex lsp ended; stderr:\n%s", s.stderr.String())
			}
			if keep(m) {
				return m
			}
		case <-time.After(20 * time.Second):
			s.t.Fatalf("no answer from amplidex lsp; stderr:\n%s", s.stderr.String())
		}
	}
}

func (s *lspSession) call(method string, params any) json.RawMessage {
	s.t.Helper()
	s.id++
	id := strconv.Itoa(s.id)
	s.send(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	m := s.next(func(m map[string]json.RawMessage) bool { return string(m["id"]) == id })
	if e := m["error"]; e != nil {
		s.t.Fatalf("%s: %s", method, e)
	}
	return m["result"]
}

// wireDiagnostic is a diagnostic as the server publishes it.
type wireDiagnostic struct {
	Range    diag.Range `json:"range"`
	Severity int        `json:"severity"`
	Code     string     `json:"code,omitempty"`
	Source   string     `json:"source"`
	Message  string     `json:"message"`
}

// diagnose opens path, returns what the server publishes for it, and
// closes it again.
func (s *lspSession) diagnose(path string, text []byte) []wireDiagnostic {
	s.t.Helper()
	uri := fileURI(path)
	s.send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": "markdown", "version": 1, "text": string(text)}}})
	m := s.next(func(m map[string]json.RawMessage) bool {
		if string(m["method"]) != `"textDocument/publishDiagnostics"` {
			return false
		}
		var p struct {
			URI     string `json:"uri"`
			Version *int   `json:"version"`
		}
		_ = json.Unmarshal(m["params"], &p)
		return p.URI == uri && p.Version != nil && *p.Version == 1
	})
	var p struct {
		Diagnostics []wireDiagnostic `json:"diagnostics"`
	}
	if err := json.Unmarshal(m["params"], &p); err != nil {
		s.t.Fatal(err)
	}
	s.send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didClose", "params": map[string]any{
		"textDocument": map[string]any{"uri": uri}}})
	return p.Diagnostics
}

// published is what the server publishes for check's diagnostics of a
// file, characters counted in bytes when utf8 is set.
func published(ds []diag.Diagnostic, text []byte, utf8 bool) []wireDiagnostic {
	lines := syntax.NewLineIndex(text)
	col := func(p diag.Position) diag.Position {
		if !utf8 || p.Line >= lines.Lines() {
			return p
		}
		return diag.Position{Line: p.Line, Character: lines.PositionOffset(p) - lines.LineStart(p.Line)}
	}
	out := []wireDiagnostic{}
	for _, d := range ds {
		sev := map[diag.Severity]int{diag.SeverityError: 1, diag.SeverityWarning: 2, diag.SeverityInfo: 3}[d.Severity]
		out = append(out, wireDiagnostic{Range: diag.Range{Start: col(d.Range.Start), End: col(d.Range.End)},
			Severity: sev, Code: d.Code, Source: "amplidex", Message: d.Message})
	}
	return out
}

// TestLSPDiagnosticsAreCheck: on the corpus, for every profile and agent,
// the language server publishes exactly the diagnostics the daemon's
// `diagnostics` answer has for the file, through the daemon (UTF-8
// columns) and in process (UTF-16); and hover on the extends of
// sb/profiles/dev-sb.md shows the whole chain both ways.
func TestLSPDiagnosticsAreCheck(t *testing.T) {
	cd := startCorpusDaemon(t)
	env, solo, home, paths := cd.env, cd.solo, cd.home, cd.paths
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := query.Dial(ctx, paths.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// Every profile and agent of every collection, shadowed ones too.
	cat := catalog.New(catalog.Options{Home: home, Bundled: []string{env["AMPLIDEX_BUNDLED"]}})
	st, _ := cat.AddProject("")
	v, _ := st.View("")
	var files []string
	for _, col := range v.Set.Collections() {
		for _, r := range col.Resources {
			if r.Kind == discovery.KindProfile || r.Kind == discovery.KindAgent {
				files = append(files, r.Path)
			}
		}
	}
	if len(files) < 50 {
		t.Fatalf("only %d profiles and agents in the corpus", len(files))
	}

	viaDaemon := startLSP(t, env, "utf-8")
	inProcess := startLSP(t, solo)
	differ, withDiags, diags := 0, 0, 0
	for _, path := range files {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, _, err := query.Call(ctx, c, query.MethodDiagnostics, query.DiagnosticsParams{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(res.Diagnostics); n > 0 {
			withDiags, diags = withDiags+1, diags+n
		}
		for _, s := range []struct {
			name string
			lsp  *lspSession
			utf8 bool
		}{{"through the daemon", viaDaemon, true}, {"in process", inProcess, false}} {
			want, _ := json.Marshal(published(res.Diagnostics, text, s.utf8))
			got, _ := json.Marshal(s.lsp.diagnose(path, text))
			if string(got) != string(want) {
				differ++
				t.Errorf("%s, %s:\npublished %s\ncheck     %s", path, s.name, got, want)
			}
		}
	}
	t.Logf("%d files compared (%d with %d diagnostics), %d differ", len(files), withDiags, diags, differ)

	devSB := filepath.Join(home, ".amplifier/collections/Joi__amplifier-collection-switchboard/profiles/dev-sb.md")
	text, err := os.ReadFile(devSB)
	if err != nil {
		t.Fatal(err)
	}
	const chain = "Inherits: sb:dev-sb → toolkit:toolkit-dev → developer-expertise:dev → foundation:base → foundation:foundation"
	line := strings.Count(string(text[:strings.Index(string(text), "extends:")]), "\n")
	var hovers []string
	for _, s := range []*lspSession{viaDaemon, inProcess} {
		uri := fileURI(devSB)
		s.send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": map[string]any{
			"textDocument": map[string]any{"uri": uri, "languageId": "markdown", "version": 1, "text": string(text)}}})
		var h struct {
			Contents struct {
				Value string `json:"value"`
			} `json:"contents"`
		}
		r := s.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": line, "character": 14}})
		if err := json.Unmarshal(r, &h); err != nil || !strings.Contains(h.Contents.Value, chain+"\n") {
			t.Errorf("hover on extends lacks %q: %s", chain, r)
		}
		hovers = append(hovers, h.Contents.Value)
	}
	if hovers[0] != hovers[1] {
		t.Errorf("through the daemon:\n%s\nin process:\n%s", hovers[0], hovers[1])
	}
	if log := viaDaemon.stderr.String(); !strings.Contains(log, "answering through the daemon") || strings.Contains(log, "does not answer") {
		t.Errorf("the daemon-backed session did not answer through the daemon:\n%s", log)
	}
	if log := inProcess.stderr.String(); strings.Contains(log, "answering through the daemon") {
		t.Errorf("the in-process session found a daemon:\n%s", log)
	}
}

// fileURI is the file:// URI of the path p, as an editor names it.
func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}
