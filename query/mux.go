package query

import (
	"context"
	"encoding/json"
	"slices"
)

// MethodFunc answers one method; see Handler for the meaning of its results.
type MethodFunc func(ctx context.Context, params json.RawMessage) (any, error)

// Mux is a Handler that dispatches on the method name. Register every method
// with Handle before the server starts; a Mux is read-only while it serves.
type Mux struct {
	methods map[string]MethodFunc
}

// NewMux returns an empty Mux.
func NewMux() *Mux {
	return &Mux{methods: make(map[string]MethodFunc)}
}

// Handle registers fn for method. It panics when method is empty or already
// registered, as both are mistakes in the program, not in its input.
func (m *Mux) Handle(method string, fn MethodFunc) {
	if method == "" || fn == nil {
		panic("query: Mux.Handle needs a method name and a func")
	}
	if _, dup := m.methods[method]; dup {
		panic("query: Mux.Handle: method " + method + " registered twice")
	}
	m.methods[method] = fn
}

// Wrap replaces the func registered for method with wrap(fn), so that a
// server can answer some calls of a method itself and pass the rest on. It
// panics when method is not registered.
func (m *Mux) Wrap(method string, wrap func(next MethodFunc) MethodFunc) {
	fn, ok := m.methods[method]
	if !ok {
		panic("query: Mux.Wrap: method " + method + " is not registered")
	}
	m.methods[method] = wrap(fn)
}

// Methods returns the registered method names, sorted.
func (m *Mux) Methods() []string {
	names := make([]string, 0, len(m.methods))
	for name := range m.methods {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// ServeQuery calls the func registered for method, or returns an *Error with
// CodeUnknownMethod.
func (m *Mux) ServeQuery(ctx context.Context, method string, params json.RawMessage) (any, error) {
	fn, ok := m.methods[method]
	if !ok {
		return nil, Errorf(CodeUnknownMethod, "unknown method %q", method)
	}
	return fn(ctx, params)
}
