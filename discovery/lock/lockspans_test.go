package lock_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery/lock"
)

// refLockJSONSpans records the spans of a JSON text with the tokens of
// encoding/json, the simple way: every member at every depth, each path
// built afresh. Spans deeper than the scanner records are left out.
func refLockJSONSpans(src []byte) map[string][4]int {
	type frame struct {
		parts   []string
		object  bool
		wantKey bool
		key     string
		ks, ke  int
		index   int
		start   int
		ownKey  [2]int
	}
	path := func(parts []string) string { return "$" + strings.Join(append([]string{""}, parts...), "\x00") }
	spans := map[string][4]int{}
	record := func(parts []string, s [4]int) {
		if len(parts) <= lock.MaxSpanDepth {
			spans[path(parts)] = s
		}
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var stack []*frame
	for {
		start := int(dec.InputOffset())
		for start < len(src) && strings.IndexByte(" \t\r\n,:", src[start]) >= 0 {
			start++
		}
		tok, err := dec.Token()
		if err != nil {
			return spans
		}
		end := int(dec.InputOffset())
		var parts []string
		var ks, ke int
		if n := len(stack); n > 0 {
			f := stack[n-1]
			if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
				stack = stack[:n-1]
				record(f.parts, [4]int{f.ownKey[0], f.ownKey[1], f.start, end})
				continue
			}
			if f.object && f.wantKey {
				f.key, f.ks, f.ke, f.wantKey = tok.(string), start, end, false
				continue
			}
			parts = append([]string(nil), f.parts...)
			if f.object {
				f.wantKey = true
				parts, ks, ke = append(parts, f.key), f.ks, f.ke
			} else {
				parts = append(parts, strconv.Itoa(f.index))
				f.index++
			}
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{parts: parts, object: d == '{', wantKey: d == '{', start: start, ownKey: [2]int{ks, ke}})
			continue
		}
		record(parts, [4]int{ks, ke, start, end})
	}
}

// lockSpanInputs returns the lock files of the fixtures.
func lockSpanInputs(t testing.TB) [][]byte {
	files, err := filepath.Glob(filepath.Join("testdata", "lock", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var out [][]byte
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name == "collections.lock" {
				out = append(out, f.Data)
			}
		}
	}
	return out
}

// randomJSON writes a random JSON value nested up to depth levels, with
// keys that need escapes or hold invalid UTF-8, and blanks everywhere.
func randomJSON(r *rand.Rand, b *bytes.Buffer, depth int) {
	blank := func() {
		b.WriteString([]string{"", "", " ", "\n  ", "\r\n\t"}[r.IntN(5)])
	}
	keys := []string{`"name"`, `"path"`, `"modules"`, `"a\"b"`, `"\u00e9\ud83d\ude00"`, "\"\xff\"", `"é😀"`, `""`, `"collections"`}
	switch k := r.IntN(8); {
	case depth > 0 && k < 3:
		b.WriteByte('{')
		n := r.IntN(4)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			blank()
			b.WriteString(keys[r.IntN(len(keys))])
			blank()
			b.WriteByte(':')
			blank()
			randomJSON(r, b, depth-1)
			blank()
		}
		b.WriteByte('}')
	case depth > 0 && k < 5:
		b.WriteByte('[')
		n := r.IntN(4)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			blank()
			randomJSON(r, b, depth-1)
			blank()
		}
		b.WriteByte(']')
	default:
		b.WriteString([]string{`"x"`, `"a\\b\"}]"`, `-1.5e3`, `0`, `true`, `false`, `null`, `"é😀"`, `"{["`}[r.IntN(9)])
	}
}

// TestLockJSONSpansMatchReference compares the span scanner with the
// token-based reference on the fixtures and on random JSON.
func TestLockJSONSpansMatchReference(t *testing.T) {
	inputs := lockSpanInputs(t)
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 500; i++ {
		var b bytes.Buffer
		b.WriteString([]string{"", " ", "\n"}[i%3])
		b.WriteByte('{')
		b.WriteString(`"collections":`)
		randomJSON(r, &b, 8)
		b.WriteString(`,"x":`)
		randomJSON(r, &b, 8)
		b.WriteString("}\n")
		inputs = append(inputs, b.Bytes())
	}
	compared := 0
	for _, src := range inputs {
		if !json.Valid(src) {
			continue
		}
		compared++
		got, want := lock.JSONSpans(src), refLockJSONSpans(src)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("spans of %q:\n%v\nwant:\n%v", src, got, want)
		}
	}
	if compared < len(inputs)*9/10 {
		t.Errorf("only %d of %d inputs were valid JSON", compared, len(inputs))
	}
}

// TestLockDeepNesting: a small lock file nested thousands deep in a key
// the lock does not use is parsed without building a path per level.
func TestLockDeepNesting(t *testing.T) {
	const depth = 9000 // encoding/json refuses more than 10,000
	src := `{"version":"1.1","collections":{},"x":` + strings.Repeat(`[{"k":`, depth/2) + "1" + strings.Repeat("}]", depth/2) + "}"
	allocs := testing.AllocsPerRun(1, func() {
		if _, _, err := lock.Parse("collections.lock", []byte(src)); err != nil {
			t.Fatal(err)
		}
	})
	// json.Unmarshal itself allocates per level; the spans must not add
	// a path per level on top of that, let alone one per level per level.
	if spans := lock.JSONSpans([]byte(src)); len(spans) > 10 {
		t.Errorf("%d spans recorded for a lock of three keys", len(spans))
	}
	if allocs > 20*depth {
		t.Errorf("%v allocations for %d levels", allocs, depth)
	}
}

func FuzzLockJSONSpans(f *testing.F) {
	for _, src := range lockSpanInputs(f) {
		f.Add(src)
	}
	f.Add([]byte(`{"a":[1,{"b":[[[[[[[{"c":"\"}"}]]]]]]]}],"d":{}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		got := lock.JSONSpans(src) // must not panic or hang on anything
		for k, s := range got {
			if s[0] > s[1] || s[2] > s[3] || s[1] > len(src) || s[3] > len(src) {
				t.Fatalf("span %q %v outside the text of %d bytes", k, s, len(src))
			}
		}
		if !json.Valid(src) || !bytes.HasPrefix(bytes.TrimLeft(src, " \t\r\n"), []byte("{")) {
			return
		}
		if want := refLockJSONSpans(src); !reflect.DeepEqual(got, want) {
			t.Fatalf("spans of %q:\n%v\nwant:\n%v", src, got, want)
		}
	})
}
