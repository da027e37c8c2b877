package query_test

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"testing/quick"

	"github.com/amplidex/amplidex/query"
)

// randomValues are n values of T with every field set at random, nested
// structs, pointers and slices too: a field the hand-written codecs miss
// differs from encoding/json's in almost every one of them.
func randomValues[T any](t *testing.T, seed int64, n int) []T {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	out := make([]T, n)
	for i := range out {
		v, ok := quick.Value(reflect.TypeFor[T](), r)
		if !ok {
			t.Fatalf("no random value of %s", reflect.TypeFor[T]())
		}
		out[i] = v.Interface().(T)
	}
	return out
}

func TestParamsWrittenAsJSONWrites(t *testing.T) {
	check := func(p any) {
		t.Helper()
		got, err := query.EncodeParams(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("params %#v:\n got %s\nwant %s", p, got, want)
		}
	}
	for _, p := range randomValues[query.NameParams](t, 1, 200) {
		check(p)
	}
	for _, p := range randomValues[query.RefParams](t, 2, 200) {
		check(p)
	}
	for _, p := range randomValues[query.ListParams](t, 3, 200) {
		check(p)
	}
	// The empty cases the random values rarely hit.
	for _, c := range []query.Common{
		{},
		{NoSync: true},
		{Roots: &query.Roots{}},
		{Roots: &query.Roots{Home: "/h"}},
		{Roots: &query.Roots{Bundled: []string{}}},
		{Roots: &query.Roots{Bundled: []string{"/b", "<&>\u2028\xff"}}},
		{Project: "/p", Roots: &query.Roots{Home: "\"", Bundled: []string{"/b"}}},
		{Roots: &query.Roots{Collection: "/c"}},
		{Project: "/p", Roots: &query.Roots{Home: "/h", Bundled: []string{"/b"}, Collection: "/src/<spec-kit>"}},
	} {
		check(query.ListParams{Common: c})
		check(query.NameParams{Common: c, Name: "n"})
		check(query.RefParams{Common: c, Ref: "c:a"})
	}
}

// answerLine is the daemon's answer line carrying result.
func answerLine(t *testing.T, result any) []byte {
	t.Helper()
	line, err := json.Marshal(map[string]any{"id": 1, "clock": "c:1:2:3", "result": result})
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// checkDecodesAsJSON decodes line into a fresh R with the client and with
// encoding/json, and fails unless both agree.
func checkDecodesAsJSON[R any](t *testing.T, line []byte) {
	t.Helper()
	var got, want R
	if !query.DecodedWithoutReflection(&got) {
		t.Fatalf("%T is decoded with reflection", &got)
	}
	clock, err := query.DecodeResponse(line, "m", &got)
	if err != nil {
		t.Fatalf("decode %s: %v", line, err)
	}
	var resp struct {
		Result *R          `json:"result"`
		Clock  query.Clock `json:"clock"`
	}
	resp.Result = &want
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decode %s:\n got %#v\nwant %#v", line, got, want)
	}
	if clock != resp.Clock {
		t.Fatalf("clock %v, want %v", clock, resp.Clock)
	}
}

func TestAnswersDecodedAsJSONDecodes(t *testing.T) {
	for _, r := range randomValues[query.ResolveResult](t, 4, 100) {
		checkDecodesAsJSON[*query.ResolveResult](t, answerLine(t, r))
	}
	for _, r := range randomValues[[]query.CollectionInfo](t, 5, 100) {
		checkDecodesAsJSON[[]query.CollectionInfo](t, answerLine(t, r))
	}
	for _, line := range []string{
		`{"id":1,"result":null}`,
		`{"id":1,"result":{"name":"a","winner":null,"shadowed":null,"skipped":[]}}`,
		`{"id":1,"result":{"name":"a","winner":{"counts":null,"requires":[]}}}`,
		`{"id":1,"result":{"name":"a","unknown":[1,{"x":2}]}}`,
		`{"id":1,"result":{"winner":{"requires":[{"name":"b","range":{"start":{"line":-3}}}]}}}  `,
	} {
		checkDecodesAsJSON[*query.ResolveResult](t, []byte(line))
	}
	checkDecodesAsJSON[[]query.CollectionInfo](t, []byte(`{"id":1,"result":[]}`))
	checkDecodesAsJSON[[]query.CollectionInfo](t, []byte(`{"id":1,"result":null}`))
}

func TestAnswerErrorsWithoutReflection(t *testing.T) {
	var r *query.ResolveResult
	clock, err := query.DecodeResponse([]byte(`{"id":1,"clock":"c:1:2:3","error":{"code":"not-found","message":"no x"}}`), "resolve", &r)
	qe, ok := err.(*query.Error)
	if !ok || qe.Code != query.CodeNotFound || qe.Message != "no x" {
		t.Fatalf("error answer: %v (%T)", err, err)
	}
	if clock.String() != "c:1:2:3" {
		t.Fatalf("clock of an error answer: %v", clock)
	}
	for _, tc := range []struct{ line, want string }{
		{`{"id":1,"result":{"winner":{"counts":{"agents":"3"}}}}`, "result.winner.counts.agents: want an integer, got a string"},
		{`{"id":1,"result":{"winner":{"counts":{"agents":1.5}}}}`, "result.winner.counts.agents: 1.5 is not an int"},
		{`{"id":1,"result":{"skipped":[{},{"valid":"yes"}]}}`, "result.skipped[1].valid: want a boolean, got a string"},
		{`{"id":1,"result":{"shadowed":{}}}`, "result.shadowed: want an array, got an object"},
		{`{"id":1,"result":[]}`, "result: want an object, got an array"},
		{`{"id":1,"clock":7,"result":{}}`, "clock: want a string, got a number"},
		{`{"id":1,"error":"bad"}`, "error: want an object, got a string"},
		{`[1]`, "response: want an object, got an array"},
		{`{"id":1,"result":{}} x`, "invalid character after top-level value"},
		{`{"id":1,"result":{`, "unexpected EOF"},
	} {
		var r *query.ResolveResult
		_, err := query.DecodeResponse([]byte(tc.line), "resolve", &r)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "call resolve: decode result: ") {
			t.Errorf("%s: error %v, want one saying %q", tc.line, err, tc.want)
		}
	}
}

// FuzzAnswerWithoutReflection holds the hand-written decoding of answers
// to encoding/json's on any answer the client can take: it never panics,
// and what it decodes, encoded again, it decodes as encoding/json does.
func FuzzAnswerWithoutReflection(f *testing.F) {
	f.Add([]byte(`{"id":1,"clock":"c:1:2:3","result":{"name":"a","found":true,"winner":{"name":"a","counts":{"agents":2},"requires":[{"name":"b","range":{"end":{"line":1}}}]},"shadowed":[],"skipped":null}}`))
	f.Add([]byte(`{"id":1,"error":{"code":"not-found","message":"m"}}`))
	f.Add([]byte(`{"result":[{"name":"a"},{"counts":{"modules":1e3}}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var r *query.ResolveResult
		if _, err := query.DecodeResponse(line, "resolve", &r); err == nil {
			checkDecodesAsJSON[*query.ResolveResult](t, answerLine(t, r))
		}
		var cs []query.CollectionInfo
		if _, err := query.DecodeResponse(line, "collections", &cs); err == nil {
			checkDecodesAsJSON[[]query.CollectionInfo](t, answerLine(t, cs))
		}
	})
}
