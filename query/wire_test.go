package query_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/query"
)

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		wantID     string
		wantMethod string
		wantParams string
	}{
		{"number id", `{"id":1,"method":"resolve","params":{"name":"foundation"}}`, "1", "resolve", `{"name":"foundation"}`},
		{"string id", `{"id":"a-1","method":"collections"}`, `"a-1"`, "collections", ""},
		{"null params", `{"id":2,"method":"m","params":null}`, "2", "m", ""},
		{"array params", `{"method":"m","params":[1,2],"id":-3.5e2}`, "-3.5e2", "m", "[1,2]"},
		{"spaces", "  {\"id\" : 7 , \"method\" : \"m\" }\r", "7", "m", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := query.DecodeRequest([]byte(tc.line))
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			if string(req.ID) != tc.wantID || req.Method != tc.wantMethod || string(req.Params) != tc.wantParams {
				t.Errorf("got id %s method %q params %s, want %s %q %s", req.ID, req.Method, req.Params, tc.wantID, tc.wantMethod, tc.wantParams)
			}
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		wantID  string // salvaged id, "" for none
		wantMsg string
	}{
		{"garbage", `hello`, "", "not a JSON object"},
		{"empty", ``, "", "not a JSON object"},
		{"array", `[1,2]`, "", "not a JSON object"},
		{"null", `null`, "", "not a JSON object"},
		{"truncated", `{"id":1,"method":"m"`, "", "truncated"},
		{"syntax", `{"id":1,"method":"m",}`, "", "offset"},
		{"no id", `{"method":"m"}`, "", "no id"},
		{"null id", `{"id":null,"method":"m"}`, "", "not a number or a string"},
		{"object id", `{"id":{},"method":"m"}`, "", "not a number or a string"},
		{"bool id", `{"id":true,"method":"m"}`, "", "not a number or a string"},
		{"no method", `{"id":4}`, "4", "no method"},
		{"method not a string", `{"id":5,"method":7}`, "5", "method"},
		{"unknown key", `{"id":6,"method":"m","parms":{}}`, "6", `unknown field "parms"`},
		{"trailing data", `{"id":8,"method":"m"} {"id":9}`, "8", "after the value"},
		{"two objects", `{"id":8,"method":"m"}{}`, "8", "after the value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := query.DecodeRequest([]byte(tc.line))
			var e *query.Error
			if !errors.As(err, &e) || e.Code != query.CodeInvalidRequest {
				t.Fatalf("DecodeRequest(%s) = %v, want an invalid-request *Error", tc.line, err)
			}
			if !strings.Contains(e.Message, tc.wantMsg) {
				t.Errorf("message %q does not mention %q", e.Message, tc.wantMsg)
			}
			if string(req.ID) != tc.wantID {
				t.Errorf("salvaged id %s, want %q", req.ID, tc.wantID)
			}
		})
	}
}

func TestDecodeParams(t *testing.T) {
	type params struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	tests := []struct {
		name    string
		raw     string
		want    params
		wantErr string
	}{
		{"full", `{"name":"x","count":2}`, params{"x", 2}, ""},
		{"absent", ``, params{"keep", 0}, ""},
		{"null", `null`, params{"keep", 0}, ""},
		{"unknown key", `{"nam":"x"}`, params{}, `unknown field "nam"`},
		{"wrong type", `{"count":"two"}`, params{}, "count: want int"},
		{"trailing", `{"name":"x"} 1`, params{}, "after the value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := params{Name: "keep"}
			err := query.DecodeParams(json.RawMessage(tc.raw), &got)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("DecodeParams: %v", err)
				}
				if got != tc.want {
					t.Errorf("got %+v, want %+v", got, tc.want)
				}
				return
			}
			var e *query.Error
			if !errors.As(err, &e) || e.Code != query.CodeInvalidParams {
				t.Fatalf("DecodeParams(%s) = %v, want an invalid-params *Error", tc.raw, err)
			}
			if !strings.Contains(e.Message, tc.wantErr) {
				t.Errorf("message %q does not mention %q", e.Message, tc.wantErr)
			}
		})
	}
}

// FuzzDecodeRequest checks that the request decoder never panics, that
// what it accepts is a valid request, and that it accepts its own encoding
// of it.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"method":"resolve","params":{"name":"foundation"}}`,
		`{"id":"x","method":"m","params":[1,"a",null]}`,
		`{"id":1,"method":"m"} junk`,
		`{"id":null}`,
		`{"method":"m","id":1e400}`,
		"{\"id\":1,\"method\":\"\xff\"}",
		`garbage`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := query.DecodeRequest(line)
		if err != nil {
			var e *query.Error
			if !errors.As(err, &e) || e.Code != query.CodeInvalidRequest {
				t.Fatalf("error %v is not an invalid-request *Error", err)
			}
			if len(req.ID) > 0 && !json.Valid(req.ID) {
				t.Fatalf("salvaged id %q is not JSON", req.ID)
			}
			return
		}
		if req.Method == "" || len(req.ID) == 0 {
			t.Fatalf("accepted %q with id %q method %q", line, req.ID, req.Method)
		}
		if !json.Valid(req.ID) || (req.Params != nil && !json.Valid(req.Params)) {
			t.Fatalf("accepted %q with invalid JSON parts", line)
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("re-encode %q: %v", line, err)
		}
		back, err := query.DecodeRequest(again)
		if err != nil {
			t.Fatalf("decode of re-encoded %s: %v", again, err)
		}
		if back.Method != req.Method || !jsonEqual(back.ID, req.ID) || !jsonEqual(back.Params, req.Params) {
			t.Fatalf("round trip changed %+v into %+v", req, back)
		}
	})
}

// jsonEqual reports whether a and b are the same JSON value: spelled
// alike once compacted, or decoding to equal values (json.Marshal writes
// "&" as "\u0026").
func jsonEqual(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	if bytes.Equal(ca.Bytes(), cb.Bytes()) {
		return true
	}
	decode := func(raw []byte) (any, error) {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		err := d.Decode(&v)
		return v, err
	}
	va, errA := decode(a)
	vb, errB := decode(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

// checkEncodeRequest holds the request line a client writes to what
// json.Marshal makes of the Request.
func checkEncodeRequest(t *testing.T, method string, params []byte, build string) {
	t.Helper()
	got, err := query.EncodeRequest([]byte("17"), method, params, build)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(query.Request{ID: json.RawMessage("17"), Method: method, Params: params, Build: build})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want)+"\n" {
		t.Errorf("request line %s, json.Marshal says %s", got, want)
	}
}

func TestEncodeRequest(t *testing.T) {
	for _, tc := range []struct {
		method, params, build string
	}{
		{"resolve", `{"name":"foundation","no_sync":true}`, ""},
		{"status", "", ""},
		{"resolve", `{"name":"x"}`, query.ReadBuild().Key()},
		{"odd\"method\\", `[1,2]`, "a\"b\\c\x01\n<>&é\u2028\xff"},
	} {
		checkEncodeRequest(t, tc.method, []byte(tc.params), tc.build)
	}
}

// FuzzEncodeRequest holds the request line to json.Marshal on any method
// and build.
func FuzzEncodeRequest(f *testing.F) {
	f.Add("resolve", "7:(devel)0:8:go1.26.8")
	f.Add("a\"b", "\xff<\u2028")
	f.Fuzz(func(t *testing.T, method, build string) {
		checkEncodeRequest(t, method, []byte(`{"a":1}`), build)
	})
}
