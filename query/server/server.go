package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/lines"
	"github.com/amplidex/amplidex/query/internal/sockos"
	"github.com/amplidex/amplidex/query/internal/trust"
)

// ErrInUse is returned by Listen when another live server holds the socket.
var ErrInUse = errors.New("query: socket in use by a running server")

const (
	// maxInFlight bounds the requests one connection has being answered at
	// once; the server stops reading the connection while it is reached.
	maxInFlight = 64
	// probeTimeout bounds the connection attempt that tells a live socket
	// from a stale one.
	probeTimeout = time.Second
	// defaultWriteTimeout is the WriteTimeout used when it is zero.
	defaultWriteTimeout = 10 * time.Second
	// readBufferSize is the buffer each connection reads through. A request
	// line that fits in it takes nothing from the RequestBudget.
	readBufferSize = 4 << 10
	// writeBufferSize is the buffer each connection writes through; a
	// large result is encoded into it one element at a time.
	writeBufferSize = 32 << 10
)

// DefaultRequestBudget is the RequestBudget of a Server that sets none.
const DefaultRequestBudget = 64 << 20

// DefaultAnswerBudget is the AnswerBudget of a Server that sets none.
const DefaultAnswerBudget = 64 << 20

// Server serves a query.Handler on a unix socket. Create it with New, set
// the exported fields, then call Listen (or Serve, with a listener handed
// over) once; Close or Shutdown stop it.
type Server struct {
	// Logger receives connection errors and refusals; nil discards them.
	Logger *slog.Logger
	// WriteTimeout bounds each write to a connection; a peer that does not
	// read for that long is disconnected. Zero means 10 seconds.
	WriteTimeout time.Duration
	// RequestBudget bounds the bytes of request lines the server holds at
	// once over all its connections. A line longer than a connection's
	// small read buffer takes its bytes from the budget as it is read and
	// gives them back once answered; a line the budget cannot hold is
	// discarded as it is read and answered with query.CodeOverloaded. Zero means
	// DefaultRequestBudget.
	RequestBudget int64
	// AnswerBudget bounds the bytes of answers marshalled whole that the
	// server holds at once over all its connections, while peers read
	// them. An answer that fits in a connection's write buffer takes
	// nothing from it, nor does one streamed (see query.Handler); one the budget
	// cannot hold is answered with query.CodeOverloaded instead, unless it is
	// the only one held. Zero means DefaultAnswerBudget.
	AnswerBudget int64
	// Activity, when set, is told how many connections are open whenever
	// that changes: after one is accepted, and after one has ended (its
	// requests answered, its subscriptions ended). Calls come one at a
	// time, in order, with the server's lock held: Activity must return at
	// once, and call no method of the Server. A daemon that exits once it
	// has had no client for a while counts its clients with it.
	Activity func(open int)
	// MaxConns bounds the connections open at once; one more is answered
	// with a query.CodeOverloaded error line and closed. MaxPeerConns bounds
	// those of one peer process (as the kernel names it), so that one
	// process cannot take them all. Zero means DefaultMaxConns and
	// DefaultMaxPeerConns.
	MaxConns, MaxPeerConns int
	// MaxRequests bounds the requests being answered at once over all
	// connections, MaxPeerRequests those of one peer process; a request
	// beyond either is answered with query.CodeOverloaded, not run. (One
	// connection has at most 64 being answered; the server stops reading
	// it while it has.) Zero means DefaultMaxRequests and
	// DefaultMaxPeerRequests.
	MaxRequests, MaxPeerRequests int
	// Build is the build the server is of: a request that names another
	// (query.Request.Build) is refused with query.CodeOtherBuild, not run. New
	// sets it to query.ReadBuild().
	Build query.Build

	handler query.Handler
	clock   func() query.Clock
	// trust checks the socket's directory and each peer; tests replace its
	// functions to play another user.
	trust trust.User
	// log, writeTimeout, budget, answers and activity are Logger,
	// WriteTimeout, RequestBudget, AnswerBudget and Activity as Listen
	// found them, with defaults filled in.
	log          *slog.Logger
	writeTimeout time.Duration
	budget       *lines.Budget
	answers      *lines.Budget
	activity     func(open int)
	// load counts connections and requests against MaxConns,
	// MaxPeerConns, MaxRequests and MaxPeerRequests; refused rate-limits
	// the log of what they refuse.
	load    *load
	refused refusals
	// writers are the write buffers of the connections writing now.
	writers sync.Pool
	// buildKey and buildText are Build's Key and String, as Listen found
	// it.
	buildKey, buildText string

	// ctx is the parent of every handler context; cancel ends it when
	// shutdown begins.
	ctx    context.Context
	cancel context.CancelFunc

	// stopped is closed when shutdown has begun and every goroutine has
	// returned.
	stopped      chan struct{}
	shutdownOnce sync.Once
	shutdownErr  error

	wg sync.WaitGroup // the accept loop and every connection

	mu       sync.Mutex // guards fields below
	closing  bool
	listened bool
	path     string
	ln       *net.UnixListener
	lock     *os.File
	// handed is set when Serve was given a listener made by another
	// (systemd's socket activation): the socket file is not the server's
	// to remove.
	handed bool
	conns  map[*conn]struct{}
}

// New returns a Server that answers with h and stamps every response
// with clock(), called after the handler returns. clock may be nil, and
// then responses carry no clock.
func New(h query.Handler, clock func() query.Clock) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	if clock == nil {
		clock = func() query.Clock { return query.Clock{} }
	}
	return &Server{
		Build:   query.ReadBuild(),
		handler: h,
		clock:   clock,
		trust:   trust.System(),
		ctx:     ctx,
		cancel:  cancel,
		stopped: make(chan struct{}),
		conns:   make(map[*conn]struct{}),
		writers: sync.Pool{New: func() any { return bufio.NewWriterSize(nil, writeBufferSize) }},
	}
}

// Listen creates the socket at path and serves it in the background until
// Close or Shutdown. It makes the socket's directory (mode 0700, see the
// package Caveats), takes the lock beside the socket, removes a stale
// socket, and returns ErrInUse when a live server already answers there.
// A socket in the fallback directory of DefaultPaths may move to another
// fallback directory when that one is not the user's; Path says where.
func (s *Server) Listen(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		return fmt.Errorf("listen %s: %w", path, query.ErrClosed)
	case s.listened:
		return fmt.Errorf("listen %s: already listening on %s", path, s.path)
	case len(path) > sockos.MaxPath:
		return fmt.Errorf("listen %s: socket path is %d bytes, longer than the %d a unix socket allows", path, len(path), sockos.MaxPath)
	}
	s.setup()
	asked := path
	path, err := listenPath(s.trust, path, s.log)
	if err != nil {
		return fmt.Errorf("listen %s: %w", asked, err)
	}
	if len(path) > sockos.MaxPath {
		return fmt.Errorf("listen %s: socket path is %d bytes, longer than the %d a unix socket allows", path, len(path), sockos.MaxPath)
	}
	lock, err := lockFile(path + ".lock")
	if err != nil {
		return fmt.Errorf("listen %s: %w", path, err)
	}
	if err := removeStale(path); err != nil {
		lock.Close()
		return fmt.Errorf("listen %s: %w", path, err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		lock.Close()
		return fmt.Errorf("listen %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path)
		lock.Close()
		return fmt.Errorf("listen %s: %w", path, err)
	}
	s.listened, s.path, s.ln, s.lock = true, path, ln, lock
	s.wg.Add(1)
	go s.acceptLoop(ln)
	return nil
}

// setup fills in the defaults of the exported fields. s.mu is held.
func (s *Server) setup() {
	s.log = s.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.writeTimeout = s.WriteTimeout
	if s.writeTimeout <= 0 {
		s.writeTimeout = defaultWriteTimeout
	}
	s.budget = &lines.Budget{Limit: s.RequestBudget}
	if s.budget.Limit <= 0 {
		s.budget.Limit = DefaultRequestBudget
	}
	s.activity = s.Activity
	s.answers = &lines.Budget{Limit: s.AnswerBudget}
	if s.answers.Limit <= 0 {
		s.answers.Limit = DefaultAnswerBudget
	}
	s.load = newLoad(s.MaxConns, s.MaxPeerConns, s.MaxRequests, s.MaxPeerRequests)
	s.buildKey, s.buildText = s.Build.Key(), s.Build.String()
}

// Serve serves on ln, a listening socket another made (systemd hands one
// over with socket activation), in the background until Close or
// Shutdown, instead of Listen. The socket file and its directory are its
// maker's: Serve checks neither, takes no lock, and Shutdown closes ln but
// leaves the file. Each peer's uid is checked as with Listen.
func (s *Server) Serve(ln *net.UnixListener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := ""
	if a, ok := ln.Addr().(*net.UnixAddr); ok {
		path = a.Name
	}
	switch {
	case s.closing:
		return fmt.Errorf("serve %s: %w", path, query.ErrClosed)
	case s.listened:
		return fmt.Errorf("serve %s: already listening on %s", path, s.path)
	}
	s.setup()
	ln.SetUnlinkOnClose(false)
	s.listened, s.path, s.ln, s.handed = true, path, ln, true
	s.wg.Add(1)
	go s.acceptLoop(ln)
	return nil
}

// Path returns the socket path the server listens on, or "" before Listen.
func (s *Server) Path() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path
}

// Shutdown stops the server: it stops accepting, removes the socket file
// and releases its lock, cancels every handler context, answers requests
// still being read with query.CodeShuttingDown, and waits until every connection
// has written its last response and closed. If ctx ends first, the
// remaining connections are closed at once and Shutdown returns ctx's
// error; Close then waits for the handlers still running.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.beginShutdown()
	select {
	case <-s.stopped:
		return err
	case <-ctx.Done():
		s.closeConns()
		return fmt.Errorf("shut down server %s: %w", s.Path(), ctx.Err())
	}
}

// Close stops the server like Shutdown, without waiting for connections to
// finish writing: it closes them at once, then waits for every goroutine of
// the server to return. It is safe to call more than once.
func (s *Server) Close() error {
	err := s.beginShutdown()
	s.closeConns()
	<-s.stopped
	return err
}

// beginShutdown runs once: it marks the server closing, closes the listener,
// removes the socket, cancels handler contexts and wakes every reader.
func (s *Server) beginShutdown() error {
	s.shutdownOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		ln, lock, path, handed := s.ln, s.lock, s.path, s.handed
		conns := make([]*conn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()

		s.cancel()
		if ln != nil {
			var errs []error
			if err := ln.Close(); err != nil {
				errs = append(errs, err)
			}
			if !handed {
				if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				if err := lock.Close(); err != nil {
					errs = append(errs, err)
				}
			}
			if err := errors.Join(errs...); err != nil {
				s.shutdownErr = fmt.Errorf("close server %s: %w", path, err)
			}
		}
		for _, c := range conns {
			c.stopReading()
		}
		go func() {
			s.wg.Wait()
			close(s.stopped)
		}()
	})
	return s.shutdownErr
}

func (s *Server) closeConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.nc.Close()
	}
}

// acceptLoop accepts connections until the listener closes. A failing
// Accept (out of file descriptors, say) is retried with a growing pause.
func (s *Server) acceptLoop(ln *net.UnixListener) {
	defer s.wg.Done()
	var pause time.Duration
	for {
		nc, err := ln.AcceptUnix()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed", "socket", s.path, "err", err, "retry_in", pause)
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
				return
			}
			continue
		}
		pause = 0
		pid, ok := s.screen(nc)
		if !ok {
			nc.Close()
			continue
		}
		c := s.track(nc, pid)
		if c == nil {
			s.load.leave(pid)
			nc.Close()
			return
		}
		go c.serve()
	}
}

// track registers a new connection, or returns nil when the server is
// closing.
func (s *Server) track(nc *net.UnixConn, pid int) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil
	}
	c := newConn(s, nc)
	c.pid = pid
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	if s.activity != nil {
		s.activity(len(s.conns))
	}
	return c
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if s.activity != nil {
		s.activity(len(s.conns))
	}
}

// refuse logs a refusal of the given kind, at most once per refusalEvery
// with the number since the last one logged: a flood of them does not
// flood the log.
func (s *Server) refuse(kind string, e *query.Error) {
	if log, n := s.refused.note(kind, time.Now()); log {
		s.log.Warn("refused: "+kind, "socket", s.path, "reason", e.Message, "refusals", n)
	}
}

// removeStale removes a socket at path that no server answers on. It
// refuses to remove anything that is not a socket, and reports ErrInUse
// when a server answers.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket; not removing it", path)
	}
	nc, err := net.DialTimeout("unix", path, probeTimeout)
	switch {
	case err == nil:
		nc.Close()
		return fmt.Errorf("a server answers on %s: %w", path, ErrInUse)
	case refused(err):
		return os.Remove(path)
	case sockos.QueueFull(err):
		return fmt.Errorf("a server is listening on %s (its queue is full): %w", path, ErrInUse)
	}
	return fmt.Errorf("probe %s: %w", path, err)
}
