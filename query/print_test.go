package query_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/query"
)

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
	query.DiagnosticPrinter{}.Print(&b, []discovery.Diagnostic{{Path: "/p/" + evil, Message: evil, Code: "x/y", Severity: discovery.SeverityError}})
	if strings.ContainsAny(b.String(), "\x1b\a") {
		t.Fatalf("control characters reached the output:\n%q", b.String())
	}
}
