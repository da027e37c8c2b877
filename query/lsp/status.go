package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
)

// MethodStatus is amplidex's own notification, "amplidex/status": what
// answers the editor's questions (params Status). The server sends it to
// a client that asks for it in its capabilities
// (experimental.amplidexStatus: true): once the client is initialized,
// then whenever it changes, so that an editor's status item follows the
// daemon without running `amplidex status` itself.
const MethodStatus = "amplidex/status"

// The states a Status says.
const (
	// StateScanning: the daemon answers, and its first scan runs.
	StateScanning = "scanning"
	// StateReady: the daemon answers.
	StateReady = "ready"
	// StateInProcess: no daemon answers; the language server reads the
	// collections itself.
	StateInProcess = "in-process"
)

// Status is what answers an editor's questions, as MethodStatus carries
// it. It is comparable: a notification is sent when it changes.
type Status struct {
	// State is StateScanning, StateReady or StateInProcess.
	State string `json:"state"`
	// PID is the daemon's, when one answers.
	PID int `json:"pid,omitempty"`
	// Collections counts the collections of the daemon's roots (seen so
	// far, while it scans), Files the files it indexes (seen so far).
	Collections int `json:"collections"`
	Files       int `json:"files"`
	// Warnings counts the daemon's warnings (`amplidex status` says them).
	Warnings int `json:"warnings,omitempty"`
	// Message says more: how far the scan got, why no daemon answers.
	Message string `json:"message,omitempty"`
}

// StatusReporter is implemented by Analyzers that can say what answers.
// The server asks Status every Options.StatusEvery while a client that
// asked for MethodStatus is connected, and sends it when it differs from
// the last one sent.
type StatusReporter interface {
	// Status says what answers now. It must honour ctx.
	Status(ctx context.Context) Status
}

var (
	_ StatusReporter = InProcess{}
	_ StatusReporter = (*DaemonAnalyzer)(nil)
)

// defaultStatusEvery is how often the server asks its Analyzer's Status.
const defaultStatusEvery = time.Second

// InProcess is the Analyzer of a language server that no daemon
// answers: the engine's Workspace, in the server's process, which says
// so in its Status.
type InProcess struct{ *analysis.Workspace }

var (
	_ Analyzer    = InProcess{}
	_ Invalidator = InProcess{}
	_ Fixer       = InProcess{}
	_ Merger      = InProcess{}
)

// Status implements StatusReporter: the Workspace answers in process.
func (InProcess) Status(context.Context) Status {
	return Status{State: StateInProcess, Message: "no daemon runs: the language server reads the collections itself"}
}

// Status implements StatusReporter from the daemon's own status (one
// status call); when the daemon does not answer it, or did not answer the
// last question, the in-process Workspace answers. It does not connect
// again: the next question does.
func (d *DaemonAnalyzer) Status(ctx context.Context) Status {
	d.mu.Lock()
	c, failed := d.client, d.failed
	d.mu.Unlock()
	st, _, err := query.Call(ctx, c, query.MethodStatus, query.StatusParams{})
	switch {
	case err != nil:
		return Status{State: StateInProcess, Message: fmt.Sprintf("the daemon does not answer (%v): the language server reads the collections itself", err)}
	case failed:
		return Status{State: StateInProcess, PID: st.PID, Message: "the daemon did not answer the last question: the language server reads the collections itself"}
	case st.Scanning:
		s := Status{State: StateScanning, PID: st.PID, Warnings: len(st.Warnings)}
		if p := st.Progress; p != nil {
			s.Collections, s.Files, s.Message = p.Collections, p.Files, p.Phase
		}
		return s
	}
	s := Status{State: StateReady, PID: st.PID, Files: st.Files, Warnings: len(st.Warnings)}
	for _, r := range st.Roots {
		s.Collections += r.Collections
	}
	return s
}

// reportStatus sends the StatusReporter's Status when it changes (and
// first of all), asking it every Options.StatusEvery, until the session
// stops or is shut down.
func (ss *session) reportStatus(r StatusReporter) {
	defer ss.wg.Done()
	var last Status
	sent := false
	for {
		ctx, cancel := context.WithTimeout(ss.base, tasksTimeout)
		st := r.Status(ctx)
		cancel()
		if ss.down.Load() {
			return
		}
		if !sent || st != last {
			if err := ss.out.Notify(MethodStatus, st); err != nil {
				ss.log.Error("lsp: cannot send the status", "err", err)
			}
			last, sent = st, true
		}
		if !ss.pause(ss.srv.opts.StatusEvery) {
			return
		}
	}
}

// wantsStatus reports whether the client's experimental capabilities ask
// for MethodStatus: an object whose amplidexStatus is true.
func wantsStatus(experimental json.RawMessage) bool {
	var caps struct {
		AmplidexStatus bool `json:"amplidexStatus"`
	}
	return json.Unmarshal(experimental, &caps) == nil && caps.AmplidexStatus
}
