package discovery_test

import (
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
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
		err := discovery.CheckCodePattern(tc.pattern)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckCodePattern(%q) = %v, want nil", tc.pattern, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckCodePattern(%q) = %v, want an error saying %q", tc.pattern, err, tc.want)
		}
	}
}
