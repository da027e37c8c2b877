package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// JSON-RPC 2.0 and LSP error codes.
const (
	CodeParseError           = -32700
	CodeInvalidRequest       = -32600
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeInternalError        = -32603
	CodeServerNotInitialized = -32002
	CodeRequestCancelled     = -32800
)

// maxHeaderLine bounds one header line; LSP headers are short.
const maxHeaderLine = 4096

// Error is the error member of a JSON-RPC response.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Message is any JSON-RPC 2.0 message: a request (ID and Method), a
// notification (Method only) or a response (ID and Result or Error).
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// IsRequest reports whether m expects a response.
func (m *Message) IsRequest() bool { return m.ID != nil && m.Method != "" }

// validID reports whether id is a JSON-RPC id: a number, a string or null.
func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case 'n':
		return string(id) == "null"
	default:
		var n json.Number
		return json.Unmarshal(id, &n) == nil
	}
}

// FrameError is a problem with one message that the stream survives: a
// malformed header, a refused length, a body that is not JSON.
type FrameError struct{ msg string }

func (e *FrameError) Error() string { return e.msg }

// Reader reads Content-Length framed messages.
type Reader struct {
	br  *bufio.Reader
	max int64
}

// NewReader reads messages from r, refusing a body of more than max
// bytes (the message is skipped, with a *FrameError).
func NewReader(r io.Reader, max int64) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Read returns the body of the next message. A *FrameError means this
// message was skipped and the next read may succeed; any other error
// (io.EOF included) ends the stream.
func (r *Reader) Read() ([]byte, error) {
	length := int64(-1)
	var problem string
	lines := 0
	for {
		line, err := r.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && lines > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if line == nil {
			// A line too long to be a header; skip it.
			problem = "header line too long"
			lines++
			continue
		}
		if len(line) == 0 {
			if lines == 0 {
				continue // stray blank line between messages
			}
			break
		}
		lines++
		name, value, ok := splitHeader(line)
		if !ok {
			// Resynchronise when a body without framing left bytes before the
			// next header on the same line.
			if i := bytes.Index(bytes.ToLower(line), []byte("content-length:")); i > 0 {
				name, value, ok = splitHeader(line[i:])
			}
		}
		if !ok {
			problem = fmt.Sprintf("malformed header line %q", truncate(line, 80))
			continue
		}
		if bytes.EqualFold(name, []byte("Content-Length")) {
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 {
				problem = fmt.Sprintf("invalid Content-Length %q", truncate(value, 40))
				length = -1
				continue
			}
			length, problem = n, ""
		}
		// Content-Type and unknown headers are accepted and ignored.
	}
	if length < 0 {
		if problem == "" {
			problem = "header block without Content-Length"
		}
		return nil, &FrameError{problem}
	}
	if length > r.max {
		if _, err := io.CopyN(io.Discard, r.br, length); err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, &FrameError{fmt.Sprintf("refused a message of %d bytes (limit %d)", length, r.max)}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r.br, body); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	return body, nil
}

// readLine returns one line without its "\r\n" or "\n". A line longer than
// maxHeaderLine is consumed and returned as nil with no error.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || (err == nil && len(line) > maxHeaderLine) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = r.br.ReadSlice('\n')
		}
		if err != nil {
			return nil, err
		}
		return nil, nil
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
	return line, nil
}

// splitHeader splits "Name: value".
func splitHeader(line []byte) (name, value []byte, ok bool) {
	i := bytes.IndexByte(line, ':')
	if i <= 0 {
		return nil, nil, false
	}
	name = bytes.TrimSpace(line[:i])
	for _, c := range name {
		if !isTokenByte(c) {
			return nil, nil, false
		}
	}
	return name, bytes.TrimSpace(line[i+1:]), true
}

// isTokenByte reports the bytes a header name is made of.
func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// Decode parses a message body. A body that is not a JSON-RPC message gives
// a *Error to send back (with a null id).
func Decode(body []byte) (*Message, *Error) {
	var m Message
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, &Error{Code: CodeParseError, Message: "parse error: " + err.Error()}
	}
	if m.JSONRPC != "2.0" {
		return &m, &Error{Code: CodeInvalidRequest, Message: `jsonrpc must be "2.0"`}
	}
	if m.ID != nil && !validID(m.ID) {
		m.ID = json.RawMessage("null")
		return &m, &Error{Code: CodeInvalidRequest, Message: "id must be a number, a string or null"}
	}
	if m.Method == "" && m.ID == nil {
		return &m, &Error{Code: CodeInvalidRequest, Message: "neither a request, a notification nor a response"}
	}
	return &m, nil
}

// Writer writes Content-Length framed messages, one at a time.
type Writer struct {
	mu  sync.Mutex // guards fields below
	w   io.Writer
	buf bytes.Buffer
	err error // the first write error; later writes are dropped
}

// Send frames v and writes it. After the first failure every write fails
// with the same error.
func (w *Writer) Send(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	fmt.Fprintf(&w.buf, "Content-Length: %d\r\n\r\n", len(body))
	w.buf.Write(body)
	if _, err := w.w.Write(w.buf.Bytes()); err != nil {
		w.err = fmt.Errorf("write message: %w", err)
		return w.err
	}
	return nil
}

// NewWriter writes messages to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Respond sends the result (or the error) for the request with id.
func (w *Writer) Respond(id json.RawMessage, result any, rerr *Error) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	m := Message{JSONRPC: "2.0", ID: id, Error: rerr}
	if rerr == nil {
		raw, err := json.Marshal(result)
		if err != nil {
			return fmt.Errorf("encode result: %w", err)
		}
		m.Result = raw
	}
	return w.Send(&m)
}

// Notify sends a notification.
func (w *Writer) Notify(method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	return w.Send(&Message{JSONRPC: "2.0", Method: method, Params: raw})
}
