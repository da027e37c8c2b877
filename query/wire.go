package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/amplidex/amplidex/query/internal/lines"
)

// MaxLineSize is the longest line, in bytes and without its newline, of a
// request or a notification. It bounds the memory one request can take.
const MaxLineSize = lines.MaxLine

// MaxResponseSize is the longest response line, in bytes and without its
// newline, that a Client accepts. Responses are not limited to MaxLineSize:
// the server streams a large result, so the cap only protects the client.
const MaxResponseSize = 1 << 30

// ErrLineTooLong is returned when a line is longer than MaxLineSize.
var ErrLineTooLong = lines.ErrTooLong

// ErrResponseTooLarge is returned by a Client for a response longer than
// MaxResponseSize. The response is discarded without being held, and the
// connection stays usable: the daemon is there, the answer is too big.
var ErrResponseTooLarge = fmt.Errorf("query: response longer than %d bytes", MaxResponseSize)

// Code classifies an error response. Codes are stable slugs: clients match
// on them.
type Code string

// Error codes.
const (
	// CodeNotFound: the thing asked for does not exist.
	CodeNotFound Code = "not-found"
	// CodeInvalidParams: the method exists but its params are wrong.
	CodeInvalidParams Code = "invalid-params"
	// CodeInvalidRequest: the line is not a request (bad JSON, missing id
	// or method, too long).
	CodeInvalidRequest Code = "invalid-request"
	// CodeOverloaded: the server already holds as many bytes of requests,
	// or of answers not yet read, as its budgets allow (package
	// query/server: Server.RequestBudget, Server.AnswerBudget), so it
	// discarded this request without running it, or its answer. Trying
	// again later may succeed.
	CodeOverloaded Code = "overloaded"
	// CodeUnknownMethod: no such method.
	CodeUnknownMethod Code = "unknown-method"
	// CodeInternal: the server failed to answer.
	CodeInternal Code = "internal"
	// CodeShuttingDown: the server is stopping and answers no more.
	CodeShuttingDown Code = "shutting-down"
	// CodeForbidden: the peer may not use this server.
	CodeForbidden Code = "forbidden"
	// CodeDegraded: a root of the project could not be listed yet, so
	// what it holds is not known; the daemon tries again, backing off, and
	// a later question may be answered.
	CodeDegraded Code = "degraded"
	// CodeUnavailable: the connection ended before the answer came. The
	// client reports it; the server never sends it.
	CodeUnavailable Code = "unavailable"
	// CodeOtherBuild: the request named its client's build
	// (Request.Build), and the server is of another: it did not run the
	// request. The message names the server's build; "version" says more.
	CodeOtherBuild Code = "other-build"
)

// Error is the error member of a response, and the error a Client returns
// for it. A Handler returns an *Error (possibly wrapped) to choose the code
// the client sees; any other error is reported as CodeInternal.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error returns "<code>: <message>".
func (e *Error) Error() string {
	return string(e.Code) + ": " + e.Message
}

// Request is one line a client sends. ID is a JSON number or string, echoed
// verbatim in the response; Params is any JSON value, or nil when absent.
// Build, when set, is the client's build (Build.Key): a server of another
// build refuses the request with CodeOtherBuild instead of running it, so
// that a client learns of a daemon of another build from the answer to its
// first question, without asking "version" first.
type Request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	Build  string          `json:"build,omitempty"`
}

// Response is the server's answer to one request: Result on success, Error
// on failure, and the handler's clock at the time of the answer. ID is null
// when the request's id could not be read.
type Response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
	Clock  Clock           `json:"clock,omitzero"`
}

// Notification is a line the server pushes on a subscription. Method is the
// subscribed method and Subscription the id of the request that opened it.
// The last notification of a subscription has End set, and Error when the
// stream failed or the server is shutting down.
type Notification struct {
	Method       string          `json:"method"`
	Subscription json.RawMessage `json:"subscription,omitempty"`
	Params       json.RawMessage `json:"params,omitempty"`
	Clock        Clock           `json:"clock,omitzero"`
	End          bool            `json:"end,omitempty"`
	Error        *Error          `json:"error,omitempty"`
}

// DecodeRequest decodes one request line. The line must hold exactly one
// JSON object with an id (a number or a string), a non-empty method,
// optional params and an optional build; any other key is an error (which
// is how a server older than Request.Build refuses a request naming a
// build). On failure the error is an
// *Error with CodeInvalidRequest, and the returned Request carries the id
// when it could still be read, so that the answer can name it.
func DecodeRequest(line []byte) (Request, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return Request{}, Errorf(CodeInvalidRequest, "request is not a JSON object")
	}
	var req Request
	if err := decodeStrict(line, &req); err != nil {
		return Request{ID: salvageID(line)}, Errorf(CodeInvalidRequest, "decode request: %v", err)
	}
	switch {
	case len(req.ID) == 0:
		return Request{}, Errorf(CodeInvalidRequest, "request has no id")
	case !lines.ValidID(req.ID):
		return Request{}, Errorf(CodeInvalidRequest, "request id %.40s is not a number or a string", req.ID)
	case req.Method == "":
		return Request{ID: req.ID}, Errorf(CodeInvalidRequest, "request has no method")
	}
	if string(req.Params) == "null" {
		req.Params = nil
	}
	return req, nil
}

// DecodeParams decodes a request's params into v, rejecting keys v does not
// declare. Absent or null params leave v unchanged. On failure the error is
// an *Error with CodeInvalidParams.
func DecodeParams(params json.RawMessage, v any) error {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := decodeStrict(params, v); err != nil {
		return Errorf(CodeInvalidParams, "decode params: %v", err)
	}
	return nil
}

// decodeStrict decodes data, which must be exactly one JSON value, into v,
// rejecting unknown object keys. Errors name the byte offset.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeJSONError(err)
	}
	if off := dec.InputOffset(); off != int64(len(data)) {
		return fmt.Errorf("unexpected data after the value at offset %d", off)
	}
	return nil
}

func describeJSONError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("%v at offset %d", syntax, syntax.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "value"
		}
		return fmt.Errorf("%s: want %s, got JSON %s at offset %d", field, typ.Type, typ.Value, typ.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("truncated JSON")
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// salvageID returns the id of a request that failed strict decoding, when
// the line is still a JSON object with a valid id.
func salvageID(line []byte) json.RawMessage {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.NewDecoder(bytes.NewReader(line)).Decode(&v) != nil || !lines.ValidID(v.ID) {
		return nil
	}
	return v.ID
}
