package query

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/amplidex/amplidex/query/internal/lines"
	"github.com/amplidex/amplidex/query/internal/sockos"
	"github.com/amplidex/amplidex/query/internal/trust"
)

// ErrNoDaemon is returned when no daemon can be reached on the socket: the
// socket is missing, refuses connections, or the connection to the daemon
// was lost. The command line answers it with exit code 3, or falls back to
// working without a daemon.
var ErrNoDaemon = errors.New("query: no daemon answers")

// ErrClosed is returned when a Client or a Server (package query/server)
// is used after Close.
var ErrClosed = errors.New("query: closed")

const (
	// dialTimeout bounds a connection attempt.
	dialTimeout = time.Second
	// queueFullWait bounds how long a dial tries again while the server's
	// queue of connections is full.
	queueFullWait = 10 * time.Second
	// outboxSize is how many request lines may wait for the writer.
	outboxSize = 64
	// subscriptionBuffer is how many notifications wait for a slow reader
	// before the client stops reading the subscription's connection.
	subscriptionBuffer = 64
)

// Client talks to a server (package query/server). It is safe for concurrent use: calls share one
// connection and are matched to their answers by id. A Client whose
// connection ended keeps failing with the reason; Dial again to reconnect.
type Client struct {
	// path is the socket, as found by Dial.
	path string
	// trust checks the socket's directory and the server of each
	// connection.
	trust trust.User
	// maxResponse is the longest response line read (MaxResponseSize).
	maxResponse int
	nc          *net.UnixConn
	outbox      chan []byte
	// dead is closed when the shared connection has ended, for any reason;
	// err (below) says why.
	dead chan struct{}
	// closed is closed by Close.
	closed chan struct{}

	wg sync.WaitGroup // the reader, the writer and every subscription

	mu       sync.Mutex // guards fields below
	nextID   uint64
	pending  map[uint64]chan reply
	err      error
	writeErr error
	isClosed bool
	subs     map[*net.UnixConn]struct{}
	// build is the Key of the build every request names (RequireBuild),
	// "" for none.
	build string
}

// reply is what a waiting call receives: the line of its response, which
// the call decodes itself, or the error that ended the connection.
type reply struct {
	line []byte
	err  error
}

// inbound is any line a server sends: a response or a notification.
type inbound struct {
	ID           json.RawMessage `json:"id"`
	Result       json.RawMessage `json:"result"`
	Error        *Error          `json:"error"`
	Clock        Clock           `json:"clock"`
	Method       string          `json:"method"`
	Subscription json.RawMessage `json:"subscription"`
	Params       json.RawMessage `json:"params"`
	End          bool            `json:"end"`
}

// Dial connects to the server on socketPath, giving up after a second or
// when ctx ends. When nothing answers there it returns an error wrapping
// ErrNoDaemon.
//
// Dial trusts only what is the user's. The socket's directory must belong
// to the effective uid and be closed to others (mode 0700), or Dial fails
// with ErrUnsafeDir; the process answering must run as the effective uid,
// or Dial fails with ErrUntrustedServer. A socket in the fallback directory
// of DefaultPaths is looked for where the server's Listen puts it (see the
// package Caveats).
func Dial(ctx context.Context, socketPath string) (*Client, error) {
	return dialWith(ctx, socketPath, trust.System(), MaxResponseSize)
}

func dialWith(ctx context.Context, socketPath string, t trust.User, maxResponse int) (*Client, error) {
	path, err := checkedPath(socketPath, t)
	if err != nil {
		return nil, err
	}
	c := &Client{
		path:        path,
		trust:       t,
		maxResponse: maxResponse,
		outbox:      make(chan []byte, outboxSize),
		dead:        make(chan struct{}),
		closed:      make(chan struct{}),
		pending:     make(map[uint64]chan reply),
		subs:        make(map[*net.UnixConn]struct{}),
	}
	c.nc, err = c.dial(ctx)
	if err != nil {
		return nil, err
	}
	c.wg.Add(2)
	go c.readLoop()
	go c.writeLoop()
	return c, nil
}

// checkedPath returns where the socket named socketPath is, once its
// directory has passed t's checks (see Dial).
func checkedPath(socketPath string, t trust.User) (string, error) {
	if len(socketPath) > sockos.MaxPath {
		return "", fmt.Errorf("dial %s: socket path is %d bytes, longer than the %d a unix socket allows: %w", socketPath, len(socketPath), sockos.MaxPath, ErrNoDaemon)
	}
	return dialPath(t, socketPath)
}

// dial opens a connection to the client's socket and checks who answers.
func (c *Client) dial(ctx context.Context) (*net.UnixConn, error) {
	return dialChecked(ctx, c.path, c.trust)
}

// dialChecked opens a connection to the socket at path, a checkedPath,
// and checks with t who answers.
func dialChecked(ctx context.Context, path string, t trust.User) (*net.UnixConn, error) {
	if len(path) > sockos.MaxPath {
		return nil, fmt.Errorf("dial %s: socket path is %d bytes, longer than the %d a unix socket allows: %w", path, len(path), sockos.MaxPath, ErrNoDaemon)
	}
	d := net.Dialer{Timeout: dialTimeout}
	nc, err := d.DialContext(ctx, "unix", path)
	// A full queue is a server that has yet to accept the connections of
	// others (a flood of them, say): busy, not gone. Try again, often
	// enough to get a place among those who also try, for a while.
	busy := time.Now().Add(queueFullWait)
	for pause := 500 * time.Microsecond; err != nil && sockos.QueueFull(err) && ctx.Err() == nil && time.Now().Before(busy); pause = min(2*pause, 5*time.Millisecond) {
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		nc, err = d.DialContext(ctx, "unix", path)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("dial %s: %w", path, ctx.Err())
		}
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		return nil, fmt.Errorf("dial %s: %w: %w", path, ErrNoDaemon, err)
	}
	unc := nc.(*net.UnixConn)
	if err := checkServer(t, unc, path); err != nil {
		unc.Close()
		return nil, err
	}
	return unc, nil
}

// RequireBuild makes every request sent from now on name b
// (Request.Build), so that a server of another build refuses it with
// CodeOtherBuild rather than answering it: a command that asks one
// question learns of a daemon of another build from the answer, without
// asking "version" first. The zero Build names none again. A server older
// than Request.Build refuses such a request with CodeInvalidRequest.
func (c *Client) RequireBuild(b Build) {
	key := ""
	if b != (Build{}) {
		key = b.Key()
	}
	c.mu.Lock()
	c.build = key
	c.mu.Unlock()
}

// Call sends method with params (marshalled to JSON; nil sends none) and
// waits for the answer, which it unmarshals into result unless result is
// nil. It returns the clock of the answer. An error response is returned as
// an *Error; a lost connection as an error wrapping ErrNoDaemon. Call
// returns when ctx ends, whether or not the server answers: give it a
// deadline.
func (c *Client) Call(ctx context.Context, method string, params, result any) (Clock, error) {
	id, ch, line, err := c.start(method, params)
	if err != nil {
		return Clock{}, err
	}
	select {
	case c.outbox <- line:
	case <-c.dead:
		// ch receives the reason below.
	case <-ctx.Done():
		c.forget(id)
		return Clock{}, fmt.Errorf("call %s: %w", method, ctx.Err())
	}
	var r reply
	select {
	case r = <-ch:
	case <-ctx.Done():
		c.forget(id)
		return Clock{}, fmt.Errorf("call %s: %w", method, ctx.Err())
	}
	if r.err != nil {
		return Clock{}, fmt.Errorf("call %s: %w", method, r.err)
	}
	return decodeResponse(r.line, method, result)
}

// decodeResponse decodes a response line, the result straight into result
// (in one pass over the line: a large answer is not copied first).
func decodeResponse(line []byte, method string, result any) (Clock, error) {
	type status struct {
		Error *Error `json:"error"`
		Clock Clock  `json:"clock"`
	}
	var resp struct {
		// Result holds the caller's pointer, which json fills.
		Result any `json:"result"`
		status
	}
	if fill := valueTarget(result); fill != nil {
		return decodeValueResponse(line, method, fill)
	}
	var err error
	if rv := reflect.ValueOf(result); result == nil || rv.Kind() != reflect.Pointer || rv.IsNil() {
		err = json.Unmarshal(line, &resp.status) // the result is skipped
		if err == nil && result != nil {
			err = &json.InvalidUnmarshalError{Type: reflect.TypeOf(result)}
		}
	} else {
		resp.Result = result
		err = json.Unmarshal(line, &resp)
	}
	if resp.Error != nil {
		return resp.Clock, resp.Error
	}
	if err != nil {
		return resp.Clock, fmt.Errorf("call %s: decode result: %w", method, err)
	}
	return resp.Clock, nil
}

// start registers a new call and encodes its request line.
func (c *Client) start(method string, params any) (uint64, chan reply, []byte, error) {
	raw, err := encodeParams(params)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("call %s: %w", method, err)
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return 0, nil, nil, fmt.Errorf("call %s: %w", method, err)
	}
	c.nextID++
	id := c.nextID
	ch := make(chan reply, 1)
	c.pending[id] = ch
	build := c.build
	c.mu.Unlock()

	line, err := encodeRequest(strconv.AppendUint(nil, id, 10), method, raw, build)
	if err != nil {
		c.forget(id)
		return 0, nil, nil, fmt.Errorf("call %s: %w", method, err)
	}
	return id, ch, line, nil
}

func (c *Client) forget(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, id)
}

func encodeParams(params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	if a, ok := params.(paramsAppender); ok {
		return a.appendJSON(nil), nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	return raw, nil
}

// encodeRequest returns the request line, newline included: the JSON
// json.Marshal makes of the Request, written without reflection (a
// command that asks one question would build json's encoder of Request
// for that one line). id and params are JSON already.
func encodeRequest(id []byte, method string, params json.RawMessage, build string) ([]byte, error) {
	line := make([]byte, 0, len(`{"id":,"method":"","params":,"build":""}`)+len(id)+len(method)+len(params)+len(build)+1)
	line = append(append(line, `{"id":`...), id...)
	line = appendJSONString(append(line, `,"method":`...), method)
	if len(params) > 0 {
		line = append(append(line, `,"params":`...), params...)
	}
	if build != "" {
		line = appendJSONString(append(line, `,"build":`...), build)
	}
	line = append(line, '}')
	if len(line) > MaxLineSize {
		return nil, fmt.Errorf("request of %d bytes: %w", len(line), ErrLineTooLong)
	}
	return append(line, '\n'), nil
}

// appendJSONString appends s as a JSON string, as json.Marshal writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // escapes, and invalid UTF-8: json's way
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// readLoop hands every response to the call waiting for it.
func (c *Client) readLoop() {
	defer c.wg.Done()
	lr := &lines.Reader{R: bufio.NewReaderSize(c.nc, 64<<10), Max: c.maxResponse}
	for {
		line, _, err := lr.Next()
		if errors.Is(err, ErrLineTooLong) {
			// Discarded whole; the call it answers fails alone.
			err := fmt.Errorf("answer from %s longer than %d bytes: %w", c.path, c.maxResponse, ErrResponseTooLarge)
			id, perr := strconv.ParseUint(string(lines.HeadID(lr.Head())), 10, 64)
			if perr != nil {
				c.fail(err)
				return
			}
			c.deliver(id, reply{err: err})
			continue
		}
		if err != nil {
			c.fail(c.lost(err))
			return
		}
		if len(line) == 0 {
			continue
		}
		// The server writes the id first: read it alone, and leave the
		// rest of the line to the call. Any other line is decoded whole.
		rawID := lines.HeadID(line[:min(len(line), lines.HeadSize)])
		if rawID == nil {
			var msg inbound
			if err := json.Unmarshal(line, &msg); err != nil {
				c.fail(fmt.Errorf("decode answer from %s: %w", c.path, err))
				return
			}
			// An error without an id (forbidden, say) is about the whole
			// connection.
			if msg.Method == "" && msg.Error != nil && !lines.ValidID(msg.ID) {
				c.fail(msg.Error)
				return
			}
			rawID = msg.ID
		}
		id, err := strconv.ParseUint(string(rawID), 10, 64)
		if err != nil {
			continue // not an answer to a call of ours
		}
		if !lr.Owned() {
			line = bytes.Clone(line)
		}
		c.deliver(id, reply{line: line})
	}
}

// deliver hands r to the call with the given id, if it still waits.
func (c *Client) deliver(id uint64, r reply) {
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// writeLoop writes queued request lines, several at a time when they queue
// up.
func (c *Client) writeLoop() {
	defer c.wg.Done()
	w := bufio.NewWriterSize(c.nc, 64<<10)
	for {
		select {
		case line := <-c.outbox:
			w.Write(line)
			for more := true; more; {
				select {
				case line := <-c.outbox:
					w.Write(line)
				default:
					more = false
				}
			}
			if err := w.Flush(); err != nil {
				// The reader reports why the connection ended: the server
				// may have said so (a forbidden answer, say) before
				// closing. The deadline makes sure it does so soon.
				c.mu.Lock()
				c.writeErr = err
				c.mu.Unlock()
				c.nc.SetReadDeadline(time.Now().Add(time.Second))
				return
			}
		case <-c.dead:
			return
		}
	}
}

// lost describes a connection that ended under the client.
func (c *Client) lost(err error) error {
	if c.isClosing() {
		return ErrClosed
	}
	c.mu.Lock()
	if c.writeErr != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = c.writeErr
	}
	c.mu.Unlock()
	return fmt.Errorf("connection to %s lost: %w: %w", c.path, ErrNoDaemon, err)
}

// fail ends the shared connection with err, once, and hands err to every
// waiting call.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()

	close(c.dead)
	c.nc.Close()
	for _, ch := range pending {
		ch <- reply{err: err}
	}
}

// Subscribe opens a subscription to method on a connection of its own and
// returns the channel its notifications arrive on. An error response to the
// subscribing request is returned as an *Error.
//
// The channel is closed when the server ends the subscription, ctx ends, or
// the Client is closed. When the subscription ended in failure (the stream
// failed, the server shut down, the connection was lost), the last value
// before the close has End set and Error saying why.
func (c *Client) Subscribe(ctx context.Context, method string, params any) (<-chan Notification, error) {
	raw, err := encodeParams(params)
	if err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", method, err)
	}
	c.mu.Lock()
	build := c.build
	c.mu.Unlock()
	line, err := encodeRequest([]byte("1"), method, raw, build)
	if err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", method, err)
	}
	nc, err := c.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", method, err)
	}
	if !c.addSub(nc) {
		nc.Close()
		return nil, fmt.Errorf("subscribe %s: %w", method, ErrClosed)
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	r := bufio.NewReaderSize(nc, 64<<10)
	if err := c.open(nc, r, line); err != nil {
		stop()
		nc.Close()
		c.dropSub(nc)
		c.wg.Done()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("subscribe %s: %w", method, err)
	}
	ch := make(chan Notification, subscriptionBuffer)
	go c.relay(ctx, stop, nc, r, method, ch)
	return ch, nil
}

// open sends the subscribing request and reads its answer.
func (c *Client) open(nc *net.UnixConn, r *bufio.Reader, request []byte) error {
	if _, err := nc.Write(request); err != nil {
		// Read what the server said before it closed (a forbidden
		// answer, say), if anything.
		nc.SetReadDeadline(time.Now().Add(time.Second))
	}
	lr := &lines.Reader{R: r, Max: c.maxResponse}
	for {
		line, _, err := lr.Next()
		if errors.Is(err, ErrLineTooLong) {
			return fmt.Errorf("answer from %s longer than %d bytes: %w", c.path, c.maxResponse, ErrResponseTooLarge)
		}
		if err != nil {
			return c.lost(err)
		}
		if len(line) == 0 {
			continue
		}
		var msg inbound
		if err := json.Unmarshal(line, &msg); err != nil {
			return fmt.Errorf("decode answer from %s: %w", c.path, err)
		}
		if msg.Error != nil {
			return msg.Error
		}
		if string(msg.ID) == "1" {
			nc.SetReadDeadline(time.Time{})
			return nil
		}
	}
}

// relay passes a subscription's notifications to ch until it ends.
func (c *Client) relay(ctx context.Context, stop func() bool, nc *net.UnixConn, r *bufio.Reader, method string, ch chan<- Notification) {
	defer c.wg.Done()
	defer close(ch)
	defer c.dropSub(nc)
	defer nc.Close()
	defer stop()

	deliver := func(n Notification) bool {
		select {
		case ch <- n:
			return true
		case <-ctx.Done():
		case <-c.closed:
		}
		return false
	}
	lr := &lines.Reader{R: r, Max: MaxLineSize}
	for {
		line, _, err := lr.Next()
		if err != nil {
			if ctx.Err() == nil && !c.isClosing() {
				deliver(Notification{Method: method, End: true, Error: Errorf(CodeUnavailable, "%v", c.lost(err))})
			}
			return
		}
		if len(line) == 0 {
			continue
		}
		var msg inbound
		if err := json.Unmarshal(line, &msg); err != nil {
			deliver(Notification{Method: method, End: true, Error: Errorf(CodeUnavailable, "decode notification from %s: %v", c.path, err)})
			return
		}
		if msg.Method == "" {
			continue
		}
		n := Notification{Method: msg.Method, Subscription: msg.Subscription, Params: msg.Params, Clock: msg.Clock, End: msg.End, Error: msg.Error}
		if n.End {
			if n.Error != nil {
				deliver(n)
			}
			return
		}
		if !deliver(n) {
			return
		}
	}
}

// addSub registers a subscription's connection, so that Close closes it,
// and counts its goroutine in wg; it fails once Close has begun.
func (c *Client) addSub(nc *net.UnixConn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isClosed {
		return false
	}
	c.subs[nc] = struct{}{}
	c.wg.Add(1)
	return true
}

func (c *Client) dropSub(nc *net.UnixConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.subs, nc)
}

func (c *Client) isClosing() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// Close ends every call and subscription with ErrClosed, closes the
// connections and waits for the client's goroutines. It is safe to call more
// than once.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.isClosed {
		c.mu.Unlock()
		return nil
	}
	c.isClosed = true
	subs := make([]*net.UnixConn, 0, len(c.subs))
	for nc := range c.subs {
		subs = append(subs, nc)
	}
	c.mu.Unlock()

	close(c.closed)
	c.fail(ErrClosed)
	for _, nc := range subs {
		nc.Close()
	}
	c.wg.Wait()
	return nil
}
