package analysis_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
)

// TestBundleReferences: find references on a behavior lists the includes
// of it, on an agent the agents.include names of it, over the buffers;
// on an include or an agent name, those of the file it resolves to.
func TestBundleReferences(t *testing.T) {
	w, repo := bundleWorkspace(t)
	ctx := context.Background()
	p := func(rel string) string { return filepath.Join(repo, rel) }
	extraFixed := "bundle:\n  name: extra\n  version: 1.0.0\n  description: More\nincludes:\n  - bundle: demo:behaviors/review\nagents:\n  include:\n    - demo:reviewer\n"
	for _, tc := range []struct {
		name    string
		file    string
		marker  string // the cursor is at its start ("": the file's start)
		overlay map[string]string
		decl    bool
		want    []string // "rel:line:char"
	}{
		{name: "a behavior", file: "behaviors/review.yaml",
			want: []string{"bundle.md:6:12"}},
		{name: "a behavior, with its declaration", file: "behaviors/review.yaml", decl: true,
			want: []string{"behaviors/review.yaml:0:0", "bundle.md:6:12"}},
		{name: "a behavior included by a buffer", file: "behaviors/review.yaml",
			overlay: map[string]string{"behaviors/extra.yaml": extraFixed},
			want:    []string{"behaviors/extra.yaml:5:12", "bundle.md:6:12"}},
		{name: "an agent", file: "agents/reviewer.md",
			want: []string{"behaviors/review.yaml:6:6", "bundle.md:10:6"}},
		{name: "an include", file: "bundle.md", marker: "demo:behaviors/review",
			want: []string{"bundle.md:6:12"}},
		{name: "an agent name", file: "behaviors/review.yaml", marker: "demo:reviewer",
			want: []string{"behaviors/review.yaml:6:6", "bundle.md:10:6"}},
		{name: "a behavior no one includes", file: "behaviors/extra.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := p(tc.file)
			text := read(t, path)
			var pos diag.Position
			if tc.marker != "" {
				pos = cursor(t, text, tc.marker)
			}
			overlay := map[string][]byte{}
			for rel, s := range tc.overlay {
				overlay[p(rel)] = []byte(s)
			}
			var got []string
			for _, l := range w.References(ctx, path, []byte(text), overlay, pos, tc.decl) {
				rel, _ := filepath.Rel(repo, l.Path)
				got = append(got, fmt.Sprintf("%s:%d:%d", filepath.ToSlash(rel), l.Range.Start.Line, l.Range.Start.Character))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("references %q, want %q", got, tc.want)
			}
		})
	}
}
