package server

import (
	"bufio"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"os"
	"reflect"
	"runtime/debug"
	"sync"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/lines"
	"github.com/amplidex/amplidex/query/internal/sockos"
)

// conn is one accepted connection of a Server.
type conn struct {
	srv *Server
	nc  *net.UnixConn
	// pid is the peer's process, 0 when not known.
	pid int

	// ctx is the context of every call on this connection: it ends when
	// the server shuts down or the connection breaks. streamCtx, its child,
	// also ends when the peer stops sending (end of input), which ends
	// subscriptions while plain calls already read are still answered.
	ctx          context.Context
	cancel       context.CancelFunc
	streamCtx    context.Context
	streamCancel context.CancelFunc

	wg sync.WaitGroup // requests being answered and streams running

	wmu sync.Mutex // guards fields below
	// bw is the writer of the answer being written, taken from the
	// server's writers for that write and given back once it is flushed:
	// a connection that waits holds no write buffer.
	bw     *bufio.Writer
	broken bool
}

func newConn(s *Server, nc *net.UnixConn) *conn {
	ctx, cancel := context.WithCancel(s.ctx)
	streamCtx, streamCancel := context.WithCancel(ctx)
	c := &conn{
		srv:          s,
		nc:           nc,
		ctx:          ctx,
		cancel:       cancel,
		streamCtx:    streamCtx,
		streamCancel: streamCancel,
	}
	return c
}

// writer returns the connection's writer, taking one for this write when
// it has none; c.wmu is held.
func (c *conn) writer() *bufio.Writer {
	if c.bw == nil {
		c.bw = c.srv.writers.Get().(*bufio.Writer)
		c.bw.Reset(deadlineWriter{nc: c.nc, timeout: c.srv.writeTimeout})
	}
	return c.bw
}

// deadlineWriter writes to a connection, giving each write its own
// deadline: a long answer may take as long as it needs while the peer
// keeps reading.
type deadlineWriter struct {
	nc      *net.UnixConn
	timeout time.Duration
}

func (w deadlineWriter) Write(p []byte) (int, error) {
	w.nc.SetWriteDeadline(time.Now().Add(w.timeout))
	return w.nc.Write(p)
}

// stopReading wakes the reader, which then answers what it has buffered and
// stops.
func (c *conn) stopReading() {
	c.nc.SetReadDeadline(time.Unix(1, 0))
}

// serve reads requests until the peer stops sending, the connection breaks
// or the server shuts down, then waits for its requests and streams. A
// peer that hung up has its calls cancelled: nobody reads their answers.
func (c *conn) serve() {
	defer c.srv.wg.Done()
	// The connection's place is given back last: once it is forgotten
	// and its descriptor closed, so that what is open never exceeds the
	// bound.
	defer c.srv.load.leave(c.pid)
	defer c.srv.forget(c)
	defer c.nc.Close()
	defer c.cancel()

	lr := &lines.Reader{R: bufio.NewReaderSize(c.nc, readBufferSize), Max: query.MaxLineSize, Budget: c.srv.budget}
	slots := make(chan struct{}, maxInFlight)
	var stopped error // why reading stopped
	for lineNo := 1; ; lineNo++ {
		line, held, err := lr.Next()
		if errors.Is(err, query.ErrLineTooLong) {
			c.writeResponse(lines.HeadID(lr.Head()), nil, query.Errorf(query.CodeInvalidRequest, "line %d: request longer than %d bytes", lineNo, query.MaxLineSize), c.srv.clock())
			continue
		}
		if errors.Is(err, lines.ErrOverBudget) {
			e := query.Errorf(query.CodeOverloaded, "line %d: the server already holds nearly %d bytes of requests, its limit; try again later", lineNo, c.srv.budget.Limit)
			c.srv.refuse("the request budget is spent", e)
			c.writeResponse(lines.HeadID(lr.Head()), nil, e, c.srv.clock())
			continue
		}
		if err != nil {
			stopped = err // the end of input, a broken connection or shutdown
			break
		}
		if len(line) == 0 {
			continue
		}
		req, err := query.DecodeRequest(line)
		if err != nil {
			c.srv.budget.Release(held)
			var e *query.Error
			if !errors.As(err, &e) {
				e = query.Errorf(query.CodeInvalidRequest, "%v", err)
			}
			c.writeResponse(req.ID, nil, query.Errorf(e.Code, "line %d: %s", lineNo, e.Message), c.srv.clock())
			continue
		}
		if req.Build != "" && req.Build != c.srv.buildKey {
			c.srv.budget.Release(held)
			c.writeResponse(req.ID, nil, query.Errorf(query.CodeOtherBuild, "the server is of another build: %s", c.srv.buildText), c.srv.clock())
			continue
		}
		if e := c.srv.load.take(c.pid); e != nil {
			c.srv.budget.Release(held)
			c.srv.refuse("too many requests", e)
			c.writeResponse(req.ID, nil, e, c.srv.clock())
			continue
		}
		if !c.acquire(slots) {
			c.srv.load.give(c.pid)
			c.srv.budget.Release(held)
			c.writeResponse(req.ID, nil, c.failure(c.ctx.Err()), c.srv.clock())
			continue
		}
		c.wg.Add(1)
		go c.handle(req, held, slots)
	}
	done := make(chan struct{})
	var watch sync.WaitGroup
	switch {
	case c.srv.ctx.Err() != nil || errors.Is(stopped, os.ErrDeadlineExceeded):
		// Shutdown: what was read is answered, or cancelled with the
		// server's context.
	case !errors.Is(stopped, io.EOF) || sockos.PeerGone(c.nc):
		c.cancel() // hung up, or the connection broke
	default:
		// The peer stopped sending and may still read: its calls go
		// on until it hangs up.
		watch.Go(func() { c.watchHangup(done) })
	}
	c.streamCancel()
	c.wg.Wait()
	close(done)
	watch.Wait()
}

// hangupPoll is how often a connection whose peer stopped sending is
// looked at, while its calls run, to tell whether the peer hung up.
const hangupPoll = 50 * time.Millisecond

// watchHangup cancels the connection's calls once its peer hangs up, and
// returns then or once done is closed.
func (c *conn) watchHangup(done <-chan struct{}) {
	t := time.NewTicker(hangupPoll)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-c.ctx.Done():
			return
		case <-t.C:
			if sockos.PeerGone(c.nc) {
				c.cancel()
				return
			}
		}
	}
}

// acquire takes one of the connection's request slots, waiting while all
// are taken. It fails once the connection's context has ended.
func (c *conn) acquire(slots chan struct{}) bool {
	if c.ctx.Err() != nil {
		return false
	}
	select {
	case slots <- struct{}{}:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// screen decides, as a connection is accepted, whether it is served: its
// peer must be of the server's uid, and the server and the peer's process
// must have room for one more connection (see Server.MaxConns). A
// connection refused is answered with one error line (forbidden, or
// overloaded) and is the caller's to close. Being done before the next
// Accept, the refusal holds no descriptor beyond this one: a flood of
// connections waits in the kernel's queue, not in the server.
func (s *Server) screen(nc *net.UnixConn) (pid int, ok bool) {
	refuse := func(e *query.Error) {
		nc.SetWriteDeadline(time.Now().Add(time.Second))
		nc.Write(appendResponse(nil, nil, nil, e, query.Clock{}))
	}
	uid, err := s.trust.PeerUID(nc)
	if err != nil || uid != s.trust.Euid {
		msg := fmt.Sprintf("peer uid %d is not the server's uid %d", uid, s.trust.Euid)
		if err != nil {
			msg = fmt.Sprintf("cannot read the peer's credentials: %v", err)
		}
		s.log.Warn("connection refused", "socket", s.path, "reason", msg)
		refuse(query.Errorf(query.CodeForbidden, "%s", msg))
		return 0, false
	}
	pid = s.trust.PeerPID(nc)
	if e := s.load.admit(pid); e != nil {
		s.refuse("too many connections", e)
		refuse(e)
		return 0, false
	}
	return pid, true
}

// handle answers one request and, when it opens a subscription, runs it.
// held is what the request's line took from the server's budget; it is
// given back once the request is answered.
func (c *conn) handle(req query.Request, held int64, slots chan struct{}) {
	defer c.wg.Done()
	done := false
	release := func() {
		if !done {
			done = true
			c.srv.budget.Release(held)
			c.srv.load.give(c.pid)
			<-slots
		}
	}
	defer release()

	res, err := c.call(req)
	clk := c.srv.clock()
	if a, ok := res.(*query.Answer); ok {
		res, clk = a.Result, a.Clock
	}
	if err != nil {
		c.writeResponse(req.ID, nil, c.failure(err), clk)
		return
	}
	st, isStream := res.(*query.Stream)
	if isStream {
		res = st.Result
	}
	if !c.writeResult(req, res, clk) || !isStream {
		if isStream && st.Abandon != nil {
			st.Abandon()
		}
		return
	}
	release()
	c.stream(req, st)
}

// call runs the handler, turning a panic into an internal error.
func (c *conn) call(req query.Request) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.srv.log.Error("handler panicked", "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, query.Errorf(query.CodeInternal, "%s: the handler failed", req.Method)
		}
	}()
	return c.srv.handler.ServeQuery(c.ctx, req.Method, req.Params)
}

// stream runs a subscription until its Run returns, then sends the end
// notification.
func (c *conn) stream(req query.Request, st *query.Stream) {
	var mu sync.Mutex // guards ended
	ended := false
	send := func(params any) error {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return fmt.Errorf("send on %s: %w", req.Method, query.ErrClosed)
		}
		if err := c.streamCtx.Err(); err != nil {
			return fmt.Errorf("send on %s: %w", req.Method, err)
		}
		data, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("send on %s: encode params: %w", req.Method, err)
		}
		line, err := json.Marshal(query.Notification{Method: req.Method, Subscription: req.ID, Params: data, Clock: c.srv.clock()})
		if err != nil {
			return fmt.Errorf("send on %s: encode notification: %w", req.Method, err)
		}
		if len(line) > query.MaxLineSize {
			return fmt.Errorf("send on %s: notification of %d bytes: %w", req.Method, len(line), query.ErrLineTooLong)
		}
		if !c.writeLine(append(line, '\n')) {
			return fmt.Errorf("send on %s: %w", req.Method, net.ErrClosed)
		}
		return nil
	}

	var err error
	if st.Run != nil {
		err = c.run(req, st, send)
	}
	mu.Lock()
	ended = true
	mu.Unlock()

	end := query.Notification{Method: req.Method, Subscription: req.ID, End: true, Clock: c.srv.clock()}
	switch {
	case c.srv.ctx.Err() != nil:
		end.Error = query.Errorf(query.CodeShuttingDown, "the server is shutting down")
	case err != nil && !(c.streamCtx.Err() != nil && errors.Is(err, context.Canceled)):
		end.Error = c.failure(err)
	}
	c.writeJSON(end)
}

// run calls a stream's Run, turning a panic into an internal error.
func (c *conn) run(req query.Request, st *query.Stream, send func(any) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.srv.log.Error("stream panicked", "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			err = query.Errorf(query.CodeInternal, "%s: the stream failed", req.Method)
		}
	}()
	return st.Run(c.streamCtx, send)
}

// failure turns a handler's error into the error sent to the client.
func (c *conn) failure(err error) *query.Error {
	var e *query.Error
	switch {
	case errors.As(err, &e):
		return e
	case c.srv.ctx.Err() != nil:
		return query.Errorf(query.CodeShuttingDown, "the server is shutting down")
	}
	return query.Errorf(query.CodeInternal, "%v", err)
}

// writeResponse writes one response line and reports whether it was sent.
func (c *conn) writeResponse(id, result json.RawMessage, e *query.Error, clk query.Clock) bool {
	return c.writeLine(appendResponse(nil, id, result, e, clk))
}

// writeResult writes the answer to req and reports whether it was sent. A
// list (see elements) is encoded one element at a time straight into the
// connection's writer, and a query.Object one field at a time; anything else
// is marshalled whole (see writeWhole).
//
// An element that fails to encode ends the array early; the response then
// carries an internal error beside the partial result, and the error is
// what the client reports.
func (c *conn) writeResult(req query.Request, res any, clk query.Clock) bool {
	obj, isObject := res.(query.Object)
	items, isList := elements(res)
	if !isObject && !isList {
		return c.writeWhole(req, res, clk)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.broken {
		return false
	}
	c.writer().Write(responseHead(req.ID, clk))
	var encErr error
	if isObject {
		encErr = c.writeObject(req, obj)
	} else {
		c.bw.WriteByte('[')
		encErr = c.writeElements(req, items)
		c.bw.WriteByte(']')
	}
	if encErr != nil {
		msg, _ := json.Marshal(query.Errorf(query.CodeInternal, "%v", encErr)) // two strings: Marshal cannot fail
		c.bw.WriteString(`,"error":`)
		c.bw.Write(msg)
	}
	c.bw.WriteString("}\n")
	return c.flushLocked()
}

// responseHead is the start of a response line up to its result's value.
func responseHead(id json.RawMessage, clk query.Clock) []byte {
	head := appendRaw([]byte(`{"id":`), id)
	if !clk.IsZero() {
		head = append(head, `,"clock":"`...)
		head, _ = clk.AppendText(head) // appending to a slice cannot fail
		head = append(head, '"')
	}
	return append(head, `,"result":`...)
}

// writeWhole marshals res and writes it as the answer to req. It takes
// its connection's turn to write first, so that a connection holds one
// marshalled answer at a time, however many wait; an answer larger than
// the write buffer then takes its bytes from the server's AnswerBudget
// until it is written, and is replaced by a query.CodeOverloaded error when the
// budget cannot hold it.
func (c *conn) writeWhole(req query.Request, res any, clk query.Clock) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.broken {
		return false
	}
	c.writer()
	data, err := json.Marshal(res)
	if err != nil {
		c.bw.Write(appendResponse(nil, req.ID, nil, query.Errorf(query.CodeInternal, "%s: encode result: %v", req.Method, err), clk))
		return c.flushLocked()
	}
	if n := int64(len(data)); n > writeBufferSize {
		if !c.srv.answers.ReserveAlone(n) {
			data = nil
			e := query.Errorf(query.CodeOverloaded,
				"%s: the server already holds nearly %d bytes of answers that are not read yet, its limit; try again later",
				req.Method, c.srv.answers.Limit)
			c.srv.refuse("the answer budget is spent", e)
			c.bw.Write(appendResponse(nil, req.ID, nil, e, clk))
			return c.flushLocked()
		}
		defer c.srv.answers.Release(n)
	}
	c.bw.Write(responseHead(req.ID, clk))
	c.bw.Write(data)
	c.bw.WriteString("}\n")
	return c.flushLocked()
}

// writeObject encodes obj into the connection's writer as a JSON object,
// a field at a time, a list field one element at a time (see
// writeElements); c.wmu is held. The object is closed whatever fails, and
// the failure is returned as writeElements returns it.
func (c *conn) writeObject(req query.Request, obj query.Object) (err error) {
	c.bw.WriteByte('{')
	defer c.bw.WriteByte('}')
	defer func() {
		if p := recover(); p != nil {
			c.srv.log.Error("result encoding panicked", "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("%s: the result failed", req.Method)
		}
	}()
	n := 0
	for name, v := range obj.JSONFields() {
		if n > 0 {
			c.bw.WriteByte(',')
		}
		n++
		key, _ := json.Marshal(name) // a string: Marshal cannot fail
		c.bw.Write(key)
		c.bw.WriteByte(':')
		if items, ok := elements(v); ok {
			c.bw.WriteByte('[')
			err := c.writeElements(req, items)
			c.bw.WriteByte(']')
			if err != nil {
				return fmt.Errorf("field %s: %w", name, err)
			}
			continue
		}
		data, err := json.Marshal(v)
		if err != nil {
			c.bw.WriteString("null")
			return fmt.Errorf("%s: encode result field %s: %v", req.Method, name, err)
		}
		c.bw.Write(data)
	}
	return nil
}

// writeElements encodes items into the connection's writer, separated by
// commas; c.wmu is held. It stops at the first element that fails to
// encode, or when the producer panics, and says why; a failed write stops
// it too, and the writer keeps that error for the flush.
func (c *conn) writeElements(req query.Request, items iter.Seq[any]) (err error) {
	n := 0
	defer func() {
		if p := recover(); p != nil {
			c.srv.log.Error("result encoding panicked", "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("%s: the result failed at element %d", req.Method, n)
		}
	}()
	for item := range items {
		data, err := json.Marshal(item)
		if err != nil {
			return fmt.Errorf("%s: encode result element %d: %v", req.Method, n, err)
		}
		if n > 0 {
			c.bw.WriteByte(',')
		}
		if _, err := c.bw.Write(data); err != nil {
			return nil
		}
		n++
	}
	return nil
}

// elements returns the elements of res when it is written as a list: an
// iter.Seq[any], or a slice that does not marshal itself (a []byte is a
// base64 string, not a list).
func elements(res any) (iter.Seq[any], bool) {
	switch res := res.(type) {
	case iter.Seq[any]:
		return res, res != nil
	case func(func(any) bool):
		return res, res != nil
	case json.Marshaler, encoding.TextMarshaler:
		return nil, false
	}
	v := reflect.ValueOf(res)
	if v.Kind() != reflect.Slice || v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8 {
		return nil, false
	}
	return func(yield func(any) bool) {
		for i := range v.Len() {
			// By address, as json.Marshal encodes the elements of a slice:
			// a MarshalJSON with a pointer receiver applies.
			if !yield(v.Index(i).Addr().Interface()) {
				return
			}
		}
	}, true
}

func (c *conn) writeJSON(v any) bool {
	data, err := json.Marshal(v)
	if err != nil {
		c.srv.log.Error("encode message", "err", err)
		return false
	}
	return c.writeLine(append(data, '\n'))
}

// writeLine writes line whole. A write that fails or times out breaks the
// connection: it is closed, and the calls on it are cancelled.
func (c *conn) writeLine(line []byte) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.broken {
		return false
	}
	c.writer().Write(line)
	return c.flushLocked()
}

// flushLocked sends what the writer holds, and gives the writer back;
// c.wmu is held.
func (c *conn) flushLocked() bool {
	err := c.bw.Flush()
	c.bw.Reset(io.Discard)
	c.srv.writers.Put(c.bw)
	c.bw = nil
	if err != nil {
		c.broken = true
		c.cancel()
		c.nc.Close()
		c.srv.log.Debug("connection broken", "socket", c.srv.path, "err", err)
		return false
	}
	return true
}

// appendResponse appends the JSON line of a response to b. id and result
// are valid JSON (or empty for null); the error is marshalled.
func appendResponse(b []byte, id, result json.RawMessage, e *query.Error, clk query.Clock) []byte {
	b = append(b, `{"id":`...)
	b = appendRaw(b, id)
	if e != nil {
		msg, _ := json.Marshal(e) // an Error holds two strings: Marshal cannot fail
		b = append(b, `,"error":`...)
		b = append(b, msg...)
	} else {
		b = append(b, `,"result":`...)
		b = appendRaw(b, result)
	}
	if !clk.IsZero() {
		b = append(b, `,"clock":"`...)
		b, _ = clk.AppendText(b) // appending to a slice cannot fail
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

func appendRaw(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, raw...)
}
