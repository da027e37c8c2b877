package analysis_test

import (
	"testing"

	"github.com/amplidex/amplidex/query/analysis"
)

func TestChecked(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/c/profiles/dev.md", true},
		{"/c/agents/helper.md", true},
		{"/c/bundle.md", true},
		{"/c/pyproject.toml", true},
		{"/p/.amplifier/collections.lock", true},
		{"/c/profiles/README.md", false},
		{"/c/profiles/readme.md", false},
		{"/c/profiles/.#dev.md", false},
		{"/c/agents/helper.txt", false},
		// Any other Markdown or YAML file may be a document of a bundle
		// repository: what is around it decides.
		{"/c/profiles/sub/deep.md", true},
		{"/c/context/notes.md", true},
		{"/r/behaviors/review.yaml", true},
		{"/r/recipes/build.yml", true},
		{"/r/context/README.md", false},
	}
	for _, tc := range tests {
		if got := analysis.Checked(tc.path); got != tc.want {
			t.Errorf("Checked(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
