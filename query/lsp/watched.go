package lsp

import (
	"encoding/json"
	"time"

	"github.com/amplidex/amplidex/query/lsp/jsonrpc"
)

// The server hears the disk through the client: it asks a client that
// can register capabilities dynamically to watch the files amplidex
// reads (workspace/didChangeWatchedFiles), and on every change it tells
// the Analyzer (Invalidator) and checks again every open document, so
// that a git checkout, a rename in a terminal or an edit in another
// editor reaches open documents without an edit of theirs. A document
// whose result did not change is not published again; one whose problems
// went away gets an empty list.

// watchGlobs are the files the server asks the client to watch: what
// collections and bundle repositories are made of.
var watchGlobs = []string{"**/*.md", "**/*.yaml", "**/*.yml", "**/*.toml", "**/*.lock"}

// watchRegistrationID names the server's registration of watched files.
const watchRegistrationID = "amplidex-watched-files"

// Watch kinds of a file system watcher: create, change and delete.
const watchAll = 1 | 2 | 4

type (
	registrationParams struct {
		Registrations []registration `json:"registrations"`
	}
	registration struct {
		ID              string `json:"id"`
		Method          string `json:"method"`
		RegisterOptions any    `json:"registerOptions,omitempty"`
	}
	watchedFilesOptions struct {
		Watchers []fileSystemWatcher `json:"watchers"`
	}
	fileSystemWatcher struct {
		GlobPattern string `json:"globPattern"`
		Kind        int    `json:"kind,omitempty"`
	}
	didChangeWatchedFilesParams struct {
		Changes []fileEvent `json:"changes"`
	}
	fileEvent struct {
		URI  string `json:"uri"`
		Type int    `json:"type"` // 1 created, 2 changed, 3 deleted
	}
)

// registerTimeout bounds the wait for the client's answer to
// client/registerCapability.
const registerTimeout = 5 * time.Second

// registerWatchers asks the client to watch the files amplidex reads. It
// runs on its own goroutine (the loop delivers the answer).
func (ss *session) registerWatchers() {
	defer ss.wg.Done()
	id, ch := ss.calls.start()
	watchers := make([]fileSystemWatcher, 0, len(watchGlobs))
	for _, g := range watchGlobs {
		watchers = append(watchers, fileSystemWatcher{GlobPattern: g, Kind: watchAll})
	}
	req := jsonrpc.Message{JSONRPC: "2.0", ID: id, Method: "client/registerCapability"}
	req.Params, _ = json.Marshal(registrationParams{Registrations: []registration{{
		ID: watchRegistrationID, Method: "workspace/didChangeWatchedFiles",
		RegisterOptions: watchedFilesOptions{Watchers: watchers},
	}}}) // strings and ints: Marshal cannot fail
	if err := ss.out.Send(&req); err != nil {
		ss.calls.forget(id)
		ss.log.Error("lsp: cannot ask to watch files", "err", err)
		return
	}
	t := time.NewTimer(registerTimeout)
	defer t.Stop()
	select {
	case m := <-ch:
		if m.Error != nil {
			ss.log.Warn("lsp: the client does not watch files for the server; open documents are checked again only when edited or saved", "err", m.Error.Message)
		}
	case <-t.C:
		ss.calls.forget(id)
		ss.log.Info("lsp: no answer to client/registerCapability", "within", registerTimeout)
	case <-ss.stop:
		ss.calls.forget(id)
	}
}

// didChangeWatchedFiles passes every file changed on disk to the
// Analyzer and checks every open document again: any of them may depend
// on what changed (a collection's View, a bundle's includes).
func (ss *session) didChangeWatchedFiles(raw json.RawMessage) error {
	var p didChangeWatchedFilesParams
	if err := unmarshalParams(raw, &p); err != nil {
		return err
	}
	inv, _ := ss.srv.analyzer.(Invalidator)
	seen := false
	for _, c := range p.Changes {
		path, err := uriToPath(c.URI)
		if err != nil {
			continue
		}
		seen = true
		if inv != nil {
			inv.Invalidate(path)
		}
	}
	if !seen {
		return nil
	}
	for _, d := range ss.docs {
		if d.checked {
			ss.schedule(d, ss.srv.opts.Debounce)
		}
	}
	return nil
}
