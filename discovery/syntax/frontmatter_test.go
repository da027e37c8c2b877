package syntax_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/syntax"
)

func TestSplitFrontMatter(t *testing.T) {
	tests := []struct {
		name string
		src  string
		err  error
		open int
		yaml string // src[Start:End]
		body string // src[BodyStart:]
	}{
		{"plain", "---\na: 1\n---\nbody\n", nil, 0, "a: 1\n", "body\n"},
		{"no body", "---\na: 1\n---", nil, 0, "a: 1\n", ""},
		{"empty block", "---\n---\nbody", nil, 0, "", "body"},
		{"CRLF", "---\r\na: 1\r\n---\r\nbody\r\n", nil, 0, "a: 1\r\n", "body\r\n"},
		{"BOM", "\xEF\xBB\xBF---\na: 1\n---\n", nil, 3, "a: 1\n", ""},
		{"blank lines first", "\n  \r\n\t\n---\na: 1\n---\n", nil, 7, "a: 1\n", ""},
		{"trailing blanks on delimiters", "--- \t\na: 1\n---   \r\nbody", nil, 0, "a: 1\n", "body"},
		{"dashes inside", "---\na: ----\nb: -- -\n---\n", nil, 0, "a: ----\nb: -- -\n", ""},
		{"second block is body", "---\na: 1\n---\n---\nb: 2\n---\n", nil, 0, "a: 1\n", "---\nb: 2\n---\n"},
		{"four dashes do not close", "---\na: 1\n----\n---\n", nil, 0, "a: 1\n----\n", ""},
		{"heading", "# Title\n---\na: 1\n---\n", syntax.ErrNoFrontMatter, 0, "", ""},
		{"indented delimiter", " ---\na: 1\n---\n", syntax.ErrNoFrontMatter, 0, "", ""},
		{"delimiter with text", "--- a\na: 1\n---\n", syntax.ErrNoFrontMatter, 0, "", ""},
		{"empty", "", syntax.ErrNoFrontMatter, 0, "", ""},
		{"only blanks", "\n\n  \n", syntax.ErrNoFrontMatter, 5, "", ""},
		{"BOM only", "\xEF\xBB\xBF", syntax.ErrNoFrontMatter, 3, "", ""},
		{"unterminated", "\n---\na: 1\n", syntax.ErrUnterminated, 1, "", ""},
		{"opening only", "---", syntax.ErrUnterminated, 0, "", ""},
		{"too large", "---\n" + strings.Repeat("a: b\n", syntax.MaxFrontMatter/5+1) + "---\n", syntax.ErrFrontMatterTooLarge, 0, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm, err := syntax.SplitFrontMatter([]byte(tc.src))
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if fm.Open != tc.open {
				t.Errorf("Open %d, want %d", fm.Open, tc.open)
			}
			if err != nil {
				return
			}
			if got := tc.src[fm.Start:fm.End]; got != tc.yaml {
				t.Errorf("YAML %q, want %q", got, tc.yaml)
			}
			if got := tc.src[fm.BodyStart:]; got != tc.body {
				t.Errorf("body %q, want %q", got, tc.body)
			}
		})
	}
}

// TestSplitFrontMatterAtTheCap checks the edges of MaxFrontMatter: a block
// of exactly the cap is accepted, one byte more is not.
func TestSplitFrontMatterAtTheCap(t *testing.T) {
	block := func(n int) string {
		line := "k: " + strings.Repeat("v", 60) + "\n"
		s := strings.Repeat(line, (n-1)/len(line))
		return s + strings.Repeat("#", n-len(s)-1) + "\n"
	}
	for _, tc := range []struct {
		size int
		err  error
	}{
		{syntax.MaxFrontMatter, nil},
		{syntax.MaxFrontMatter + 1, syntax.ErrFrontMatterTooLarge},
	} {
		src := "---\n" + block(tc.size) + "---\n" + strings.Repeat("body\n", 1000)
		fm, err := syntax.SplitFrontMatter([]byte(src))
		if !errors.Is(err, tc.err) {
			t.Errorf("block of %d bytes: error %v, want %v", tc.size, err, tc.err)
		}
		if err == nil && fm.End-fm.Start != tc.size {
			t.Errorf("block of %d bytes: got %d", tc.size, fm.End-fm.Start)
		}
	}
}

// BenchmarkSplitFrontMatter splits a document with a 50 MB body: the cost
// is that of the front matter alone.
func BenchmarkSplitFrontMatter(b *testing.B) {
	src := []byte("---\nname: big\ndescription: A big agent\n---\n" + strings.Repeat("Lorem ipsum dolor sit amet.\n", 50<<20/28))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := syntax.SplitFrontMatter(src); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzSplitFrontMatter(f *testing.F) {
	f.Add([]byte("---\na: 1\n---\nbody\n"))
	f.Add([]byte("\xEF\xBB\xBF\r\n---  \r\na: 1\r\n---\r\n"))
	f.Add([]byte("# no front matter\n---\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		fm, err := syntax.SplitFrontMatter(src)
		if fm.Open < 0 || fm.Open > len(src) {
			t.Fatalf("Open %d out of %d bytes", fm.Open, len(src))
		}
		if err != nil {
			if !errors.Is(err, syntax.ErrNoFrontMatter) && !errors.Is(err, syntax.ErrUnterminated) &&
				!errors.Is(err, syntax.ErrFrontMatterTooLarge) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if !(fm.Open < fm.Start && fm.Start <= fm.End && fm.End < fm.BodyStart && fm.BodyStart <= len(src)) {
			t.Fatalf("offsets out of order: %+v in %d bytes", fm, len(src))
		}
		if fm.End-fm.Start > syntax.MaxFrontMatter {
			t.Fatalf("block of %d bytes accepted", fm.End-fm.Start)
		}
		for _, delim := range []string{string(src[fm.Open:fm.Start]), string(src[fm.End:fm.BodyStart])} {
			if strings.TrimRight(delim, " \t\r\f\v\n") != "---" {
				t.Fatalf("delimiter line %q", delim)
			}
		}
		if strings.Contains(string(src[fm.Start:fm.End]), "\n---\n") || strings.HasPrefix(string(src[fm.Start:fm.End]), "---\n") {
			t.Fatalf("YAML text %q holds a delimiter line", src[fm.Start:fm.End])
		}
		if strings.TrimLeft(string(src[:fm.Open]), "\xEF\xBB\xBF \t\r\n\f\v") != "" && !strings.HasPrefix(string(src), "\xEF\xBB\xBF") {
			t.Fatalf("non-blank text %q before the opening line", src[:fm.Open])
		}
	})
}
