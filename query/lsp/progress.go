package lsp

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amplidex/amplidex/query/lsp/jsonrpc"
)

// Task is long work elsewhere that an Analyzer's answers wait for (the
// daemon's first scan, the first read of a project), as an editor shows
// it: work-done progress.
type Task struct {
	// ID stays the same over the task's life; no two tasks share one.
	ID string
	// Title says what the work is, Message how far it got.
	Title, Message string
}

// Tasker is implemented by Analyzers whose answers may wait for long work
// elsewhere. Once a diagnostics run or a request has waited for the
// Analyzer for Options.ProgressDelay, the server asks Tasks what is under
// way, and again every Options.ProgressEvery while anything waits or a
// task is shown. It shows each task to a client that supports work-done
// progress (window.workDoneProgress in its capabilities):
// window/workDoneProgress/create, then $/progress begin, a report
// whenever the message changes, and end once Tasks no longer returns it.
type Tasker interface {
	// Tasks returns the work under way that answers wait for; none when
	// it cannot tell. It must honour ctx.
	Tasks(ctx context.Context) []Task
}

// Defaults of the progress options.
const (
	defaultProgressDelay = 300 * time.Millisecond
	defaultProgressEvery = 250 * time.Millisecond
	// createTimeout bounds the wait for the client's answer to
	// window/workDoneProgress/create; without one, the task is not shown.
	createTimeout = 5 * time.Second
	// tasksTimeout bounds one question to the Tasker.
	tasksTimeout = 2 * time.Second
)

// work-done progress on the wire.
type (
	workDoneProgressCreateParams struct {
		Token string `json:"token"`
	}
	progressParams struct {
		Token string        `json:"token"`
		Value progressValue `json:"value"`
	}
	progressValue struct {
		Kind        string `json:"kind"` // begin, report or end
		Title       string `json:"title,omitempty"`
		Message     string `json:"message,omitempty"`
		Cancellable *bool  `json:"cancellable,omitempty"`
	}
)

// calls are the requests the server sent the client and waits for the
// answers to. The loop delivers the answers; whoever sent a request waits
// on its channel.
type calls struct {
	mu      sync.Mutex // guards fields below
	next    int
	pending map[string]chan *jsonrpc.Message
}

// start registers a new request and returns its id and the channel its
// answer arrives on.
func (c *calls) start() (json.RawMessage, chan *jsonrpc.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	id := json.RawMessage(strconv.Quote("amplidex-" + strconv.Itoa(c.next)))
	ch := make(chan *jsonrpc.Message, 1)
	if c.pending == nil {
		c.pending = map[string]chan *jsonrpc.Message{}
	}
	c.pending[string(id)] = ch
	return id, ch
}

// forget drops a request no answer is waited for any more.
func (c *calls) forget(id json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, string(id))
}

// deliver hands an answer of the client to its request; an answer to no
// request of ours is dropped.
func (c *calls) deliver(m *jsonrpc.Message) {
	c.mu.Lock()
	ch := c.pending[string(m.ID)]
	delete(c.pending, string(m.ID))
	c.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// waiting counts the calls of the Analyzer in progress, and wakes the
// progress reporter when the first begins.
type waiting struct {
	n    atomic.Int32
	wake chan struct{} // capacity 1
}

// begin counts a call of the Analyzer; the function it returns ends it.
func (w *waiting) begin() (end func()) {
	if w.n.Add(1) == 1 {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	return func() { w.n.Add(-1) }
}

// shownTask is a task the client shows: its token, and the message it
// shows.
type shownTask struct {
	token   string
	message string
}

// reportProgress shows the Tasker's tasks while calls of the Analyzer
// wait (see Tasker). It runs until the session stops.
func (ss *session) reportProgress(t Tasker) {
	defer ss.wg.Done()
	delay, every := ss.srv.opts.ProgressDelay, ss.srv.opts.ProgressEvery
	shown := map[string]*shownTask{}
	// refused holds the tasks the client did not create a token for:
	// they are not asked about again.
	refused := map[string]bool{}
	tokens := 0
	for {
		if len(shown) == 0 && ss.busy.n.Load() == 0 {
			select {
			case <-ss.stop:
				return
			case <-ss.busy.wake:
			}
			// Most answers come at once: look only at a call that waits.
			if !ss.pause(delay) {
				return
			}
			if ss.busy.n.Load() == 0 {
				continue
			}
		}
		ctx, cancel := context.WithTimeout(ss.base, tasksTimeout)
		tasks := t.Tasks(ctx)
		cancel()
		live := map[string]bool{}
		for _, task := range tasks {
			live[task.ID] = true
			s := shown[task.ID]
			switch {
			case s != nil:
				if task.Message != s.message {
					s.message = task.Message
					ss.progress(s.token, progressValue{Kind: "report", Message: task.Message})
				}
			case !refused[task.ID]:
				tokens++
				token := "amplidex/progress/" + strconv.Itoa(tokens)
				if !ss.createProgress(token) {
					refused[task.ID] = true
					continue
				}
				no := false
				ss.progress(token, progressValue{Kind: "begin", Title: task.Title, Message: task.Message, Cancellable: &no})
				shown[task.ID] = &shownTask{token: token, message: task.Message}
			}
		}
		for id, s := range shown {
			if !live[id] {
				ss.progress(s.token, progressValue{Kind: "end"})
				delete(shown, id)
			}
		}
		if len(shown) == 0 && ss.busy.n.Load() == 0 {
			continue
		}
		// Something waits, or is shown: look again soon.
		if !ss.pause(every) {
			return
		}
	}
}

// pause waits for d, and reports false when the session stops first.
func (ss *session) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ss.stop:
		return false
	}
}

// createProgress asks the client for the token, and reports whether it
// agreed in time.
func (ss *session) createProgress(token string) bool {
	id, ch := ss.calls.start()
	req := jsonrpc.Message{JSONRPC: "2.0", ID: id, Method: "window/workDoneProgress/create"}
	req.Params, _ = json.Marshal(workDoneProgressCreateParams{Token: token}) // a string: Marshal cannot fail
	if err := ss.out.Send(&req); err != nil {
		ss.calls.forget(id)
		ss.log.Error("lsp: cannot ask for a progress token", "err", err)
		return false
	}
	t := time.NewTimer(createTimeout)
	defer t.Stop()
	select {
	case m := <-ch:
		if m.Error != nil {
			ss.log.Info("lsp: the client refused a progress token", "err", m.Error.Message)
			return false
		}
		return true
	case <-t.C:
		ss.calls.forget(id)
		ss.log.Info("lsp: no answer to window/workDoneProgress/create", "within", createTimeout)
		return false
	case <-ss.stop:
		ss.calls.forget(id)
		return false
	}
}

// progress sends one $/progress notification.
func (ss *session) progress(token string, v progressValue) {
	if err := ss.out.Notify("$/progress", progressParams{Token: token, Value: v}); err != nil {
		ss.log.Error("lsp: cannot send progress", "err", err)
	}
}
