package suppress_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/suppress"
)

func TestCheckCodePattern(t *testing.T) {
	tests := []struct {
		pattern string
		want    string // "" when the pattern selects a code, else a part of the error
	}{
		{"deps/not-installed", ""},
		{"deps/", ""},
		{"deps", ""},
		{"schema/unknwn-key", `did you mean "schema/unknown-key"?`},
		// A code that was renamed names its successor.
		{"deps/missing", `(it was renamed); did you mean "deps/not-installed"?`},
		{"nothing/like-it", "is not a diagnostic code or area"},
	}
	for _, tc := range tests {
		err := diag.CheckCodePattern(tc.pattern)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckCodePattern(%q) = %v, want nil", tc.pattern, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckCodePattern(%q) = %v, want an error saying %q", tc.pattern, err, tc.want)
		}
	}
}

// FuzzHasSuppressMarker holds the search for a suppression comment's
// marker to bytes.Contains.
func FuzzHasSuppressMarker(f *testing.F) {
	for _, s := range []string{"", "x", "x:", "amplidex:", "amplidex", "# amplidex: ignore[x]", "ampli dex:", "xx amplidex: x",
		"amplidexamplidex:", "amplidex:x", "mplidex:", "pamplidex:", "amplidex;", "\x00amplidex:\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if got, want := suppress.HasSuppressMarker(src), bytes.Contains(src, []byte("amplidex:")); got != want {
			t.Errorf("HasSuppressMarker(%q) = %v, want %v", src, got, want)
		}
	})
}
