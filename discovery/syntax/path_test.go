package syntax_test

import (
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/discovery/syntax"
)

func TestWithin(t *testing.T) {
	sep := string(filepath.Separator)
	for _, tc := range []struct {
		p, dir string
		want   bool
	}{
		{sep + "a" + sep + "b", sep + "a", true},
		{sep + "a", sep + "a", true},
		{sep + "ab", sep + "a", false},
		{sep + "a", sep + "a" + sep + "b", false},
		{sep + "a" + sep + "b", sep, true},
		{"", sep + "a", false},
	} {
		if got := syntax.Within(tc.p, tc.dir); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.p, tc.dir, got, tc.want)
		}
	}
}
