package syntax_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// TestCheckTOMLShape: arrays and inline tables nested more than 32 deep,
// and keys of more than 32 dotted parts, are refused where the bound is
// passed; brackets and dots in strings and comments count for nothing.
func TestCheckTOMLShape(t *testing.T) {
	deep := func(open, close string, n int) string { return strings.Repeat(open, n) + strings.Repeat(close, n) }
	dotted := func(n int) string { return strings.Repeat("a.", n-1) + "a" }
	tests := []struct {
		name string
		src  string
		// line and char are where the error is (1-based); 0: no error.
		line, char int
		why        string
	}{
		{"flat", "[check]\nignore = [\"ref/\"]\n", 0, 0, ""},
		{"arrays 32 deep", "a = " + deep("[", "]", 32) + "\n", 0, 0, ""},
		{"arrays 33 deep", "[check]\nignore = " + deep("[", "]", 33) + "\n", 2, 42, "arrays and inline tables nest more than 32 deep"},
		{"arrays 200000 deep", "a = " + deep("[", "]", 200000), 1, 37, "nest more than 32 deep"},
		{"inline tables 33 deep", "a = " + strings.Repeat("{a=", 33) + "1" + strings.Repeat("}", 33), 1, 101, "nest more than 32 deep"},
		{"mixed", "a = " + strings.Repeat("[{b=", 17) + "1" + strings.Repeat("}]", 17), 1, 69, "nest more than 32 deep"},
		{"unclosed", "a = " + strings.Repeat("[", 40), 1, 37, "nest more than 32 deep"},
		{"header of 32 parts", "[" + dotted(32) + "]\n", 0, 0, ""},
		{"header of 33 parts", "x = 1\n[" + dotted(33) + "]\n", 2, 2, "a key or table name has more than 32 dotted parts"},
		{"key of 33 parts with blanks", strings.Repeat(`"q" . `, 32) + "b = 1", 1, 1, "more than 32 dotted parts"},
		{"values hold one dot each", "a = [" + strings.Repeat("1.5, ", 100) + "]\nv = 1979-05-27T07:32:00.999Z\n", 0, 0, ""},
		{"brackets in strings", "a = \"" + deep("[", "]", 40) + "\"\nb = '" + deep("{", "}", 40) + "'\n", 0, 0, ""},
		{"brackets in an escaped string", `a = "\"` + deep("[", "]", 40) + `"`, 0, 0, ""},
		{"brackets in multi-line strings", "a = \"\"\"\n" + deep("[", "]", 40) + "\n\"\"\"\nb = '''\n" + deep("[", "]", 40) + "''''\n", 0, 0, ""},
		{"brackets in a comment", "# " + deep("[", "]", 40) + "\na = 1\n", 0, 0, ""},
		{"dots in strings", "a = \"" + dotted(40) + "\"\n", 0, 0, ""},
		{"a line end cuts a string short", "a = \"x\n" + deep("[", "]", 33), 2, 33, "nest more than 32 deep"},
		{"an escaped line end cuts a string short", "a = \"x\\\n" + deep("[", "]", 33), 2, 33, "nest more than 32 deep"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := syntax.CheckTOMLShape([]byte(tc.src))
			if tc.line == 0 {
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				return
			}
			var se *syntax.TOMLShapeError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a *TOMLShapeError", err)
			}
			if got := se.Range.Start; got.Line+1 != tc.line || got.Character+1 != tc.char {
				t.Errorf("at %d:%d, want %d:%d", got.Line+1, got.Character+1, tc.line, tc.char)
			}
			if !strings.Contains(se.Why, tc.why) || !strings.Contains(err.Error(), "TOML not read: "+se.Why) {
				t.Errorf("error %q, want %q", err, tc.why)
			}
			var v map[string]any
			if _, derr := syntax.DecodeTOML([]byte(tc.src), &v); !errors.As(derr, &se) {
				t.Errorf("DecodeTOML: %v, want the shape error", derr)
			}
		})
	}
}

// arrayDepth is how deeply arrays nest in a decoded TOML value.
func arrayDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			d = max(d, arrayDepth(e))
		}
		return d + 1
	case []map[string]any:
		for _, e := range v {
			d = max(d, arrayDepth(e))
		}
	case map[string]any:
		for _, e := range v {
			d = max(d, arrayDepth(e))
		}
	}
	return d
}

// checkTOMLShape holds CheckTOMLShape to the position scanner and to the
// decoder: what the scanner finds too deep is refused (on any text); a
// text the decoder reads and the scanner finds within bounds is accepted;
// a text accepted decodes to arrays no deeper than the bound.
func checkTOMLShape(t *testing.T, src string) {
	err := syntax.CheckTOMLShape([]byte(src))
	if err != nil {
		var se *syntax.TOMLShapeError
		if !errors.As(err, &se) {
			t.Fatalf("CheckTOMLShape(%q): %v, not a *TOMLShapeError", src, err)
		}
	}
	_, deep := syntax.ScanTOMLSpans([]byte(src))
	scanDeep := deep != nil
	if scanDeep && err == nil {
		t.Fatalf("CheckTOMLShape accepts %q, which the scanner finds beyond its bounds", src)
	}
	if err != nil {
		return
	}
	var doc map[string]any
	if _, derr := syntax.DecodeTOML([]byte(src), &doc); derr != nil {
		return
	}
	if d := arrayDepth(doc); d > 32 {
		t.Fatalf("CheckTOMLShape accepts %q, whose arrays nest %d deep", src, d)
	}
	if scanDeep {
		t.Fatalf("the decoder reads %q, which the scanner finds beyond its bounds", src)
	}
}

// FuzzCheckTOMLShape holds CheckTOMLShape to the scanner and the decoder
// on any text (see checkTOMLShape).
func FuzzCheckTOMLShape(f *testing.F) {
	rng := rand.New(rand.NewPCG(33, 2))
	for range 40 {
		f.Add(randomTOML(rng))
	}
	for _, s := range []string{
		"a = " + strings.Repeat("[", 33) + strings.Repeat("]", 33),
		"a = " + strings.Repeat("[", 32) + strings.Repeat("]", 32),
		"a = {" + strings.Repeat("b.", 33) + "c = 1}",
		"[" + strings.Repeat("a.", 32) + "a]",
		"a = \"\"\"[[[\\\"\"\"\"\n",
		"a = '''x''''' # [[\n",
		"a = [\n# ]]\n[[1]]]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkTOMLShape(t, src)
	})
}
