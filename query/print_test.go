package query_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
)

func rng(l1, c1, l2, c2 int) diag.Range {
	return diag.Range{Start: diag.Position{Line: l1, Character: c1}, End: diag.Position{Line: l2, Character: c2}}
}

// TestSnippet renders the line a diagnostic starts on with carets under
// its range, as the text output does on a terminal.
func TestSnippet(t *testing.T) {
	long := strings.Repeat("a", 300) + "TARGET" + strings.Repeat("b", 300)
	tests := []struct {
		name string
		src  string
		r    diag.Range
		want string
	}{
		{"key", "---\nprofile:\n  extnds: typo\n", rng(2, 2, 2, 8),
			"  |\n3 |   extnds: typo\n  |   ^^^^^^\n"},
		{"empty range", "abc\n", rng(0, 1, 0, 1),
			"  |\n1 | abc\n  |  ^\n"},
		{"past the end", "abc\n", rng(0, 3, 0, 3),
			"  |\n1 | abc\n  |    ^\n"},
		{"to the next line", "key: |\n  text\n", rng(0, 5, 1, 2),
			"  |\n1 | key: |\n  |      ^\n"},
		{"tab", "\tx: 1\n", rng(0, 1, 0, 2),
			"  |\n1 |     x: 1\n  |     ^\n"},
		{"astral before", "😀 x\n", rng(0, 3, 0, 4),
			"  |\n1 | 😀 x\n  |   ^\n"},
		{"control characters escaped", "a\x1bb c\n", rng(0, 4, 0, 5),
			"  |\n1 | a\\x1bb c\n  |        ^\n"},
		{"ten lines", strings.Repeat("\n", 9) + "x\n", rng(9, 0, 9, 1),
			"   |\n10 | x\n   | ^\n"},
		{"line out of range", "x\n", rng(5, 0, 5, 1), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := query.Snippet(syntax.NewLineIndex([]byte(tc.src)), tc.r, false)
			if got != tc.want {
				t.Errorf("Snippet =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	t.Run("long line", func(t *testing.T) {
		got := query.Snippet(syntax.NewLineIndex([]byte(long)), rng(0, 300, 0, 306), false)
		lines := strings.Split(got, "\n")
		if len(lines) != 4 {
			t.Fatalf("Snippet = %q", got)
		}
		code, marks := lines[1], lines[2]
		if !strings.HasPrefix(code, "1 | …") || !strings.HasSuffix(code, "…") || len([]rune(code)) > 130 {
			t.Errorf("code line %q: want a window cut on both sides", code)
		}
		at := len([]rune(code[:max(strings.Index(code, "TARGET"), 0)]))
		if !strings.Contains(code, "TARGET") || strings.Index(marks, "^^^^^^") != at || strings.Count(marks, "^") != 6 {
			t.Errorf("carets %q do not sit under TARGET in %q", marks, code)
		}
	})
}

// TestPrinterSource shows the source only when the printer has one.
func TestPrinterSource(t *testing.T) {
	d := diag.Diagnostic{Code: diag.CodeUnknownKey, Severity: diag.SeverityError, Path: "/x/a.md",
		Range: rng(1, 0, 1, 3), Message: "unknown key `foo`"}
	var plain, shown bytes.Buffer
	query.DiagnosticPrinter{}.Print(&plain, []diag.Diagnostic{d})
	query.DiagnosticPrinter{Source: func(string) []byte { return []byte("---\nfoo: 1\n---\n") }}.Print(&shown, []diag.Diagnostic{d})
	if strings.Contains(plain.String(), "|") {
		t.Errorf("without a source: %q", plain.String())
	}
	if !strings.Contains(shown.String(), "2 | foo: 1\n  | ^^^\n") {
		t.Errorf("with a source: %q", shown.String())
	}
}

func TestClean(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text, é and 😀", "plain text, é and 😀"},
		{"bell\a and escape \x1b[31mred", `bell\x07 and escape \x1b[31mred`},
		{"line\nbreak\ttab\rreturn", `line\nbreak\ttab\rreturn`},
		{"del \x7f and c1 \u0085", `del \x7f and c1 \x85`},
		{"bidi \u202eevil", `bidi \u202eevil`},
		{"bad \xff utf-8", `bad \xff utf-8`},
	}
	for _, tc := range cases {
		if got := query.Clean(tc.in); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPrintersEscapeControlCharacters: text that comes from collections
// never reaches a terminal raw.
func TestPrintersEscapeControlCharacters(t *testing.T) {
	evil := "x\x1b]0;owned\a\x1b[2J"
	var b bytes.Buffer
	err := query.MethodCollections.Print(&b, []query.CollectionInfo{{Name: evil, Description: evil, Dir: "/d/" + evil}}, query.PrintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = query.MethodProfiles.Print(&b, []query.ResourceInfo{{Ref: evil, Path: evil, Description: evil}}, query.PrintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	query.DiagnosticPrinter{}.Print(&b, []diag.Diagnostic{{Path: "/p/" + evil, Message: evil, Code: "x/y", Severity: diag.SeverityError}})
	if strings.ContainsAny(b.String(), "\x1b\a") {
		t.Fatalf("control characters reached the output:\n%q", b.String())
	}
}

// TestPrintStatus: status counts in words that agree with their number,
// and shows the projects being registered and the idle deadline.
func TestPrintStatus(t *testing.T) {
	st := &query.Status{PID: 7, Mode: query.ModeAutostart, IdleExit: "30m0s", Connections: 3,
		Roots: []query.RootStatus{
			{Path: "/u", Kind: discovery.RootUser, State: "watching", Collections: 1, Watches: 1},
			{Path: "/b", Kind: discovery.RootBundled, State: "watching", Collections: 2, Watches: 4},
		},
		Registering: []query.RegistrationProgress{{Dir: "/p", Phase: "reading collections", Files: 1, Collections: 0, Elapsed: "1.2s"}},
	}
	var b bytes.Buffer
	if err := query.MethodStatus.Print(&b, st, query.PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"root         user     watching  /u  1 collection   1 watch\n",
		"root         bundled  watching  /b  2 collections  4 watches\n",
		"registering  /p  reading collections: 1 file, 0 collections, 1.2s\n",
		"idle exit    30m0s after its last client leaves (3 connections open)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}
