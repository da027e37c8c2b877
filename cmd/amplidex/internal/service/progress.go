package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
	"golang.org/x/term"
)

// StatusLine is one line of progress on a terminal, rewritten in place: the
// first scan a query waits for, a daemon starting, modules being fetched.
// It is also the writer the logger writes through, so that a log line
// clears the progress line and the progress line comes back under it.
// When the stream is not a terminal it only passes writes through, and
// Set shows nothing. Its methods are safe for concurrent use and on a nil
// StatusLine.
type StatusLine struct {
	w  io.Writer
	on bool

	mu    sync.Mutex // guards fields below
	text  string     // the line shown, "" for none
	shown time.Time  // when it was last drawn
}

// minRedraw is the least time between two redraws of a changed line.
const minRedraw = 100 * time.Millisecond

// NewStatusLine returns the status line of w; on says w is a terminal.
func NewStatusLine(w io.Writer, on bool) *StatusLine {
	return &StatusLine{w: w, on: on}
}

// Enabled reports whether Set shows anything.
func (l *StatusLine) Enabled() bool { return l != nil && l.on }

// Set shows text as the progress line, at most every minRedraw.
func (l *StatusLine) Set(format string, args ...any) {
	if !l.Enabled() {
		return
	}
	text := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if text == l.text || (l.text != "" && time.Since(l.shown) < minRedraw) {
		return
	}
	l.text = fit(text, l.width())
	l.draw()
}

// Clear removes the progress line.
func (l *StatusLine) Clear() {
	if !l.Enabled() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.text != "" {
		io.WriteString(l.w, "\r\x1b[K")
		l.text = ""
	}
}

// Write writes p under the progress line: it clears the line, writes p and
// draws the line again.
func (l *StatusLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.text == "" {
		return l.w.Write(p)
	}
	io.WriteString(l.w, "\r\x1b[K")
	n, err := l.w.Write(p)
	l.draw()
	return n, err
}

// draw writes the line, without a newline. l.mu is held.
func (l *StatusLine) draw() {
	io.WriteString(l.w, "\r\x1b[K"+l.text)
	l.shown = time.Now()
}

// width is the terminal's width, or 80.
func (l *StatusLine) width() int {
	if f, ok := l.w.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

// fit cuts s to fewer than width columns (counting runes), so that the
// line never wraps.
func fit(s string, width int) string {
	r := []rune(s)
	if len(r) < width {
		return s
	}
	if width < 2 {
		return ""
	}
	return string(r[:width-2]) + "…"
}

// callTimeout bounds a question to the daemon, counted from when it was
// asked or from the end of the daemon's first scan, whichever is later.
const callTimeout = 30 * time.Second

// scanPoll is how long a question waits before it looks at the daemon's
// status, and then how often it does.
const scanPoll = 500 * time.Millisecond

// errCallTimeout is the cause of a question's end after callTimeout.
var errCallTimeout = errors.New("no answer in time")

// Call runs call, a question to the daemon of ws, on this
// goroutine. A question that takes longer than half a second looks at the
// daemon's status: while its first scan runs, or the registration (first
// read) of ws's project, the wait does not count against callTimeout, and
// on a terminal (never with --json) one line on stderr shows how far it
// got. The status is watched by a timer's goroutine, on a connection of its
// own, so that a question answered at once starts no goroutine and opens no
// other connection.
func (l *Launcher) Call(ctx context.Context, ws *lint.Workspace, showProgress bool, call func(context.Context) error) error {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timeout := time.AfterFunc(callTimeout, func() { cancel(errCallTimeout) })
	defer timeout.Stop()
	defer l.status().Clear()
	stop, watched := make(chan struct{}), make(chan struct{})
	watch := time.AfterFunc(scanPoll, func() {
		defer close(watched)
		l.watchScan(cctx, ws, showProgress, timeout, stop)
	})
	err := call(cctx)
	close(stop)
	if !watch.Stop() {
		<-watched // it started: wait until it has seen stop
	}
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(cctx), errCallTimeout) {
		return fmt.Errorf("no answer within %s: %w", callTimeout, context.DeadlineExceeded)
	}
	return err
}

// watchScan asks the daemon of ws for its status every scanPoll until
// stop is closed or ctx ends. While the daemon's first scan or the
// registration of ws's project runs, it puts timeout off by callTimeout
// each time, and with show set it shows how far that got.
func (l *Launcher) watchScan(ctx context.Context, ws *lint.Workspace, show bool, timeout *time.Timer, stop <-chan struct{}) {
	tick := time.NewTicker(scanPoll)
	defer tick.Stop()
	var c *query.SyncClient
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	project := ws.DaemonProject()
	for {
		sctx, scancel := context.WithTimeout(ctx, time.Second)
		if c == nil {
			c, _ = query.DialSync(sctx, ws.Paths.Socket)
		}
		var st *query.Status
		if c != nil {
			var err error
			if st, _, err = query.Ask(sctx, c, query.MethodStatus, query.StatusParams{}); err != nil {
				c.Close() // given up on, or refused: a new connection next time
				c, st = nil, nil
			}
		}
		scancel()
		switch {
		case st == nil:
		case st.Scanning:
			timeout.Reset(callTimeout)
			if p := st.Progress; show && p != nil {
				l.status().Set("amplidex: waiting for the daemon's first scan: %s, %s, %s",
					query.Plural(p.Files, "file"), query.Plural(p.Collections, "collection"), p.Elapsed)
			}
		default:
			if r := registrationOf(st, project); r != nil {
				timeout.Reset(callTimeout)
				if show {
					l.status().Set("amplidex: waiting for the daemon to read the project (%s): %s, %s, %s",
						r.Phase, query.Plural(r.Files, "file"), query.Plural(r.Collections, "collection"), r.Elapsed)
				}
			}
		}
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// registrationOf returns the registration of project that st shows, or
// nil.
func registrationOf(st *query.Status, project string) *query.RegistrationProgress {
	for i, r := range st.Registering {
		if r.Dir == project {
			return &st.Registering[i]
		}
	}
	return nil
}
