package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/server"
)

func TestRequestBudget(t *testing.T) {
	const (
		budget  = 4 << 20
		payload = 1 << 20
		conns   = 12
	)
	s, path := querytest.StartServer(t, querytest.NewHandler(), func(s *server.Server) { s.RequestBudget = budget })

	// Every connection sends most of a large request and stops before its
	// end, so that the server must hold what it keeps of them all at once.
	raws := make([]*querytest.RawConn, conns)
	for i := range raws {
		raws[i] = querytest.DialRaw(t, path)
	}
	var wg sync.WaitGroup
	for i, rc := range raws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := fmt.Sprintf(`{"id":%d,"method":"echo","params":"%s`, i+1, strings.Repeat("a", payload))
			rc.Conn.SetWriteDeadline(time.Now().Add(querytest.Timeout))
			if _, err := io.WriteString(rc.Conn, start); err != nil {
				t.Errorf("write: %v", err)
			}
		}()
	}
	wg.Wait()

	// Meanwhile a small request is answered.
	c := querytest.DialClient(t, path)
	var got string
	if _, err := c.Call(querytest.Context(t), "echo", "small", &got); err != nil || got != "small" {
		t.Fatalf("small Call while the budget is held = %q, %v", got, err)
	}
	if used, _ := server.BytesInFlight(s); used <= 0 || used > budget {
		t.Errorf("bytes in flight %d while large requests are half read, want within (0, %d]", used, budget)
	}

	var ok, overloaded int
	for i, rc := range raws {
		rc.Send(`"}`)
		m := rc.Recv()
		if string(m.ID) != fmt.Sprint(i+1) {
			t.Fatalf("answer %.200s, want id %d", m.Raw, i+1)
		}
		switch {
		case m.Error == nil && len(m.Result) == payload+2:
			ok++
		case m.Error != nil && m.Error.Code == query.CodeOverloaded:
			overloaded++
			// The connection is still usable.
			rc.Send(`{"id":"after","method":"echo","params":"x"}`)
			if m := rc.Recv(); string(m.Result) != `"x"` {
				t.Errorf("answer after an overloaded request: %.200s", m.Raw)
			}
		default:
			t.Errorf("answer %.200s, want the echo or an overloaded error", m.Raw)
		}
	}
	if ok == 0 || overloaded < conns-budget/payload {
		t.Errorf("%d answered and %d overloaded, want some answered and at least %d overloaded", ok, overloaded, conns-budget/payload)
	}
	if _, peak := server.BytesInFlight(s); peak > budget || peak < payload {
		t.Errorf("peak bytes in flight %d, want at least %d and at most the budget %d", peak, payload, budget)
	}
	deadline := time.Now().Add(querytest.Timeout)
	for {
		used, _ := server.BytesInFlight(s)
		if used == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still in flight after every request was answered", used)
		}
		time.Sleep(time.Millisecond)
	}
}

// manyResources returns n resources of about 300 bytes of JSON each.
func manyResources(n int) []query.ResourceInfo {
	out := make([]query.ResourceInfo, n)
	for i := range out {
		name := fmt.Sprintf("context-file-%06d", i)
		out[i] = query.ResourceInfo{
			Collection:  "foundation",
			Kind:        discovery.Kind("context"),
			Name:        name,
			Ref:         "foundation:context/" + name,
			Path:        "/home/user/projects/amplifier/collections/foundation/context/" + name + ".md",
			Rel:         "context/" + name + ".md",
			Description: "a context file that says something about the project and its parts",
			Root:        discovery.RootKind("user"),
		}
	}
	return out
}

func TestLargeResult(t *testing.T) {
	const n = 100_000
	want := manyResources(n)
	h := querytest.NewHandler()
	h.Handle("context", func(ctx context.Context, params json.RawMessage) (any, error) {
		return want, nil
	})
	_, path := querytest.StartServer(t, h)
	c := querytest.DialClient(t, path)
	var got []query.ResourceInfo
	if _, err := c.Call(querytest.Context(t), "context", nil, &got); err != nil {
		t.Fatalf("Call context: %v", err)
	}
	if len(got) != n || got[0] != want[0] || got[n-1] != want[n-1] {
		t.Fatalf("got %d resources, want %d equal to those sent", len(got), n)
	}
	if one, _ := json.Marshal(want[0]); len(one)*n <= 2*query.MaxLineSize {
		t.Errorf("the answer is about %d bytes; the test wants one well over a line", len(one)*n)
	}
}

// gatedItem encodes as its text; the last one first waits for the gate,
// which the test opens once it has read part of the answer.
type gatedItem struct {
	text string
	gate <-chan struct{}
}

func (g gatedItem) MarshalJSON() ([]byte, error) {
	if g.gate != nil {
		select {
		case <-g.gate:
		case <-time.After(querytest.Timeout):
			return nil, errors.New("nothing was written before the last element was encoded")
		}
	}
	return json.Marshal(g.text)
}

func TestResultStreams(t *testing.T) {
	const (
		n    = 4000
		size = 500
	)
	items := func(gate <-chan struct{}) []gatedItem {
		out := make([]gatedItem, n)
		for i := range out {
			out[i].text = fmt.Sprintf("%05d%s", i, strings.Repeat("x", size))
		}
		out[n-1].gate = gate
		return out
	}
	tests := []struct {
		name   string
		result func(gate <-chan struct{}) any
	}{
		{"slice", func(gate <-chan struct{}) any { return items(gate) }},
		{"object", func(gate <-chan struct{}) any { return gatedObject{items(gate)} }},
		{"iterator", func(gate <-chan struct{}) any {
			all := items(gate)
			return iter.Seq[any](func(yield func(any) bool) {
				for _, it := range all {
					if !yield(it) {
						return
					}
				}
			})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gate := make(chan struct{})
			h := querytest.NewHandler()
			h.Handle("list", func(ctx context.Context, params json.RawMessage) (any, error) {
				return tc.result(gate), nil
			})
			_, path := querytest.StartServer(t, h)
			rc := querytest.DialRaw(t, path)
			rc.Send(`{"id":1,"method":"list"}`)

			// Read a quarter of the answer before the server may encode
			// its last element.
			head := make([]byte, n*size/4)
			rc.Conn.SetReadDeadline(time.Now().Add(querytest.Timeout))
			if _, err := io.ReadFull(rc.Reader, head); err != nil {
				t.Fatalf("read the start of the answer: %v", err)
			}
			close(gate)
			rest, err := rc.Reader.ReadBytes('\n')
			if err != nil {
				t.Fatalf("read the rest of the answer: %v", err)
			}
			raw := append(head, rest...)
			if tc.name == "object" {
				// The list is the object's field; unwrap it.
				var obj struct {
					ID     int             `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal(raw, &obj); err != nil {
					t.Fatalf("decode the answer: %v", err)
				}
				var fields struct {
					List []json.RawMessage `json:"list"`
					N    int               `json:"n"`
				}
				if err := json.Unmarshal(obj.Result, &fields); err != nil || fields.N != n {
					t.Fatalf("decode the object %.200s: %v (n %d)", obj.Result, err, fields.N)
				}
				list, _ := json.Marshal(fields.List)
				raw = fmt.Appendf(nil, `{"id":%d,"result":%s,"clock":"c:1:1:1"}`, obj.ID, list)
			}
			var resp struct {
				ID     int             `json:"id"`
				Result []string        `json:"result"`
				Error  *query.Error    `json:"error"`
				Clock  json.RawMessage `json:"clock"`
			}
			if err := json.Unmarshal(raw, &resp); err != nil {
				t.Fatalf("decode the answer: %v", err)
			}
			if resp.Error != nil || resp.ID != 1 || len(resp.Result) != n || resp.Result[n-1][:5] != fmt.Sprintf("%05d", n-1) {
				t.Fatalf("answer: id %d, %d elements, error %v", resp.ID, len(resp.Result), resp.Error)
			}
			if _, err := query.ParseClock(strings.Trim(string(resp.Clock), `"`)); err != nil {
				t.Errorf("clock: %v", err)
			}
		})
	}
}

// gatedObject is an Object whose list is streamed.
type gatedObject struct{ list []gatedItem }

func (g gatedObject) JSONFields() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		_ = yield("list", g.list) && yield("n", len(g.list))
	}
}

// failingItem fails to encode.
type failingItem struct{}

func (failingItem) MarshalJSON() ([]byte, error) { return nil, errors.New("no encoding") }

func TestResultElementFails(t *testing.T) {
	h := querytest.NewHandler()
	h.Handle("list", func(ctx context.Context, params json.RawMessage) (any, error) {
		return []any{1, 2, 3, failingItem{}, 5}, nil
	})
	h.Handle("panics", func(ctx context.Context, params json.RawMessage) (any, error) {
		return iter.Seq[any](func(yield func(any) bool) {
			for i := range 3 {
				if !yield(i) {
					return
				}
			}
			panic("producer bug")
		}), nil
	})
	_, path := querytest.StartServer(t, h)
	c := querytest.DialClient(t, path)
	for _, method := range []string{"list", "panics"} {
		var got []int
		_, err := c.Call(querytest.Context(t), method, nil, &got)
		var e *query.Error
		if !errors.As(err, &e) || e.Code != query.CodeInternal || !strings.Contains(e.Message, "element 3") {
			t.Fatalf("Call %s = %v, want an internal error naming element 3", method, err)
		}
		if _, err := c.Call(querytest.Context(t), "echo", 1, nil); err != nil {
			t.Errorf("Call after %s: %v", method, err)
		}
	}
}

// TestAnswerBudget: answers marshalled whole that peers do not read are
// held against the server's AnswerBudget; past it a request is answered
// overloaded, while small answers and answers to others still go, and
// the budget comes back when the peers leave.
func TestAnswerBudget(t *testing.T) {
	const (
		payload = 2 << 20 // larger than what a socket's buffers take
		held    = 4
		budget  = held*payload + 1024
		conns   = 12
	)
	h := querytest.NewHandler()
	h.Handle("big", func(ctx context.Context, params json.RawMessage) (any, error) {
		return strings.Repeat("a", payload), nil
	})
	s, path := querytest.StartServer(t, h, func(s *server.Server) {
		s.AnswerBudget = budget
		s.WriteTimeout = querytest.Timeout
	})

	// Peers ask for the large answer and read no more than its start.
	raws := make([]*querytest.RawConn, conns)
	for i := range raws {
		raws[i] = querytest.DialRaw(t, path)
		raws[i].Send(`{"id":1,"method":"big"}`)
	}
	var answered, overloaded int
	for _, rc := range raws {
		rc.Conn.SetReadDeadline(time.Now().Add(querytest.Timeout))
		start := make([]byte, 100)
		if _, err := io.ReadFull(rc.Reader, start); err != nil {
			t.Fatalf("read the start of an answer: %v", err)
		}
		switch {
		case strings.Contains(string(start), `"result":"aaaa`):
			answered++
		case strings.Contains(string(start), `"error":{"code":"overloaded"`):
			overloaded++
		default:
			t.Fatalf("answer starts %q", start)
		}
	}
	if answered != held || overloaded != conns-held {
		t.Errorf("%d answers held and %d overloaded, want %d and %d", answered, overloaded, held, conns-held)
	}
	if used, peak := server.AnswerBytesInFlight(s); used > budget || peak > budget || used < held*payload {
		t.Errorf("answer bytes in flight %d, peak %d; want at least %d and at most the budget %d", used, peak, held*payload, budget)
	}

	// Meanwhile a client that reads is told the server is overloaded for
	// a large answer, and answered for a small one.
	c := querytest.DialClient(t, path)
	var e *query.Error
	if _, err := c.Call(querytest.Context(t), "big", nil, nil); !errors.As(err, &e) || e.Code != query.CodeOverloaded {
		t.Errorf("Call big while the budget is held = %v, want %s", err, query.CodeOverloaded)
	}
	var got string
	if _, err := c.Call(querytest.Context(t), "echo", "small", &got); err != nil || got != "small" {
		t.Errorf("Call echo while the budget is held = %q, %v", got, err)
	}

	// Once the peers leave, their answers are let go.
	for _, rc := range raws {
		rc.Conn.Close()
	}
	deadline := time.Now().Add(querytest.Timeout)
	for used, _ := server.AnswerBytesInFlight(s); used != 0; used, _ = server.AnswerBytesInFlight(s) {
		if time.Now().After(deadline) {
			t.Fatalf("%d answer bytes still held after their peers left", used)
		}
		time.Sleep(time.Millisecond)
	}
	var big string
	if _, err := c.Call(querytest.Context(t), "big", nil, &big); err != nil || len(big) != payload {
		t.Errorf("Call big after the peers left: %d bytes, %v", len(big), err)
	}
}

// TestAnswerLargerThanBudget: an answer larger than the whole budget is
// still answered when it is the only one held.
func TestAnswerLargerThanBudget(t *testing.T) {
	const payload = 1 << 20
	h := querytest.NewHandler()
	h.Handle("big", func(ctx context.Context, params json.RawMessage) (any, error) {
		return strings.Repeat("a", payload), nil
	})
	_, path := querytest.StartServer(t, h, func(s *server.Server) { s.AnswerBudget = payload / 4 })
	var big string
	if _, err := querytest.DialClient(t, path).Call(querytest.Context(t), "big", nil, &big); err != nil || len(big) != payload {
		t.Errorf("Call big: %d bytes, %v", len(big), err)
	}
}

// TestObjectResults: a result that is a query.Object is written as
// json.Marshal writes it, its lists one element at a time.
func TestObjectResults(t *testing.T) {
	diags := &query.DiagnosticsResult{Diagnostics: []diag.Diagnostic{
		{Code: "ref/mention-unresolved", Severity: diag.SeverityError, Path: "/a/b.md", Message: `@x:y does not "resolve"`,
			Range: diag.Range{End: diag.Position{Line: 1, Character: 2}}, Collection: "c"},
		{Code: "schema/unknown-key", Severity: diag.SeverityWarning, Path: "/a/c.md"},
	}, Summary: query.Summary{Errors: 1, Warnings: 1, Files: 2}}
	clock, err := query.ParseClock("c:1:2:3")
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]any{
		"diagnostics":       diags,
		"empty diagnostics": &query.DiagnosticsResult{Diagnostics: []diag.Diagnostic{}},
		"nil diagnostics":   &query.DiagnosticsResult{},
		"changes": &query.ChangesResult{Clock: clock, IsFreshInstance: true,
			Files: []query.Change{{Path: "/a", Deleted: true}, {Path: "/b"}}},
	}
	h := querytest.NewHandler()
	for name, res := range results {
		h.Handle(name, func(ctx context.Context, params json.RawMessage) (any, error) { return res, nil })
	}
	_, path := querytest.StartServer(t, h)
	rc := querytest.DialRaw(t, path)
	for name, res := range results {
		if _, ok := res.(query.Object); !ok {
			t.Fatalf("%T is not a query.Object", res)
		}
		rc.Send(fmt.Sprintf(`{"id":1,"method":%q}`, name))
		m := rc.Recv()
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if m.Error != nil || string(m.Result) != string(want) {
			t.Errorf("%s: result %s (error %v), want %s", name, m.Result, m.Error, want)
		}
	}
}
