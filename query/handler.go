package query

import (
	"context"
	"encoding/json"
	"iter"
)

// Handler answers the requests a server (package query/server) reads.
//
// ServeQuery returns the result to send, which is marshalled to JSON, or an
// error: an *Error (possibly wrapped) is sent as it is, any other error as
// CodeInternal. Returning a *Stream opens a subscription instead. ServeQuery
// is called concurrently and must return soon after ctx ends.
//
// A result that is a slice, or an iter.Seq[any], is written as a JSON array
// one element at a time, straight to the connection, so that a large answer
// is never held whole: the elements of an iter.Seq[any] are produced as
// they are written (the iterator must not block for long: the connection's
// other answers wait for it). A result that is an Object is written one
// field at a time, each as a result is. Any other result is marshalled
// whole, and held against the server's AnswerBudget until it is written.
// No result is too long to send.
//
// A result waits, unencoded, for its connection's earlier answers to be
// written: a handler that answers from published, immutable state (a View
// and the slices it shares) costs little while its peer is slow to read.
type Handler interface {
	ServeQuery(ctx context.Context, method string, params json.RawMessage) (result any, err error)
}

// Answer is a result with the clock of the state it was computed from. A
// Handler returns one when the server's clock may already be past that
// state, so that the response never carries a clock ahead of what it
// shows; any other result carries the server's clock at the time of the
// answer.
type Answer struct {
	Result any
	Clock  Clock
}

// Object is a result written as a JSON object one field at a time, each
// value as a result is: a list one element at a time. A large answer that
// carries a summary beside its list implements it, so that the list is
// never marshalled whole. JSONFields must yield the fields, names and
// values, that json.Marshal writes of the result, in its order.
type Object interface {
	JSONFields() iter.Seq2[string, any]
}

// Stream is the result a Handler returns to open a subscription. The server
// sends Result as the answer to the request, then calls Run, whose send
// pushes one notification with the given params. The subscription ends when
// Run returns; its context ends when the client disconnects or the server
// shuts down, and send fails from then on.
type Stream struct {
	// Result is the answer to the subscribing request; nil sends null.
	Result any
	// Run pushes notifications with send until ctx ends or it has no more
	// to say. send is safe for concurrent use and fails once the
	// connection is gone.
	Run func(ctx context.Context, send func(params any) error) error
	// Abandon, when set, is called instead of Run when the subscription
	// never starts (its answer could not be written: the client went
	// away): it lets go of what the handler took for Run.
	Abandon func()
}
