package prepare_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/prepare"
)

// TestBundleFixtures runs the manifests in testdata/bundles. Each archive
// holds a bundle directory (bundle/bundle.md and its agents) and a want
// file listing every diagnostic, one per line: `relpath:line:col code
// severity` (1-based). Manifests that validate are then prepared for real,
// so that module sources that cannot be fetched are reported too.
func TestBundleFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "bundles", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var want []string
			for _, f := range ar.Files {
				if f.Name == "want" {
					for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
						if l = strings.TrimSpace(l); l != "" {
							want = append(want, l)
						}
					}
					continue
				}
				p := filepath.Join(dir, filepath.FromSlash(f.Name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			manifest := filepath.Join(dir, "bundle", "bundle.md")
			src, err := os.ReadFile(manifest)
			if err != nil {
				t.Fatal(err)
			}
			diags := prepare.CheckManifest(manifest, src, schema.Options{})
			if diag.CountErrors(diags) == 0 {
				c, err := prepare.New(prepare.Options{Home: filepath.Join(dir, "home"), Version: "1.0.0"})
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.Ensure(context.Background(), manifest)
				var be *prepare.BuildError
				if errors.As(err, &be) {
					for _, m := range be.Modules {
						diags = append(diags, m.Diagnostic())
					}
				} else if err != nil {
					t.Fatalf("prepare: %v", err)
				}
			}
			var got []string
			for _, d := range diags {
				rel, _ := filepath.Rel(dir, d.Path)
				got = append(got, fmt.Sprintf("%s:%d:%d %s %s", filepath.ToSlash(rel),
					d.Range.Start.Line+1, d.Range.Start.Character+1, d.Code, d.Severity))
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				var msgs strings.Builder
				for _, d := range diags {
					fmt.Fprintf(&msgs, "  %s\n", d)
				}
				t.Errorf("diagnostics:\n%s\nwant:\n%s\nmessages:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), msgs.String())
			}
		})
	}
}
